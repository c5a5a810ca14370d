"""``kb mcp``: the notes as a Model Context Protocol server (the official SDK's
``MCPServer``), a thin face over ``KnowledgeBase`` like the CLI and the app.

``kb.mcp.server`` builds the server with the tools of ``kb.mcp.tools``' table (one
module per group: read, links, writes) and the note resources of ``kb.mcp.resources``;
``kb.mcp.answers`` turns the facade's answers into tool results (text a model reads,
plus structured content) and its errors into one-line tool errors. Nothing here
writes to stdout: the protocol owns it.
"""
