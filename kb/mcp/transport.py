"""Running the server: stdio (the default) or Streamable HTTP on 127.0.0.1 behind a
bearer token."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kb.mcp.server import KbServer

log = logging.getLogger("kb.mcp")
ANSWER_SECONDS = 0.2  # after the last write under way, before a signalled stop


def serve_stdio(server: KbServer) -> None:
    """Serve until the client closes stdin. A client that goes away mid-call (its end of
    stdout closed) ends the server quietly with exit 0; any other failure is one line on
    stderr and exit 1, never a traceback."""
    stop_on_signals(server)
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


def stop_on_signals(server: KbServer) -> None:
    """SIGINT and SIGTERM end the server promptly: at once when no write is under way,
    else as soon as the writes under way have finished and been answered (a write, or a
    move, is never cut off halfway; no new one starts meanwhile). Without this the SDK
    stops answering on Ctrl-C but waits for stdin to close."""
    import signal  # deferred: 1 module more

    def stop(signum: int) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os._exit(128 + signum)  # the SDK's reader thread would wait for stdin: don't

    def asked(signum: int, _frame: object) -> None:
        server.stopping = True
        if not server.writes_under_way:
            stop(signum)

        def writes_done() -> None:  # the answer to the last write goes out first
            asyncio.get_running_loop().call_later(ANSWER_SECONDS, stop, signum)

        server.when_writes_done = writes_done

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, asked)


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


HOST = "127.0.0.1"  # never another address: the notes are the user's alone
MIN_TOKEN_CHARS = 16


def serve_http(server: KbServer, port: int, token: str) -> None:
    """Streamable HTTP on 127.0.0.1:``port`` at ``/mcp``; every request without
    ``Authorization: Bearer <token>`` is answered 401 before the SDK sees it."""
    import uvicorn  # deferred: loads anyio, click, uvicorn, watchfiles

    from kb.errors import UsageError  # deferred: on first use

    if len(token) < MIN_TOKEN_CHARS:
        raise UsageError(f"the token must be at least {MIN_TOKEN_CHARS} characters long")
    app = BearerGate(server.streamable_http_app(host=HOST), token)
    config = uvicorn.Config(
        app, host=HOST, port=port, log_config=None, log_level="warning", access_log=False
    )
    print(f"kb mcp: serving http://{HOST}:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(config).run()


class BearerGate:
    """ASGI middleware: HTTP requests must carry the bearer token (compared in constant
    time); lifespan and other scopes pass through."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            import hmac  # deferred: 4 modules more

            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = b'{"error": "unauthorized: send Authorization: Bearer <token>"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
