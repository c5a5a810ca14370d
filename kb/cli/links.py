"""``kb links``, ``kb check`` and ``kb graph``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kb.cli.output import open_kb

if TYPE_CHECKING:
    from kb.links.connections import Connections


GRAPH_FORMATS = ["dot", "json", "mermaid"]  # what kb.graph.render knows


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
    kb = open_kb(ctx)
    found = kb.connections(kb.find_note(note), related_limit=related_limit)
    if as_json:
        from kb.text import json_text

        click.echo(json_text(found.as_json(), indent=2))
        return
    _print_connections(found)


def _print_connections(found: Connections) -> None:
    from kb.links.check import shown_target
    from kb.text import one_line

    click.echo(f"{one_line(found.note.title)}\n{one_line(found.note.path)}")
    note_links = [x for x in found.outgoing if x.status not in ("external", "attachment")]
    external = len(found.outgoing) - len(note_links)
    click.echo(f"\nLinks ({len(note_links)}{f', {external} external' if external else ''})")
    for link in sorted(note_links, key=lambda x: (not x.rel, x.rel, x.line)):
        label = f"{one_line(link.rel)}: " if link.rel else ""
        written = one_line(shown_target(link.target, link.anchor, link.kind))  # decoded
        if link.resolved:
            flag = {"ambiguous": "  (ambiguous)", "missing-heading": "  (no such heading)"}
            click.echo(
                f"  {label}{one_line(link.title or '')}  {one_line(link.path or '')}  :{link.line}"
                f"{flag.get(link.status, '')}"
            )
        elif link.status in ("tag", "category"):  # a site's list page: kb lists them
            click.echo(f"  {label}{written}  :{link.line}  (the notes with this {link.status})")
        else:
            click.echo(f"  {label}{written}  :{link.line}  (unresolved)")
    click.echo(f"\nBacklinks ({len(found.backlinks)})")
    for back in sorted(found.backlinks, key=lambda b: (not b.rel, b.rel, b.path)):
        label = f"{one_line(back.rel)}: " if back.rel else ""
        click.echo(f"  {label}{one_line(back.title)}  {one_line(back.path)}")
        for place in back.places:  # every link from that note, with its line
            written = f"“{one_line(place.context)}”" if place.context else f"({place.kind})"
            click.echo(f"      :{place.line}  {written}")
    click.echo(f"\nMentions ({len(found.mentions)})")
    for mention in found.mentions:
        where = f":{mention.line}" if mention.line else ""
        click.echo(
            f"  {one_line(mention.title)}  {one_line(mention.path)}{where}"
            f"  “{one_line(mention.context)}”"
        )
    click.echo(f"\nRelated ({len(found.related)})")
    for item in found.related:
        click.echo(
            f"  {one_line(item.title)}  {one_line(item.path)}\n      {one_line(item.reason)}"
        )


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the problems as a JSON list.")
@click.pass_context
def check(ctx: click.Context, as_json: bool) -> None:
    """Report broken note links (with the notes they may have meant), links to files
    that do not exist, links to missing headings, ambiguous wikilinks, duplicate titles
    and files with parse warnings, one per line as path:line: kind: message, the path
    relative to the current folder.

    Exit codes: 0 no problems, 1 problems found (or no store yet).
    """
    from dataclasses import asdict

    from kb.links.check import shown_path
    from kb.text import json_text, one_line

    kb = open_kb(ctx)
    problems = kb.check()
    if as_json:
        click.echo(json_text([asdict(p) for p in problems], indent=2))
    else:
        lines = []
        for problem in problems:
            # path:line: kind: message, the file relative to here, as editors open it
            path = shown_path(kb.config, problem.path)
            where = f"{path}:{problem.line}" if problem.line else path
            lines.append(f"{one_line(where)}: {problem.kind}: {one_line(problem.message)}\n")
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
    from kb.links.graph import render

    kb = open_kb(ctx)
    for piece in render(kb.graph(with_mentions, with_related), fmt):  # never all at once
        click.echo(piece, nl=False)
