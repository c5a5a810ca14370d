"""The ``kb`` command: thin click commands over the KnowledgeBase facade.

Each command imports only what it uses, so ``kb search`` starts fast.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kb import __version__
from kb.errors import KbError

if TYPE_CHECKING:
    from kb.ingest import IngestStats
    from kb.knowledge_base import KnowledgeBase
    from kb.search import SearchHit

EXIT_INTERRUPTED = 130
_MAX_WARNINGS_SHOWN = 20


class KbCommandError(click.ClickException):
    """A domain error shown as one line on stderr, with its own exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code

    def show(self, file: Any = None) -> None:
        click.echo(f"kb: {self.message}", err=True)


class KbGroup(click.Group):
    """Turns domain errors and Ctrl-C into documented exit codes, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KbError as exc:
            raise KbCommandError(str(exc), exc.exit_code) from None
        except sqlite3.DatabaseError as exc:
            message = (
                f"the store cannot be used ({exc}); 'kb ingest --rebuild' recreates it "
                "from the notes"
            )
            raise KbCommandError(message, 1) from None
        except KeyboardInterrupt:
            click.echo("kb: interrupted; nothing was changed by the unfinished step", err=True)
            ctx.exit(EXIT_INTERRUPTED)


def _open(ctx: click.Context) -> KnowledgeBase:
    from kb.knowledge_base import KnowledgeBase

    return KnowledgeBase.open(ctx.obj.get("kb_dir"))


@click.group(cls=KbGroup, invoke_without_command=True)
@click.option(
    "--kb",
    "kb_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Knowledge base folder (default: KB_HOME, then the nearest folder with "
    "kb.yaml or index/, then ./notes, then the default in your user config).",
)
@click.version_option(__version__, prog_name="kb")
@click.pass_context
def cli(ctx: click.Context, kb_dir: Path | None) -> None:
    """kb: a searchable knowledge base for your Markdown notes.

    Run without a command to open the terminal UI.
    """
    ctx.ensure_object(dict)
    ctx.obj["kb_dir"] = kb_dir
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@cli.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option(
    "--default",
    "make_default",
    is_flag=True,
    help="Also make it the default knowledge base, used from any folder.",
)
def init(directory: Path, make_default: bool) -> None:
    """Create a knowledge base in DIRECTORY: kb.yaml, notes/ and index/."""
    from kb.config import CONFIG_NAME, INDEX_DIR

    directory.mkdir(parents=True, exist_ok=True)
    config = directory / CONFIG_NAME
    if not config.exists():
        config.write_text("# kb settings: see the README\nroots: [notes]\n", encoding="utf-8")
    (directory / "notes").mkdir(exist_ok=True)
    (directory / INDEX_DIR).mkdir(exist_ok=True)
    click.echo(f"knowledge base ready in {directory.resolve()}")
    if make_default:
        from kb.locations import write_default_knowledge_base

        where = write_default_knowledge_base(directory)
        click.echo(f"set as the default knowledge base in {where}")


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--rebuild", is_flag=True, help="Forget the store and ingest everything again.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as a JSON object.")
@click.option(
    "-v", "--verbose", is_flag=True, help="List every added, updated, moved and removed note."
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
    wait: float | None,
) -> None:
    """Read notes into the store: all notes roots, or only PATHS (files or folders).

    Unchanged files are skipped; renamed files are moved, not re-added. Exit codes: 0 the
    run finished (warnings or not), 1 it could not run, 2 usage, 3 another ingest holds
    the lock, 130 interrupted.
    """
    if rebuild and paths:
        raise click.UsageError("--rebuild works on the whole knowledge base; drop the PATHS")
    kb = _open(ctx)
    with _progress_reporter(enabled=not as_json) as progress:
        stats = kb.ingest(list(paths) or None, rebuild=rebuild, progress=progress, lock_wait=wait)
    _show_problems(stats)
    if as_json:
        click.echo(json.dumps(stats.counts()))
        return
    if verbose:
        for action, path in stats.changes:
            click.echo(f"{action:8} {path}")
    click.echo(_summary(stats))


@cli.command()
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
@click.pass_context
def search(
    ctx: click.Context, query: tuple[str, ...], limit: int, as_json: bool, as_paths: bool
) -> None:
    """Search notes. Words are ANDed; see the README for OR, -word, "phrases", prefix*,
    tag:, title:, path:, series:, category:, date: and draft:.

    Exit codes: 0 found notes, 1 nothing matched (or no store yet), 2 bad query.
    """
    kb = _open(ctx)
    results = kb.search(" ".join(query), limit=limit)
    if results.warning:
        click.echo(f"kb: warning: {results.warning}", err=True)
    if as_json:
        click.echo(results.to_json())
    elif as_paths:
        import os

        for hit in results.hits:
            click.echo(os.path.relpath(kb.note_file(hit.root, hit.rel)))
    else:
        _print_hits(results.hits)
    if not results.hits:
        hint = f" (did you mean: {results.suggestion}?)" if results.suggestion else ""
        click.echo(f"kb: no notes match {' '.join(query)!r}{hint}", err=True)
        ctx.exit(1)


def _print_hits(hits: list[SearchHit]) -> None:
    import os

    from kb.text import one_line

    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    for hit in hits:
        title = _highlight(hit.title, hit.title_highlights, color, bold=True)
        date = (hit.date or "")[:10]
        click.echo(f"{title}  {click.style(date, dim=True) if color else date}".rstrip())
        tags = " ".join(f"#{tag}" for tag in hit.tags)
        path = one_line(hit.path)
        click.echo(
            f"{click.style(path, fg='cyan') if color else path}  "
            f"{click.style(tags, dim=True) if color else tags}".rstrip()
        )
        click.echo(_highlight(hit.snippet, hit.highlights, color))
        click.echo()


def _highlight(text: str, spans: list[tuple[int, int]], color: bool, bold: bool = False) -> str:
    """Note text with its matches in colour; the text itself is never interpreted."""
    if not color:
        return text
    out, last = [], 0
    for start, end in spans:
        out.append(click.style(text[last:start], bold=bold))
        out.append(click.style(text[start:end], fg="yellow", bold=True))
        last = end
    out.append(click.style(text[last:], bold=bold))
    return "".join(out)


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
