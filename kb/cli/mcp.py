"""``kb mcp``: serve the knowledge base to an assistant over the Model Context Protocol.

Loaded only when ``kb mcp`` runs (``kb.cli.LAZY_COMMANDS``); the SDK is imported only
inside the command, so no other command pays for it.
"""

from __future__ import annotations

import importlib.util

import click

from kb.cli.output import open_kb
from kb.errors import UsageError

INSTALL_HINT = "kb mcp needs the MCP SDK: pip install '.[mcp]' in kb's folder"
TOKEN_VARIABLE = "KB_MCP_TOKEN"


@click.command()
@click.option(
    "--write",
    is_flag=True,
    help="Offer the tools that change notes (new_note, append_to_note, replace_in_note, "
    "move_note). Without it the server only reads.",
)
@click.option(
    "--http",
    "http_port",
    type=click.IntRange(1, 65535),
    default=None,
    metavar="PORT",
    help="Serve Streamable HTTP on 127.0.0.1:PORT instead of stdio (needs a token).",
)
@click.option(
    "--token",
    envvar=TOKEN_VARIABLE,
    default=None,
    help=f"The bearer token HTTP clients must send (or set {TOKEN_VARIABLE}).",
)
@click.pass_context
def mcp(ctx: click.Context, write: bool, http_port: int | None, token: str | None) -> None:
    """Serve the notes to an assistant (Claude, VS Code, Cursor ...) as a Model Context
    Protocol server: over stdin/stdout by default, read-only unless --write.

    Tools: search, read_note, links, list_notes, recent, tags, check, stats; resources
    kb://note/{path} and kb://tags. Logs go to stderr; stdout carries only the protocol.
    See docs/assistants.md for each client's configuration.
    """

    if importlib.util.find_spec("mcp") is None:
        click.echo(f"kb: {INSTALL_HINT}", err=True)
        ctx.exit(1)
    if http_port is not None and not token:
        raise UsageError(f"--http needs a bearer token: give --token or set {TOKEN_VARIABLE}")
    kb = open_kb(ctx)
    from kb.mcp.answers import log_to_stderr  # deferred: loads mcp_types, pydantic, pydantic_core

    log_to_stderr()
    from kb.mcp.server import build_server  # deferred: loads anyio, cryptography, httpx2, mcp …

    server = build_server(kb, writable=write)
    if http_port is None:
        from kb.mcp.transport import serve_stdio  # deferred: 8 modules more

        serve_stdio(server)
    else:
        from kb.mcp.transport import serve_http  # deferred: 8 modules more

        assert token is not None
        serve_http(server, http_port, token)
