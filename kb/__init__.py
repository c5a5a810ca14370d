"""kb: a searchable personal knowledge base for Markdown notes."""

__version__ = "0.1.0"
