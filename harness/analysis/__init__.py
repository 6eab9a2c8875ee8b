"""Pure decisions over probe data: binding calls, diffing APIs, building findings. No I/O."""
