"""``kb search``: the query as words, options only where click would take them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from kb.cli.complete import complete_search_query
from kb.cli.output import highlight, open_kb, path_line, use_color

if TYPE_CHECKING:
    from kb.search.run import SearchHit


_EVERY = 2**31 - 1  # kb search --all: a limit no knowledge base reaches


class SearchCommand(click.Command):
    """``kb search redis -cluster``: a word starting with a single ``-`` that is not one of
    this command's options is query text, wherever it stands; options may come first or
    last; a ``--word`` is always an option (an unknown one is a usage error naming it).
    After ``--`` every word is query text, as before."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        options: list[str] = []
        words: list[str] = []
        takes_value: dict[str, click.Option] = {}
        flags: set[str] = set()
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                for name in (*param.opts, *param.secondary_opts):
                    if param.is_flag or param.count:
                        flags.add(name)
                    else:
                        takes_value[name] = param
        rest = iter(args)
        for arg in rest:
            if arg == "--":
                words.extend(rest)
            elif arg in flags:
                options.append(arg)
            elif arg in takes_value:
                options.append(arg)
                value = next(rest, None)  # none: click reports the missing value
                if value is not None:
                    options.append(value)
            elif _is_option(arg, takes_value):
                options.append(arg)
            else:
                words.append(arg)
        return super().parse_args(ctx, [*options, "--", *words])


def _is_option(arg: str, takes_value: dict[str, click.Option]) -> bool:
    """Every ``--word`` (``--limit=5``, ``--format``, ``--nosuchoption``) and a number joined
    to a short option (``-n5``) are options: click names an unknown one in a usage error
    (exit 2) rather than kb searching for it. Only a single ``-word`` (``-cluster``,
    ``-nginx``, ``-draft:true``) is the query's exclusion."""
    if arg.startswith("--") and len(arg) > 2:
        return True
    return arg[:2] in takes_value and arg[2:].isdigit()


_QUERY_SUMMARY = """\b
The query language (kb help query for all of it):
  Redis 学习笔记              every word must match
  roofline OR 带宽            either
  redis -cluster              without (also: redis NOT cluster)
  "arithmetic intensity"      the exact phrase, Chinese too
  roof*                       a prefix, at least 2 characters
  (roofline OR 显存) gpu      grouping
  tag:cs336                   the tag or one below it (cs336/lecture)
  title:roofline              in the title (title:"two words")
  path:posts/                 the note's path contains this
  series:CS336  category:GPU  front-matter series or category
  date:2024-03  date:2024-01..2024-06  date:2024-03..
  draft:true  draft:false     drafts only, or no drafts
"""


@click.command(cls=SearchCommand, epilog=_QUERY_SUMMARY)
@click.argument("query", nargs=-1, required=True, shell_complete=complete_search_query)
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(1, 1000),
    default=20,
    show_default=True,
    help="Show at most this many notes.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the hits as a JSON list.")
@click.option(
    "--paths",
    "as_paths",
    is_flag=True,
    help="Print only the note files, one per line, relative to this folder.",
)
@click.option(
    "-0",
    "--print0",
    is_flag=True,
    help="Print only the note files, each ended by a NUL byte (for xargs -0).",
)
@click.option("--all", "every", is_flag=True, help="Every matching note: no -n limit.")
@click.option(
    "--exact",
    is_flag=True,
    help="The words as typed: no typos, partial words, inflections or glossary partners.",
)
@click.option(
    "--lexical",
    is_flag=True,
    help="The words only: no search by meaning for this search (--exact implies it).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Say how each hit was ranked: the gate, word and meaning scores, the passage.",
)
@click.pass_context
def search(
    ctx: click.Context,
    query: tuple[str, ...],
    limit: int,
    as_json: bool,
    as_paths: bool,
    print0: bool,
    every: bool,
    exact: bool,
    lexical: bool,
    explain: bool,
) -> None:
    """Search notes with the query language summed up below.

    A word starting with a single - that is not an option here is part of the query
    (kb search redis -cluster); an unknown --option is an error; after -- every word
    is. Exit codes: 0 found notes, 1 nothing matched (or no store yet), 2 bad query or
    usage.
    """
    if print0 and as_json:
        raise click.UsageError("--print0 prints paths; it does not go with --json")
    kb = open_kb(ctx, reads_notes=True)
    # One more than asked tells whether the list was cut, without counting every match.
    results = kb.search(
        " ".join(query),
        limit=_EVERY if every else limit + 1,
        exact=exact,
        lexical=lexical,
        explain=explain,
    )
    if results.warning:
        click.echo(f"kb: warning: {results.warning}", err=True)
    for notice in results.notices:
        click.echo(f"kb: {notice}", err=True)
    hits = results.hits if every else results.hits[:limit]
    cut = len(hits) < len(results.hits)
    if results.relaxed:
        complete = [hit for hit in hits if not hit.missing]
        if (as_paths or print0) and complete:
            hits = complete  # a script gets the notes that hold every word
            cut = len([hit for hit in results.hits if not hit.missing]) > len(hits)
        elif not complete:
            click.echo("kb: no note holds every word; these hold some of them", err=True)
    if as_json:
        from kb.text import json_text  # deferred: on first use

        # `path` stays the note's path in its root; `file` is printed as the text shows it.
        found = [{**hit.as_json(), "file": kb.shown_path(hit.path)} for hit in hits]
        click.echo(json_text(found, indent=2))
    elif as_paths or print0:
        for hit in hits:
            file = kb.shown_path(hit.path)
            if print0:  # the exact name, for xargs -0
                click.echo(os.fsencode(file) + b"\0", nl=False)
            else:
                click.echo(path_line(file))
    else:
        _print_hits(hits, [kb.shown_path(hit.path) for hit in hits])
    if explain and not as_json:
        _explain_gate(results.gate, lexical or exact)
    if cut:
        shown = f"{len(hits)} note" if len(hits) == 1 else f"{len(hits)} notes"
        click.echo(f"kb: showing the first {shown}; more match: use --all or a larger -n", err=True)
    if not hits:
        from kb.text import one_line  # deferred: on first use

        # The suggestion is a word from the notes.
        hint = f" (did you mean: {one_line(results.suggestion)}?)" if results.suggestion else ""
        click.echo(f"kb: no notes match {' '.join(query)!r}{hint}", err=True)
        ctx.exit(1)


def _print_hits(hits: list[SearchHit], files: list[str]) -> None:
    """Each hit as title and date, path and tags, the snippet, what it lacks. On a
    terminal the title is cut with ``…`` at its end and the path in its middle, and the
    snippet wraps at the terminal's width where kb's line breaker allows (never inside a
    Latin word, a number or a path); piped, each of them is one whole line."""
    from kb.cli.layout import terminal_width  # deferred: on first use
    from kb.text import one_line  # deferred: on first use

    color = use_color()
    width = terminal_width()
    if width is not None:
        _print_hits_fitted(hits, files, width, color)
        return
    for hit, file in zip(hits, files, strict=True):
        title = highlight(hit.title, hit.title_highlights, color, bold=True)
        date = one_line((hit.date or "")[:10])
        click.echo(f"{title}  {click.style(date, dim=True) if color else date}".rstrip())
        tags = " ".join(f"#{one_line(tag)}" for tag in hit.tags)
        path = one_line(file)
        click.echo(
            f"{click.style(path, fg='cyan') if color else path}  "
            f"{click.style(tags, dim=True) if color else tags}".rstrip()
        )
        if hit.near:  # found by meaning: the passage nearest the query, not the words
            near = f"≈ {one_line(hit.near)}"
            click.echo(click.style(near, fg="magenta") if color else near)
        else:
            click.echo(highlight(hit.snippet, hit.highlights, color))
        if hit.missing:
            lacks = "without " + ", ".join(one_line(w) for w in hit.missing)
            click.echo(click.style(lacks, dim=True) if color else lacks)
        for line in explain_lines(hit):
            click.echo(click.style(line, dim=True) if color else line)
        click.echo()


def _print_hits_fitted(hits: list[SearchHit], files: list[str], width: int, color: bool) -> None:
    from kb.cli.layout import GAP, echo_lines, wrapped_lines  # deferred: on first use
    from kb.linebreak import cell_width, cut_end, cut_middle  # deferred: 4 modules more
    from kb.text import one_line  # deferred: on first use

    def dim(text: str) -> str:
        return click.style(text, dim=True) if color and text else text

    lines: list[str] = []
    for hit, file in zip(hits, files, strict=True):
        date = one_line((hit.date or "")[:10])
        room = width - (cell_width(date) + len(GAP) if date else 0)
        title = one_line(hit.title)
        if cell_width(title) <= room and title == hit.title:
            shown = highlight(title, hit.title_highlights, color, bold=True)
        else:  # cut, or made one line: the spans no longer fit, only the title is bold
            shown = highlight(cut_end(title, room), [], color, bold=True)
        lines.append(f"{shown}{GAP}{dim(date)}" if date else shown)
        path = cut_middle(one_line(file), width)
        tags = " ".join(f"#{one_line(tag)}" for tag in hit.tags)
        styled = click.style(path, fg="cyan") if color else path
        if tags and cell_width(path) + len(GAP) + cell_width(tags) <= width:
            lines.append(f"{styled}{GAP}{dim(tags)}")
        else:
            lines.append(styled)
            lines += [dim(line) for line in wrapped_lines(tags, width)] if tags else []
        if hit.near:  # found by meaning: the passage nearest the query, not the words
            near = f"≈ {one_line(hit.near)}"
            lines += [
                click.style(line, fg="magenta") if color else line
                for line in wrapped_lines(near, width)
            ]
        else:
            lines += wrapped_lines(hit.snippet, width, spans=hit.highlights, color=color)
        if hit.missing:
            lacks = "without " + ", ".join(one_line(w) for w in hit.missing)
            lines += [dim(line) for line in wrapped_lines(lacks, width)]
        for line in explain_lines(hit):
            lines += [dim(part) for part in wrapped_lines(line, width)]
        lines.append("")
    echo_lines(lines, color)


def explain_lines(hit: SearchHit) -> list[str]:
    """How the hit was ranked (``--explain``): the gate and the scores, then the passage
    the model found nearest. Nothing for a hit ranked without meaning."""
    why = hit.why
    if why is None:
        return []
    from kb.text import one_line  # deferred: on first use

    if why.fused is not None:
        fused = f"fused {why.fused:.3f}"
    else:  # the words' order stood, or they found nothing and the nearest filled the page
        fused = "the words found nothing: nearest above the floor" if hit.near else "words decide"
    lines = [
        f"explain: gate {why.gate}; word {why.word:.3f}; meaning passage {why.passage:.3f}"
        f" (cosine {why.similarity:.3f}), whole note {why.whole:.3f}; {fused}"
    ]
    if why.passage_text:
        where = f"{one_line(why.heading)}: " if why.heading else ""
        lines.append(f"explain: nearest passage {where}{one_line(why.passage_text)[:160]}")
    return lines


def _explain_gate(gate: str, words_only: bool) -> None:
    """Why no hit says more, when none does: meaning off, or not asked."""
    if words_only:
        click.echo("kb: explain: the words alone (--lexical or --exact)", err=True)
    elif not gate:
        click.echo("kb: explain: meaning is off or not embedded yet (kb info)", err=True)
    else:
        click.echo(f"kb: explain: gate {gate}", err=True)
