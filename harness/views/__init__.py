"""Rich, Markdown and HTML renderings of the models; no decisions (the CLI renders)."""
