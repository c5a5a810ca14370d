"""The ``kb`` command: thin click commands over the KnowledgeBase facade.

This package holds the group; each command lives in the module of its area (search,
ingest, notes, links, writing, tools, mcp) and is imported only when it runs
(``LAZY_COMMANDS``), so ``kb search`` loads the group and kb/cli/search.py alone. What
every command prints and how it fails is kb/cli/output.py.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Any

import click

from kb import __version__
from kb.cli.output import EXIT_INTERRUPTED, Stopped, fail, open_kb
from kb.errors import KbError, os_error_message

# Each command, as module:function, imported only when
# one of them runs (or is listed).
LAZY_COMMANDS = {
    "open": "kb.cli.tools:open_command",
    "init": "kb.cli.ingest:init",
    "ingest": "kb.cli.ingest:ingest",
    "search": "kb.cli.search:search",
    "show": "kb.cli.notes:show",
    "list": "kb.cli.notes:list_command",
    "recent": "kb.cli.notes:recent",
    "tags": "kb.cli.notes:tags",
    "stats": "kb.cli.notes:stats",
    "info": "kb.cli.notes:info",
    "links": "kb.cli.links:links",
    "check": "kb.cli.links:check",
    "graph": "kb.cli.links:graph",
    "new": "kb.cli.writing:new",
    "edit": "kb.cli.writing:edit",
    "mv": "kb.cli.writing:mv",
    "sql": "kb.cli.tools:sql",
    "completion": "kb.cli.tools:completion",
    "help": "kb.cli.tools:help_command",
    "mcp": "kb.cli.mcp:mcp",
    "lsp": "kb.cli.lsp:lsp",
}


class KbGroup(click.Group):
    """Turns domain errors and Ctrl-C into documented exit codes, never a traceback, and
    loads the commands of ``LAZY_COMMANDS`` when they are asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, _, name = LAZY_COMMANDS[cmd_name].rpartition(":")  # "module:name"
            found = importlib.import_module(module or "kb.cli.notes")
            self.add_command(getattr(found, name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KbError as exc:
            fail(ctx, str(exc), exc.exit_code)
        except BrokenPipeError:
            raise  # click ends quietly when the reader of a pipe goes away
        except OSError as exc:
            fail(ctx, os_error_message(exc), 1)
        except Stopped as exc:
            click.echo(
                f"kb: stopped by {exc.name}; nothing was changed by the unfinished step",
                err=True,
            )
            ctx.exit(128 + exc.signum)
        except KeyboardInterrupt:
            click.echo("kb: interrupted; nothing was changed by the unfinished step", err=True)
            ctx.exit(EXIT_INTERRUPTED)


@click.group(cls=KbGroup, invoke_without_command=True)
@click.option(
    "--kb",
    "kb_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Knowledge base folder (default: KB_HOME, then the nearest folder with "
    "kb.yaml or index/, then ./notes, then the default in your user config).",
)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour in the output (auto: on a terminal, unless NO_COLOR is set).",
)
@click.version_option(__version__, prog_name="kb")
@click.pass_context
def cli(ctx: click.Context, kb_dir: Path | None, color: str) -> None:
    """kb: a searchable knowledge base for your Markdown notes.

    Run without a command to open the terminal UI.
    """
    ctx.ensure_object(dict)
    ctx.obj["kb_dir"] = kb_dir
    ctx.obj["color"] = color
    if color != "auto":
        ctx.color = color == "always"  # click.echo keeps or strips styles by this
    if ctx.invoked_subcommand is None:
        kb = open_kb(ctx)
        if not sys.stdin.isatty() or not sys.stdout.isatty():
            raise click.UsageError("the terminal UI needs a terminal; see 'kb --help'")
        from kb.tui.app import run  # deferred: loads linkify_it, markdown_it, platformdirs, rich …

        run(kb)


def main() -> None:

    if "_KB_COMPLETE" in os.environ:  # the shell asks for completions: kb's own shells
        from kb.cli.shell_completion import register_shells  # deferred: loads click

        register_shells()
    cli(prog_name="kb")
