"""``kb mcp``: the notes as a Model Context Protocol server (the official SDK's
``MCPServer``), a thin face over ``KnowledgeBase`` like the CLI and the app.

``kb.mcp.server`` builds the server and its tools, ``kb.mcp.resources`` the note
resources, ``kb.mcp.answers`` turns the facade's answers into tool results (text a model
reads, plus structured content) and its errors into one-line tool errors. Nothing here
writes to stdout: the protocol owns it.
"""
