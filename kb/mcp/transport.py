"""Running the server: stdio (the default) or Streamable HTTP on 127.0.0.1 behind a
bearer token."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.mcp.server import KbServer

log = logging.getLogger("kb.mcp")


def serve_stdio(server: KbServer) -> None:
    """Serve until the client closes stdin; a client that goes away mid-call ends the
    server quietly (one line on stderr at most, never a traceback)."""
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        server.run("stdio")


def serve_http(server: KbServer, port: int, token: str) -> None:
    """Streamable HTTP on 127.0.0.1:``port`` (never another address); a request without
    ``Authorization: Bearer <token>`` gets 401."""
    raise NotImplementedError("Streamable HTTP is not written yet")
