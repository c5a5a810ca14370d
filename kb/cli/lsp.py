"""``kb lsp``: the editor server over stdio (the ``lsp`` extra: pygls and lsprotocol)."""

from __future__ import annotations

import sys

import click


@click.command("lsp")
@click.option(
    "--stdio",
    is_flag=True,
    help="Talk over stdin/stdout (the only way; accepted because editors pass it).",
)
@click.pass_context
def lsp(ctx: click.Context, stdio: bool) -> None:
    """Run kb's Language Server for your editor: completion of links and tags, go to
    note, backlinks as references, hover, live kb check, rename. The editor starts it in
    the knowledge base (--kb, else the workspace folder, else the usual search); see
    docs/editors.md. Nothing but the protocol goes to stdout."""
    try:
        from kb.lsp.server import serve  # deferred: loads attrs, cattrs, lsprotocol, pygls
    except ImportError as exc:
        missing = getattr(exc, "name", None) or "pygls"
        click.echo(
            f"kb: kb lsp needs {missing}, which is not installed: "
            "pip install '.[lsp]' in kb's folder",
            err=True,
        )
        sys.exit(1)
    serve(ctx.obj.get("kb_dir"))
