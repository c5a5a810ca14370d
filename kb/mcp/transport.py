"""Running the server: stdio (the default) or Streamable HTTP on 127.0.0.1 behind a
bearer token."""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.mcp.server import KbServer

log = logging.getLogger("kb.mcp")


def serve_stdio(server: KbServer) -> None:
    """Serve until the client closes stdin. A client that goes away mid-call (its end of
    stdout closed) ends the server quietly with exit 0; any other failure is one line on
    stderr and exit 1, never a traceback."""
    try:
        server.run("stdio")
    except BaseException as exc:  # the SDK's task groups wrap what went wrong
        leaves = _leaves(exc)
        if all(isinstance(e, BrokenPipeError | KeyboardInterrupt) for e in leaves):
            _quiet_stdout()
            return
        first = next(e for e in leaves if not isinstance(e, BrokenPipeError | KeyboardInterrupt))
        if isinstance(first, SystemExit):
            raise first from None
        log.error("stopped: %s: %s", type(first).__name__, first)
        _quiet_stdout()
        raise SystemExit(1) from None


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush into a closed pipe
    prints nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def serve_http(server: KbServer, port: int, token: str) -> None:
    """Streamable HTTP on 127.0.0.1:``port`` (never another address); a request without
    ``Authorization: Bearer <token>`` gets 401."""
    raise NotImplementedError("Streamable HTTP is not written yet")
