"""The listing commands: ``kb show``, ``kb list``, ``kb recent``, ``kb tags``, ``kb stats``,
``kb info``.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from kb import __version__
from kb.cli import layout
from kb.cli.complete import complete_note, complete_query, complete_series, complete_tag
from kb.cli.layout import GAP, columns, echo_lines, share_widths, terminal_width
from kb.cli.output import open_kb, path_line, use_color, warn_settings
from kb.cli.search import SearchCommand
from kb.errors import KbError

if TYPE_CHECKING:
    from rich.console import Console

    from kb.knowledge_base import KnowledgeBase
    from kb.notes.listing import ListedNote, NoteDetails
    from kb.notes.views import TagNode


SORT_CHOICES = ["path", "title", "date", "modified", "words"]  # kb.notes.listing.SORT_KEYS


class ListingOutput(NamedTuple):
    """How a listing command prints its notes (at most one of these is given)."""

    template: str | None
    as_json: bool
    jsonl: bool
    print0: bool


def _listing_options(func: Callable[..., None]) -> Callable[..., None]:
    """--format, --json, --jsonl and -0, handed to the command as one ``output``."""

    @functools.wraps(func)
    def wrapper(
        *args: Any, template: str | None, as_json: bool, jsonl: bool, print0: bool, **kwargs: Any
    ) -> None:
        if sum((template is not None, as_json, jsonl, print0)) > 1:
            raise click.UsageError("choose one of --format, --json, --jsonl and --print0")
        func(*args, output=ListingOutput(template, as_json, jsonl, print0), **kwargs)

    for option in reversed(
        [
            click.option(
                "--format",
                "template",
                metavar="TEMPLATE",
                help="One line per note from a template over its fields: "
                "'{date} {title}'; fields: path file title date tags series draft words "
                "modified id.",
            ),
            click.option("--json", "as_json", is_flag=True, help="Print a JSON list of notes."),
            click.option("--jsonl", is_flag=True, help="Print one JSON object per line."),
            click.option(
                "-0", "--print0", is_flag=True, help="Print the files, each ended by a NUL byte."
            ),
        ]
    ):
        wrapper = option(wrapper)
    return wrapper


def _print_listed(kb: KnowledgeBase, notes: list[ListedNote], output: ListingOutput) -> None:
    """Notes as a table on a terminal, one file a line when piped, or as asked."""

    from kb.text import json_text, strip_controls  # deferred: on first use

    files = [kb.shown_file(kb.note_file(note.root, note.rel)) for note in notes]
    if output.as_json:
        fields = [note.fields(file) for note, file in zip(notes, files, strict=True)]
        click.echo(json_text(fields, indent=2))
    elif output.jsonl:
        for note, file in zip(notes, files, strict=True):
            click.echo(json_text(note.fields(file)))
    elif output.print0:
        for file in files:
            click.echo(os.fsencode(file) + b"\0", nl=False)
    elif output.template is not None:
        from kb.notes.listing import format_note  # deferred: 8 modules more

        for note, file in zip(notes, files, strict=True):
            click.echo(strip_controls(format_note(output.template, note.fields(file))))
    elif layout.stdout_is_terminal() or use_color():
        _print_table(notes, files, use_color())
    else:
        for file in files:
            click.echo(path_line(file))


def _print_table(notes: list[ListedNote], files: list[str], color: bool) -> None:
    """Date, title and file in columns padded by display width, in the terminal's width:
    a title that does not fit is cut at its end, a file in its middle, with ``…``; no
    line wraps. The date column is left out when no note has a date."""
    from kb.linebreak import cell_width, cut_end, cut_middle, pad  # deferred: 4 modules more
    from kb.text import one_line  # deferred: on first use

    dates = [(note.date or "")[:10] for note in notes]
    titles = [one_line(note.title) for note in notes]
    paths = [path_line(file) for file in files]
    date_width = max(map(len, dates), default=0)
    room = columns() - (date_width + len(GAP) if date_width else 0) - len(GAP)
    title_cells = [cell_width(title) for title in titles]  # measured once: 10,000 rows
    path_cells = [cell_width(path) for path in paths]
    wanted = [max(title_cells, default=0), max(path_cells, default=0)]
    title_width, path_width = share_widths(wanted, room, [min(w, 12) for w in wanted])
    lines = []
    for date, title, cells, path, path_size in zip(
        dates, titles, title_cells, paths, path_cells, strict=True
    ):
        fits = cells <= title_width
        name = (
            pad(title, title_width, cells)
            if fits
            else pad(cut_end(title, title_width), title_width)
        )
        shown = path if path_size <= path_width else cut_middle(path, path_width)
        lines.append(
            (_dim(date, color) + " " * (date_width - len(date)) + GAP if date_width else "")
            + name
            + GAP
            + (click.style(shown, fg="cyan") if color else shown)
        )
    echo_lines(lines, color)


def _dim(text: str, color: bool) -> str:
    return click.style(text, dim=True) if color and text else text


@click.command()
@click.argument("note", shell_complete=complete_note)
@click.option("--raw", is_flag=True, help="Print the Markdown as written, even on a terminal.")
@click.option("--json", "as_json", is_flag=True, help="Print the note's fields as JSON.")
@click.option("--no-pager", is_flag=True, help="Never page a long note through $PAGER.")
@click.pass_context
def show(ctx: click.Context, note: str, raw: bool, as_json: bool, no_pager: bool) -> None:
    """Show NOTE: rendered on a terminal (through $PAGER when longer than the screen),
    its Markdown file as written when piped or with --raw, its fields with --json.

    NOTE is a path (from this folder or the notes root, .md optional), a title, an alias,
    a file name, a close misspelling or the pinyin of a Chinese title (xcgs). Exit codes:
    0 shown, 1 no store yet, 2 NOTE names no note or several.
    """

    from kb.text import json_text, strip_controls  # deferred: on first use

    kb = open_kb(ctx, reads_notes=True)
    details = kb.note_details(kb.find_note(note))
    if as_json:
        click.echo(json_text(details.as_json(kb.shown_file(details.file)), indent=2))
    else:
        from kb.cli.pager import show_rendered, stdout_is_terminal  # show alone pages

        if raw or not stdout_is_terminal():
            click.echo(strip_controls(details.markdown).rstrip("\n"))
        else:
            file = kb.shown_file(details.file)
            show_rendered(lambda console: _render_note(details, file, console), pager=not no_pager)


def _render_note(details: NoteDetails, file: str, console: Console) -> None:
    """The note's body as Rich renders Markdown, under its title, date, path and tags.
    Note text is never read as Rich markup, and links are shown, not made hyperlinks."""
    from rich.markdown import Markdown  # deferred: loads linkify_it, markdown_it, pygments, rich
    from rich.text import Text  # deferred: loads rich

    from kb.notes.listing import markdown_body  # deferred: 8 modules more
    from kb.text import clean_text, one_line  # deferred: on first use

    console.print(Text(one_line(details.title), style="bold"))
    tags = " ".join(f"#{one_line(tag)}" for tag in details.tags)
    meta = [(details.date or "")[:10], one_line(file), tags]
    console.print(Text("  ".join(part for part in meta if part), style="dim"))
    console.print()
    console.print(Markdown(clean_text(markdown_body(details.markdown)), hyperlinks=False))


def _note_option(name: str, help_text: str) -> Any:
    return click.option(name, metavar="NOTE", shell_complete=complete_note, help=help_text)


@click.command(name="list", cls=SearchCommand)  # kb list tag:x -draft: -draft is query text
@click.argument("query", nargs=-1, shell_complete=complete_query)
@click.option(
    "--tag",
    multiple=True,
    shell_complete=complete_tag,
    help="The tag or one below it (repeat: all of them).",
)
@click.option("--series", multiple=True, shell_complete=complete_series, help="In this series.")
@click.option("--category", multiple=True, help="In this category.")
@click.option("--path", "paths", multiple=True, help="The note's path contains this.")
@click.option("--since", metavar="DATE", help="Dated on or after DATE (2024, 2024-03, 2024-03-10).")
@click.option("--until", metavar="DATE", help="Dated on or before DATE (the whole year or month).")
@click.option("--modified-since", metavar="TIME", help="File modified at or after TIME.")
@click.option("--modified-until", metavar="TIME", help="File modified at or before TIME.")
@click.option("--draft/--no-draft", default=None, help="Only drafts, or no drafts.")
@click.option("--orphan", is_flag=True, help="Notes with no links in or out.")
@_note_option("--linked-from", "Notes NOTE links to.")
@_note_option("--linking-to", "Notes that link to NOTE.")
@click.option(
    "--sort",
    type=click.Choice(SORT_CHOICES),
    help="Order (default: path; with a QUERY, rank). date, modified and words put the "
    "newest or longest first.",
)
@click.option("--reverse", is_flag=True, help="Reverse the order.")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1),
    default=None,
    help="At most this many notes (default: all).",
)
@_listing_options
@click.pass_context
def list_command(
    ctx: click.Context,
    query: tuple[str, ...],
    tag: tuple[str, ...],
    series: tuple[str, ...],
    category: tuple[str, ...],
    paths: tuple[str, ...],
    since: str | None,
    until: str | None,
    modified_since: str | None,
    modified_until: str | None,
    draft: bool | None,
    orphan: bool,
    linked_from: str | None,
    linking_to: str | None,
    sort: str | None,
    reverse: bool,
    limit: int | None,
    output: ListingOutput,
) -> None:
    """List every note, or those matching QUERY (the search language), with filters.

    On a terminal a table (date, title, file); piped, one file a line, relative to this
    folder. Exit codes: 0 listed (even none), 1 no store yet, 2 usage.
    """
    from kb.notes.listing import parse_filters  # deferred: 8 modules more

    kb = open_kb(ctx, reads_notes=True)
    filters = parse_filters(
        lambda ref: kb.find_note(ref).id,
        lambda name: "--" + name.replace("_", "-"),
        tags=tag,
        series=series,
        categories=category,
        paths=paths,
        since=since,
        until=until,
        modified_since=modified_since,
        modified_until=modified_until,
        draft=draft,
        orphan=orphan,
        linked_from=linked_from,
        linking_to=linking_to,
    )
    notes = kb.list_notes(filters, " ".join(query) or None, sort, reverse, limit)
    _print_listed(kb, notes, output)


@click.command()
@click.option(
    "-n", "--limit", type=click.IntRange(1), default=10, show_default=True, help="How many notes."
)
@_listing_options
@click.pass_context
def recent(ctx: click.Context, limit: int, output: ListingOutput) -> None:
    """The notes whose files changed last, newest first."""
    from kb.notes.listing import ListFilters  # deferred: 8 modules more

    kb = open_kb(ctx, reads_notes=True)
    _print_listed(kb, kb.list_notes(ListFilters(), sort="modified", limit=limit), output)


@click.command()
@click.option("--tree", is_flag=True, help="Hierarchical tags (cs336/lecture) as a tree.")
@click.option(
    "--sort",
    type=click.Choice(["count", "name"]),
    default="count",
    show_default=True,
    help="Most used first, or by name.",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list of {tag, count}.")
@click.pass_context
def tags(ctx: click.Context, tree: bool, sort: str, as_json: bool) -> None:
    """Every tag with the number of notes that have it."""
    from kb.text import json_text, one_line  # deferred: on first use

    kb = open_kb(ctx, reads_notes=True)
    if tree:
        nodes = kb.tag_tree()
        if as_json:
            click.echo(json_text([_tag_node_json(node) for node in nodes], indent=2))
            return
        _print_tag_tree(nodes, 0, sort)
        return
    counts = kb.tag_counts(sort)
    if as_json:
        click.echo(json_text([{"tag": tag, "count": count} for tag, count in counts], indent=2))
        return
    width = max((len(str(count)) for _, count in counts), default=1)
    fit = _fitter(width + 2)
    for tag, count in counts:
        click.echo(f"{count:>{width}}  {fit(one_line(tag))}")


def _print_tag_tree(nodes: list[TagNode], depth: int, sort: str) -> None:
    from kb.text import one_line  # deferred: on first use

    if sort == "count":
        nodes = sorted(nodes, key=lambda node: (-node.count, node.name.casefold()))
    for node in nodes:
        fit = _fitter(2 * depth + 2 + len(str(node.count)))
        click.echo(f"{'  ' * depth}{fit(one_line(node.name))}  {node.count}")
        _print_tag_tree(node.children, depth + 1, sort)


def _fitter(taken: int) -> Callable[[str], str]:
    """On a terminal: a tag cut with ``…`` to what ``taken`` cells leave of the line;
    piped: the tag whole."""

    width = terminal_width()
    if width is None:
        return lambda text: text
    from kb.linebreak import cut_end  # deferred: 4 modules more

    return lambda text: cut_end(text, max(width - taken, 1))


def _tag_node_json(node: TagNode) -> dict[str, Any]:
    return {
        "tag": node.tag,
        "name": node.name,
        "count": node.count,
        "children": [_tag_node_json(child) for child in node.children],
    }


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as a JSON object.")
@click.pass_context
def stats(ctx: click.Context, as_json: bool) -> None:
    """Notes, words, tags, links, notes by year, store and index size, engine, last
    ingest: from the store's counts, without reading any note."""
    from kb.text import json_text  # deferred: on first use

    kb = open_kb(ctx, reads_notes=True)
    found = kb.stats()
    meaning = kb.by_meaning.status()
    if as_json:
        click.echo(json_text({**found._asdict(), "meaning": meaning.as_json()}, indent=2))
        return
    links = found.links
    years = ", ".join(f"{year}: {count}" for year, count in found.by_year.items())
    for label, value in (
        ("notes", f"{found.notes:,}"),
        ("words", f"{found.words:,}"),
        ("tags", f"{found.tags:,}"),
        ("series", f"{found.series:,}"),
        (
            "links",
            f"{links['resolved']:,} resolved, {links['broken']:,} broken, "
            f"{links['external']:,} external, {links['attachments']:,} attachments, "
            f"{links['missing_files']:,} missing files",
        ),
        ("by year", years or "none"),
        ("store", _size(found.store_bytes)),
        ("index folder", _size(found.index_bytes)),
        ("engine", found.engine),
        ("meaning", meaning.summary()),
        ("last ingest", found.last_ingest or "never"),
    ):
        click.echo(f"{label + ':':14}{value}")


def _size(count: int) -> str:
    size = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{count} B"


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the facts as a JSON object.")
@click.pass_context
def info(ctx: click.Context, as_json: bool) -> None:
    """Which knowledge base kb uses and why (--kb, KB_HOME, the upward search, the
    default), its notes roots, store, engine and config file, and the versions."""

    from kb.engines.registry import DEFAULT_ENGINE  # deferred: 2 modules more
    from kb.knowledge_base import KnowledgeBase  # deferred: 32 modules more
    from kb.text import json_text, one_line  # deferred: on first use

    home, reason = KnowledgeBase.locate(ctx.obj.get("kb_dir"))
    kb = KnowledgeBase.open(home)
    warn_settings(kb)
    config_file = kb.home / "kb.yaml"
    try:
        engine = kb.engine_name()
    except KbError:  # no store yet
        engine = str(kb.config.raw.get("engine") or DEFAULT_ENGINE)
    facts: dict[str, Any] = {
        "knowledge_base": str(kb.home),
        "found_by": reason,
        "roots": [str(root.path) for root in kb.config.roots],
        "store": str(kb.config.store_path),
        "store_exists": kb.config.store_path.exists(),
        "engine": engine,
        "meaning": kb.by_meaning.status().as_json(),
        "config": str(config_file) if config_file.is_file() else None,
        "kb_version": __version__,
        "python": f"{platform.python_version()} ({sys.executable})",
    }
    if as_json:
        click.echo(json_text(facts, indent=2))
        return
    click.echo(f"knowledge base: {one_line(facts['knowledge_base'])} (found by {reason})")
    for root in facts["roots"]:
        click.echo(f"notes root:     {one_line(root)}")
    store_note = "" if facts["store_exists"] else " (not made yet: run 'kb ingest')"
    click.echo(f"store:          {one_line(facts['store'])}{store_note}")
    click.echo(f"engine:         {engine}")
    click.echo(f"meaning:        {one_line(kb.by_meaning.status().summary())}")
    click.echo(f"config:         {one_line(facts['config'] or 'none (defaults)')}")
    click.echo(f"kb:             {__version__}")
    click.echo(f"python:         {facts['python']}")
