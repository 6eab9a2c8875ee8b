"""harness: read, patch and run ML pipelines on a remote GPU box."""

__version__ = "0.1.0"
