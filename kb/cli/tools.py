"""``kb open``, ``kb sql``, ``kb completion`` and ``kb help``."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from kb.cli.output import open_kb
from kb.errors import KbError

if TYPE_CHECKING:
    pass


@click.command("open")
@click.argument("text", nargs=-1, required=True)
@click.pass_context
def open_command(ctx: click.Context, text: tuple[str, ...]) -> None:
    """Open the terminal UI on the note TEXT names: a path, title or alias, a unique fuzzy
    match or pinyin (kb open xcgs). When it names no note, or several, the UI opens on
    the search screen with TEXT typed."""
    kb = open_kb(ctx)
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise click.UsageError("the terminal UI needs a terminal; see 'kb --help'")
    wanted = " ".join(text)
    try:
        note_id: int | None = kb.find_note(wanted).id
    except KbError:  # none or several (or no store yet): let the search screen show them
        note_id = None
    from kb.tui.app import run

    run(kb, note_id=note_id, query="" if note_id is not None else wanted)


@click.command()
@click.argument("query")
@click.option("--json", "fmt", flag_value="json", help="A JSON array of objects.")
@click.option("--jsonl", "fmt", flag_value="jsonl", help="One JSON object a line.")
@click.option("--csv", "fmt", flag_value="csv", help="CSV with a header row.")
@click.option("--tsv", "fmt", flag_value="tsv", help="TSV with a header row.")
@click.option("--table", "fmt", flag_value="table", help="A table (the default on a terminal).")
@click.pass_context
def sql(ctx: click.Context, query: str, fmt: str | None) -> None:
    """Run one read-only SQL QUERY over the store's views: notes, links, backlinks, tags,
    headings (their columns are in docs/sql.md).

    \b
    kb sql "select title, date from notes where tags like '%gpu%' order by date desc"
    kb sql "select tag, notes from tags order by notes desc limit 5" --json

    A table on a terminal, JSON when piped (as sqlite-utils query prints). A statement
    that would write is refused (exit 2).
    """
    result = open_kb(ctx).sql(query)
    fmt = fmt or ("table" if sys.stdout.isatty() else "json")
    from kb.cli.sql_output import write_rows

    write_rows(result.columns, result.rows, fmt, sys.stdout)


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL.

    \b
    bash: eval "$(kb completion bash)"   (in ~/.bashrc)
    zsh:  eval "$(kb completion zsh)"    (in ~/.zshrc)
    fish: kb completion fish > ~/.config/fish/completions/kb.fish

    It completes commands, options, notes (titles and paths) for NOTE, tags after tag:
    and --tag, and series after series: and --series.
    """
    from click.shell_completion import get_completion_class

    complete = get_completion_class(shell)
    assert complete is not None  # click knows these three shells
    from kb.cli import cli

    click.echo(complete(cli, {}, "kb", "_KB_COMPLETE").source())


@click.command(name="help")
@click.argument("topic", type=click.Choice(["query", "config", "links"]), required=False)
@click.pass_context
def help_command(ctx: click.Context, topic: str | None) -> None:
    """The reference for TOPIC, offline: query (the search language), config (kb.yaml)
    or links (how links are read and resolved). Without a TOPIC, the commands."""
    if topic is None:
        click.echo(ctx.find_root().get_help())
        return
    from importlib.resources import files

    click.echo(files("kb.help").joinpath(f"{topic}.md").read_text(encoding="utf-8").rstrip())
