"""``kb links``, ``kb check`` and ``kb graph``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kb.cli.output import open_kb

if TYPE_CHECKING:
    from collections.abc import Callable

    from kb.links.connections import Connections
    from kb.notes.views import PageLink


GRAPH_FORMATS = ["dot", "json", "mermaid"]  # what kb.links.graph.render knows


@click.command()
@click.argument("note")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print an object with the lists outgoing, backlinks, mentions, related.",
)
@click.option(
    "-n",
    "--related",
    "related_limit",
    type=click.IntRange(0, 100),
    default=10,
    show_default=True,
    help="How many related notes to show.",
)
@click.pass_context
def links(ctx: click.Context, note: str, as_json: bool, related_limit: int) -> None:
    """Show how NOTE connects: its links, backlinks, unlinked mentions and related notes.

    NOTE is a path (relative to this folder or to the notes root), a title or an alias.
    Exit codes: 0 shown, 1 no store yet, 2 NOTE matches no note or several.
    """
    kb = open_kb(ctx, reads_notes=True)
    found = kb.links.connections(kb.find_note(note), related_limit=related_limit)
    if as_json:
        from kb.text import json_text  # deferred: on first use

        click.echo(json_text(found.as_json(), indent=2))
        return
    from kb.cli.layout import terminal_width  # deferred: on first use

    external = []
    if any(link.status == "external" for link in found.outgoing):  # their text: the page's
        external = [link for link in kb.note_page(found.note.id).links if link.url]
    _print_connections(found, external, terminal_width(), kb.shown_path)


def _print_connections(
    found: Connections,
    external: list[PageLink],
    width: int | None,
    shown: Callable[[str], str],
) -> None:
    """The note's links, external links, backlinks, mentions and related notes, one entry
    a line when piped. On a terminal (``width`` cells) no line is wider: titles are cut
    at the end and paths and URLs in the middle with ``…``, quoted lines and reasons wrap
    where kb's line breaker allows."""
    from kb.links.check import shown_target  # deferred: 6 modules more
    from kb.text import one_line, shown_url  # deferred: on first use

    lines = Lines(width)
    lines.pair("", one_line(found.note.title), one_line(shown(found.note.path)), "", sep="\n")
    note_links = [x for x in found.outgoing if x.status not in ("external", "attachment")]
    outside = len(found.outgoing) - len(note_links)
    lines.add(f"\nLinks ({len(note_links)}{f', {outside} external' if outside else ''})")
    for link in sorted(note_links, key=lambda x: (not x.rel, x.rel, x.line)):
        label = f"  {one_line(link.rel)}: " if link.rel else "  "
        if link.resolved:
            flag = {"ambiguous": "  (ambiguous)", "missing-heading": "  (no such heading)"}
            lines.pair(
                label,
                one_line(link.title or ""),
                one_line(shown(link.path) if link.path else ""),
                f"  :{link.line}{flag.get(link.status, '')}",
            )
        else:
            written = one_line(shown_target(link.target, link.anchor, link.kind))  # decoded
            listed = link.status in ("tag", "category")  # a site's list page: kb lists them
            why = f"the notes with this {link.status}" if listed else "unresolved"
            lines.pair(label, "", written, f"  :{link.line}  ({why})")
    if external:
        lines.add(f"\nExternal ({len(external)})")
        for page_link in external:  # as the app's link list shows them, URLs decoded
            label = f"  {one_line(page_link.rel)}: " if page_link.rel else "  "
            url = "↗ " + one_line(shown_url(page_link.url or ""))
            lines.pair(label, one_line(page_link.text), url, f"  :{page_link.line}")
    lines.add(f"\nBacklinks ({len(found.backlinks)})")
    for back in sorted(found.backlinks, key=lambda b: (not b.rel, b.rel, b.path)):
        label = f"  {one_line(back.rel)}: " if back.rel else "  "
        lines.pair(label, one_line(back.title), one_line(shown(back.path)), "")
        for place in back.places:  # every link from that note, with its line
            written = f"“{one_line(place.context)}”" if place.context else f"({place.kind})"
            lines.text(f":{place.line}  {written}", " " * 6, " " * 8)
    lines.add(f"\nMentions ({len(found.mentions)})")
    for mention in found.mentions:
        where = f":{mention.line}" if mention.line else ""
        context = f"“{one_line(mention.context)}”"
        if width is None:
            lines.add(
                f"  {one_line(mention.title)}  {one_line(shown(mention.path))}{where}  {context}"
            )
        else:
            lines.pair("  ", one_line(mention.title), one_line(shown(mention.path)), where)
            lines.text(context, " " * 6, " " * 6)
    lines.add(f"\nRelated ({len(found.related)})")
    for item in found.related:
        lines.pair("  ", one_line(item.title), one_line(shown(item.path)), "")
        lines.text(one_line(item.reason), " " * 6, " " * 6)
    lines.echo()


class Lines:
    """Lines of ``kb links`` as they are built: whole when piped (``width`` None), fitted
    to the terminal's width otherwise."""

    def __init__(self, width: int | None) -> None:
        self.width = width
        self.lines: list[str] = []

    def add(self, line: str) -> None:
        self.lines.append(line)

    def pair(self, label: str, name: str, path: str, suffix: str, sep: str = "  ") -> None:
        """``label name  path suffix``: on a terminal the name gives way at its end and
        the path in its middle, the widest first, so the line fits (the label and the
        suffix, a line number or a flag, are kept)."""
        between = sep if name and path else ""
        if self.width is not None:
            from kb.cli.layout import share_widths  # deferred: on first use
            from kb.linebreak import cell_width, cut_end, cut_middle  # deferred: 4 modules more

            fixed = cell_width(label) + cell_width(suffix)
            if sep == "\n":  # two lines: each gets the width
                name, path = cut_end(name, self.width), cut_middle(path, self.width)
            else:
                room = self.width - fixed - (len(between))
                wanted = [cell_width(name), cell_width(path)]
                name_width, path_width = share_widths(wanted, room, [min(w, 8) for w in wanted])
                name, path = cut_end(name, name_width), cut_middle(path, path_width)
        self.lines.append(f"{label}{name}{between}{path}{suffix}")

    def text(self, text: str, first_indent: str, indent: str) -> None:
        """Quoted text or a reason: one line when piped, wrapped on a terminal."""
        if self.width is None:
            self.lines.append(first_indent + text)
            return
        from kb.cli.layout import wrapped_lines  # deferred: on first use

        self.lines += wrapped_lines(text, self.width, indent, first_indent=first_indent)

    def echo(self) -> None:
        from kb.cli.layout import echo_lines  # deferred: on first use

        echo_lines(self.lines, color=False)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, as_json: bool) -> None:
    """Report broken note links (with the notes they may have meant), links to files
    that do not exist, links to missing headings, ambiguous wikilinks, duplicate titles
    and files with parse warnings, one per line as path:line: kind: message, the path
    relative to the current folder when it is inside the knowledge base (else whole).

    Exit codes: 0 no problems, 1 problems found (or no store yet).
    """
    from dataclasses import asdict  # deferred: 2 modules more

    from kb.text import json_text, one_line  # deferred: on first use

    kb = open_kb(ctx, reads_notes=True)
    problems = kb.links.check()
    if as_json:
        click.echo(json_text([asdict(p) for p in problems], indent=2))
    else:
        from kb.cli.layout import terminal_width, wrapped_lines  # deferred: on first use

        width = terminal_width()
        lines = []
        for problem in problems:
            # path:line: kind: message, the file relative to here, as editors open it
            path = kb.shown_path(problem.path)
            where = one_line(f"{path}:{problem.line}" if problem.line else path)
            line = f"{where}: {problem.kind}: {one_line(problem.message)}"
            if width is None:
                lines.append(line + "\n")
            else:  # the path whole (it is what an editor opens), the message wrapped
                kept = [(0, len(where))]
                lines += [
                    f"{piece}\n"
                    for piece in wrapped_lines(line, width, " " * 4, first_indent="", keep=kept)
                ]
        click.echo("".join(lines), nl=False)  # one write: tens of thousands of lines
        click.echo(f"{len(problems)} problem{'s' if len(problems) != 1 else ''}", err=True)
    if problems:
        ctx.exit(1)


@click.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(GRAPH_FORMATS),
    default="dot",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--mentions",
    "with_mentions",
    is_flag=True,
    help="Add unlinked mentions as dashed edges (one query per note).",
)
@click.option(
    "--related",
    "with_related",
    is_flag=True,
    help="Add each note's three most related notes as dashed edges.",
)
@click.pass_context
def graph(ctx: click.Context, fmt: str, with_mentions: bool, with_related: bool) -> None:
    """Export the link graph (explicit links; optionally mentions and related notes)."""
    from kb.links.graph import render  # deferred: 5 modules more

    kb = open_kb(ctx, reads_notes=True)
    for piece in render(kb.links.graph(with_mentions, with_related), fmt):  # never all at once
        click.echo(piece, nl=False)
