"""The ``kb`` command: thin click commands over the KnowledgeBase facade.

Each command imports only what it uses, so ``kb search`` starts fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kb import __version__
from kb.engines.registry import engine_names
from kb.errors import KbError

if TYPE_CHECKING:
    from kb.connections import Connections
    from kb.ingest import IngestStats
    from kb.knowledge_base import KnowledgeBase
    from kb.search import SearchHit

EXIT_INTERRUPTED = 130
GRAPH_FORMATS = ["dot", "json", "mermaid"]  # what kb.graph.render knows
_MAX_WARNINGS_SHOWN = 20
_EVERY = 2**31 - 1  # kb search --all: a limit no knowledge base reaches


def _fail(ctx: click.Context, message: str, exit_code: int) -> None:
    """A domain error: one line on stderr, then its own exit code."""
    from kb.text import strip_controls

    click.echo(f"kb: {strip_controls(message)}", err=True)  # messages can quote note paths
    ctx.exit(exit_code)


# Commands defined in kb/cli_notes.py (or the module named before ':'), imported only when
# one of them runs (or is listed).
LAZY_COMMANDS = {
    "show": "show",
    "list": "list_command",
    "recent": "recent",
    "tags": "tags",
    "stats": "stats",
    "info": "info",
    "edit": "edit",
    "mv": "mv",
    "completion": "completion",
    "help": "help_command",
    "lsp": "kb.cli_lsp:lsp",
}


class KbGroup(click.Group):
    """Turns domain errors and Ctrl-C into documented exit codes, never a traceback, and
    loads the commands of ``LAZY_COMMANDS`` when they are asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            import importlib

            module, _, name = LAZY_COMMANDS[cmd_name].rpartition(":")  # "module:name" or a name
            commands = importlib.import_module(module or "kb.cli_notes")
            self.add_command(getattr(commands, name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KbError as exc:
            _fail(ctx, str(exc), exc.exit_code)
        except BrokenPipeError:
            raise  # click ends quietly when the reader of a pipe goes away
        except OSError as exc:
            from kb.errors import os_error_message

            _fail(ctx, os_error_message(exc), 1)
        except Stopped as exc:
            click.echo(
                f"kb: stopped by {exc.name}; nothing was changed by the unfinished step",
                err=True,
            )
            ctx.exit(128 + exc.signum)
        except KeyboardInterrupt:
            click.echo("kb: interrupted; nothing was changed by the unfinished step", err=True)
            ctx.exit(EXIT_INTERRUPTED)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP: the run ends as on Ctrl-C (rolled back), with exit 128 + signal."""

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(name)
        self.signum = signum
        self.name = name


def stop_on_signals() -> None:
    """Let SIGTERM and SIGHUP end the command through the same path as Ctrl-C."""
    import signal

    def stop(signum: int, frame: object) -> None:
        # Once only: a second signal during the rollback ends the process at once (the OS
        # drops the lock and SQLite's journal undoes the rest).
        signal.signal(signum, signal.SIG_DFL)
        raise Stopped(signum, signal.Signals(signum).name)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)


def _open(ctx: click.Context) -> KnowledgeBase:
    from kb.knowledge_base import KnowledgeBase

    kb = KnowledgeBase.open(ctx.obj.get("kb_dir"))
    recovered = kb.finish_interrupted_move()
    if recovered:
        click.echo(f"kb: {recovered}", err=True)
    return kb


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
        kb = _open(ctx)
        if not sys.stdin.isatty() or not sys.stdout.isatty():
            raise click.UsageError("the terminal UI needs a terminal; see 'kb --help'")
        from kb.tui.app import run

        run(kb)


@cli.command("open")
@click.argument("text", nargs=-1, required=True)
@click.pass_context
def open_command(ctx: click.Context, text: tuple[str, ...]) -> None:
    """Open the terminal UI on the note TEXT names: a path, title or alias, a unique fuzzy
    match or pinyin (kb open xcgs). When it names no note, or several, the UI opens on
    the search screen with TEXT typed."""
    kb = _open(ctx)
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise click.UsageError("the terminal UI needs a terminal; see 'kb --help'")
    wanted = " ".join(text)
    try:
        note_id: int | None = kb.find_note(wanted).id
    except KbError:  # none or several (or no store yet): let the search screen show them
        note_id = None
    from kb.tui.app import run

    run(kb, note_id=note_id, query="" if note_id is not None else wanted)


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option(
    "--default",
    "make_default",
    is_flag=True,
    help="Also make it the default knowledge base, used from any folder.",
)
def init(directory: Path, make_default: bool) -> None:
    """Create a knowledge base in DIRECTORY: kb.yaml, index/ and, when no notes exist
    yet, notes/. A Hugo site (content/), a Jekyll site (the folder), an Obsidian vault, a
    VuePress, Docusaurus or MkDocs docs folder or a folder of Markdown is read where its
    notes are; kb says what it chose."""
    from kb.knowledge_base import KnowledgeBase

    made = KnowledgeBase.init(directory, make_default)
    click.echo(f"knowledge base ready in {made.home}")
    if made.chose:
        click.echo(made.chose)
    if made.default_config is not None:
        click.echo(f"set as the default knowledge base in {made.default_config}")


@cli.command()
@click.argument("title", nargs=-1, required=True)
@click.option("--folder", help="Folder inside the notes root (default: new_notes_folder).")
@click.option("--no-edit", is_flag=True, help="Create the file without opening $EDITOR.")
@click.option(
    "--force-new", is_flag=True, help="Create a new note even when a note has this title."
)
@click.pass_context
def new(
    ctx: click.Context, title: tuple[str, ...], folder: str | None, no_edit: bool, force_new: bool
) -> None:
    """Create a note titled TITLE, open it in $EDITOR, then ingest it.

    When a note already has this title, that note is opened instead (--force-new makes
    another). If the editor cannot start, the note is kept and ingested, and kb exits 1.
    """
    import subprocess

    from kb.editing import editor_command

    kb = _open(ctx)
    text = " ".join(title)
    path = None if force_new else _note_titled(kb, text)
    if path is None:
        path = kb.new_note(text, folder)
    failure = None
    if not no_edit:
        command = editor_command(path)
        try:
            subprocess.run(command, check=False)
        except OSError as exc:
            failure = f"cannot start the editor {command[0]}: {exc.strerror or exc}"
    kb.ingest_file(path)  # the file is kept and ingested, edited or not
    click.echo(_path_line(str(path)))
    if failure:
        _fail(ctx, f"{failure}; the note is kept and ingested", 1)


def _note_titled(kb: KnowledgeBase, title: str) -> Path | None:
    """The file of the note titled ``title`` (any case), if the store holds one; a usage
    error when several are, so kb never opens the wrong one."""
    from kb.editing import notes_titled
    from kb.errors import StoreError, UsageError

    if not kb.config.store_path.exists():
        return None  # nothing ingested yet
    try:
        same = notes_titled(kb.note_choices(), title)
    except StoreError:
        return None  # from an older kb: the ingest after the edit upgrades it
    if len(same) > 1:
        from kb.text import one_line

        listing = "; ".join(one_line(note.path) for note in same)
        raise UsageError(
            f"{len(same)} notes are titled {one_line(title)!r} ({listing}); "
            "open one with its path, or use --force-new"
        )
    return kb.note_page(same[0].id).file if same else None


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--rebuild", is_flag=True, help="Forget the store and ingest everything again.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as a JSON object.")
@click.option(
    "-v", "--verbose", is_flag=True, help="List every added, updated, moved and removed note."
)
@click.option(
    "--engine",
    type=click.Choice(engine_names()),
    default=None,
    help="With --rebuild: build and use this search engine from now on.",
)
@click.option(
    "--wait",
    type=float,
    default=None,
    help="Seconds to wait for another ingest to finish (default: 5).",
)
@click.pass_context
def ingest(
    ctx: click.Context,
    paths: tuple[Path, ...],
    rebuild: bool,
    as_json: bool,
    verbose: bool,
    engine: str | None,
    wait: float | None,
) -> None:
    """Read notes into the store: all notes roots, or only PATHS (files or folders).

    Unchanged files are skipped; renamed files are moved, not re-added. Exit codes: 0 the
    run finished (warnings or not), 1 it could not run, 2 usage, 3 another ingest holds
    the lock, 130 interrupted (143 SIGTERM, 129 SIGHUP).
    """
    if rebuild and paths:
        raise click.UsageError("--rebuild works on the whole knowledge base; drop the PATHS")
    kb = _open(ctx)
    for given in paths:
        _check_exists(kb, given)
    stop_on_signals()
    with _progress_reporter(enabled=not as_json) as progress:
        stats = kb.ingest(
            list(paths) or None, rebuild=rebuild, progress=progress, lock_wait=wait, engine=engine
        )
    _show_problems(stats)
    if as_json:
        from kb.text import json_text

        click.echo(json_text(stats.counts()))
        return
    if verbose:
        from kb.text import one_line

        for action, path in stats.changes:
            click.echo(f"{action:8} {one_line(path)}")
    click.echo(_summary(stats))
    if not paths and not stats.added + stats.updated + stats.moved + stats.unchanged:
        hint = kb.markdown_elsewhere()
        if hint:
            click.echo(f"kb: {hint}", err=True)


class SearchCommand(click.Command):
    """``kb search redis -cluster``: a word starting with ``-`` that is not one of this
    command's options is query text, wherever it stands; options may come first or last.
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
            elif _is_option(arg, takes_value, flags):
                options.append(arg)
            else:
                words.append(arg)
        return super().parse_args(ctx, [*options, "--", *words])


def _is_option(arg: str, takes_value: dict[str, click.Option], flags: set[str]) -> bool:
    """``--limit=5``, ``-n5`` (a number joined to a short option), or a long option
    mistyped closely enough (``--pahts``) that click should say so rather than search for
    it. Anything else (``-cluster``, ``-nginx``, ``--rebuild``) is a query word."""
    if arg.startswith("--") and len(arg) > 2:
        name = arg.split("=", 1)[0]
        if name in takes_value:
            return True
        import difflib

        known = [o for o in (*takes_value, *flags) if o.startswith("--")]
        return bool(difflib.get_close_matches(name, known, n=1, cutoff=0.75))
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


@cli.command(cls=SearchCommand, epilog=_QUERY_SUMMARY)
@click.argument("query", nargs=-1, required=True)
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
) -> None:
    """Search notes with the query language summed up below.

    A word starting with - that is not an option here is part of the query
    (kb search redis -cluster); after -- every word is. Exit codes: 0 found notes,
    1 nothing matched (or no store yet), 2 bad query.
    """
    if print0 and as_json:
        raise click.UsageError("--print0 prints paths; it does not go with --json")
    kb = _open(ctx)
    # One more than asked tells whether the list was cut, without counting every match.
    results = kb.search(" ".join(query), limit=_EVERY if every else limit + 1, exact=exact)
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
        import os

        from kb.text import json_text

        # `path` stays relative to the notes root; `file` is the path from this folder.
        found = [
            {**hit.as_json(), "file": os.path.relpath(kb.note_file(hit.root, hit.rel))}
            for hit in hits
        ]
        click.echo(json_text(found, indent=2))
    elif as_paths or print0:
        import os

        for hit in hits:
            file = os.path.relpath(kb.note_file(hit.root, hit.rel))
            if print0:  # the exact name, for xargs -0
                click.echo(os.fsencode(file) + b"\0", nl=False)
            else:
                click.echo(_path_line(file))
    else:
        _print_hits(hits)
    if cut:
        shown = f"{len(hits)} note" if len(hits) == 1 else f"{len(hits)} notes"
        click.echo(f"kb: showing the first {shown} of more; use --all or a larger -n", err=True)
    if not hits:
        from kb.text import one_line

        # The suggestion is a word from the notes.
        hint = f" (did you mean: {one_line(results.suggestion)}?)" if results.suggestion else ""
        click.echo(f"kb: no notes match {' '.join(query)!r}{hint}", err=True)
        ctx.exit(1)


@cli.command()
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
    kb = _open(ctx)
    found = kb.connections(kb.find_note(note), related_limit=related_limit)
    if as_json:
        from kb.text import json_text

        click.echo(json_text(found.as_json(), indent=2))
        return
    _print_connections(found)


def _use_color() -> bool:
    """Colour when --color=always, never with --color=never; by default on a terminal
    unless NO_COLOR is set."""
    import os

    ctx = click.get_current_context(silent=True)
    choice = (ctx.find_root().obj or {}).get("color", "auto") if ctx else "auto"
    if choice != "auto":
        return bool(choice == "always")
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _check_exists(kb: KnowledgeBase, path: Path) -> None:
    """A missing PATH outside every notes root is a typo: say it does not exist. Inside a
    root it may be a note deleted since the last ingest, which the ingest removes."""
    import os

    from kb.errors import UsageError

    if os.path.lexists(path):
        return
    resolved = path.resolve()
    if not any(r.path == resolved or r.path in resolved.parents for r in kb.config.roots):
        raise UsageError(f"{path} does not exist")


def _print_connections(found: Connections) -> None:
    from kb.check import shown_target
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


@cli.command()
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

    from kb.check import shown_path
    from kb.text import json_text, one_line

    kb = _open(ctx)
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


@cli.command()
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
    from kb.graph import render

    kb = _open(ctx)
    click.echo(render(kb.graph(with_mentions, with_related), fmt))


def _print_hits(hits: list[SearchHit]) -> None:

    from kb.text import one_line

    color = _use_color()
    for hit in hits:
        title = _highlight(hit.title, hit.title_highlights, color, bold=True)
        date = one_line((hit.date or "")[:10])
        click.echo(f"{title}  {click.style(date, dim=True) if color else date}".rstrip())
        tags = " ".join(f"#{one_line(tag)}" for tag in hit.tags)
        path = one_line(hit.path)
        click.echo(
            f"{click.style(path, fg='cyan') if color else path}  "
            f"{click.style(tags, dim=True) if color else tags}".rstrip()
        )
        click.echo(_highlight(hit.snippet, hit.highlights, color))
        if hit.missing:
            lacks = "without " + ", ".join(one_line(w) for w in hit.missing)
            click.echo(click.style(lacks, dim=True) if color else lacks)
        click.echo()


def _highlight(text: str, spans: list[tuple[int, int]], color: bool, bold: bool = False) -> str:
    """Note text with its matches in colour; the text itself is never interpreted.
    Made safe piece by piece, so the spans still point into the text."""
    from kb.text import strip_controls

    if not color:
        return strip_controls(text)
    out, last = [], 0
    for start, end in spans:
        out.append(click.style(strip_controls(text[last:start]), bold=bold))
        out.append(click.style(strip_controls(text[start:end]), fg="yellow", bold=True))
        last = end
    out.append(click.style(strip_controls(text[last:]), bold=bold))
    return "".join(out)


def _path_line(path: str) -> str:
    """A file path on one line, safe to print; any ordinary name stays exact (for xargs)."""
    from kb.text import strip_controls

    return strip_controls(path).replace("\n", " ")


def _summary(stats: IngestStats) -> str:
    counts = stats.counts()
    parts = [
        f"{key} {counts[key]}"
        for key in ("added", "updated", "moved", "removed", "unchanged", "warnings")
    ]
    return ", ".join(parts) + f" in {stats.seconds:.2f} s"


def _show_problems(stats: IngestStats) -> None:
    from kb.text import one_line

    for path, problem in stats.problems[:_MAX_WARNINGS_SHOWN]:
        where = f"{path}:{problem.line}" if problem.line else path
        click.echo(f"warning: {one_line(where)}: {one_line(problem.message)}", err=True)
    hidden = len(stats.problems) - _MAX_WARNINGS_SHOWN
    if hidden > 0:
        click.echo(f"warning: … and {hidden} more", err=True)


class _progress_reporter:
    """A rich progress bar on stderr when it is a terminal; nothing otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.bar = Progress(
            TextColumn("ingesting"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.start()
        return self.update

    def update(self, done: int, total: int) -> None:
        if self.task is None:
            self.task = self.bar.add_task("ingest", total=total)
        self.bar.update(self.task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def main() -> None:
    cli(prog_name="kb")
