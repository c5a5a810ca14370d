"""``kb open``, ``kb sql``, ``kb completion`` and ``kb help``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from kb.cli import cli, pager
from kb.cli.output import open_kb
from kb.errors import KbError
from kb.help import TOPICS, page, topic_named

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem
    from rich.console import Console


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
    from kb.tui.app import run  # deferred: loads linkify_it, markdown_it, platformdirs, rich …

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
    that would write is refused (exit 2). A query stops after sql_time_limit seconds
    (default 5) or sql_max_rows rows (default 100,000; kb.yaml), printing what it had
    and one line on stderr (exit 1); Ctrl-C stops it too (exit 130).
    """
    result = open_kb(ctx, reads_notes=True).sql(query)
    fmt = fmt or ("table" if sys.stdout.isatty() else "json")
    from kb.cli.sql_output import write_rows  # deferred: 3 modules more

    stopped: list[KbError] = []

    def rows() -> Iterator[tuple[Any, ...]]:
        # A bound reached ends the rows, so that the output stays whole (closed JSON);
        # the reason is printed after it.
        try:
            yield from result.rows
        except KbError as exc:
            stopped.append(exc)

    write_rows(result.columns, rows(), fmt, sys.stdout)
    if stopped:
        raise stopped[0]


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
    from kb.cli.shell_completion import completion_script  # deferred: loads click

    click.echo(completion_script(shell, cli))


def _complete_topic(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    from click.shell_completion import CompletionItem  # only when completing

    return [CompletionItem(topic) for topic in TOPICS if topic.startswith(incomplete.lower())]


@click.command(name="help")
@click.argument("topic", required=False, shell_complete=_complete_topic)
@click.option("--no-pager", is_flag=True, help="Print the Markdown, never paged.")
def help_command(topic: str | None, no_pager: bool) -> None:
    """The reference page TOPIC, offline (the pages of docs/). Without a TOPIC, the list
    of topics.

    On a terminal the page is rendered, through $PAGER when it is longer than the
    screen; piped, or with --no-pager, it is the page's Markdown.
    """
    if topic is None:
        width = max(len(name) for name in TOPICS)
        click.echo("kb help TOPIC prints one of these pages (docs/TOPIC.md):\n")
        for name, summary in TOPICS.items():
            click.echo(f"  {name.ljust(width)}  {summary}")
        click.echo("\nThe commands: kb --help; one command's options: kb COMMAND --help.")
        return
    chosen = topic_named(topic)
    if chosen is None:
        raise click.BadParameter(
            f"{topic!r} is no topic; choose from {', '.join(TOPICS)}", param_hint="'TOPIC'"
        )
    text = page(chosen).rstrip("\n")
    if no_pager or not pager.stdout_is_terminal():
        click.echo(text)
        return

    def render(console: Console) -> None:
        from rich.markdown import Markdown  # rich: only a rendered page loads it

        console.print(Markdown(text, hyperlinks=False))

    pager.show_rendered(render)
