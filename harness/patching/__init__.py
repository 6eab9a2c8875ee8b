"""Versioned patches for installed dists: series layout, pure planning, transactional writes."""
