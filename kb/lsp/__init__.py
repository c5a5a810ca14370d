"""kb's editor server (``kb lsp``): a Language Server over stdio on pygls 2.

Only ``kb lsp`` imports this package; pygls and lsprotocol are the optional ``lsp`` extra.
"""
