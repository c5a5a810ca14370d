"""What every kb command prints and how it fails: one error line, the exit codes, paths as kb
prints them, colour, warnings, ingest summaries.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kb.errors import KbError, UsageError

if TYPE_CHECKING:
    from kb.ingest.run import IngestStats
    from kb.knowledge_base import KnowledgeBase


EXIT_INTERRUPTED = 130


MAX_WARNINGS_SHOWN = 20


def fail(ctx: click.Context, message: str, exit_code: int) -> None:
    """A domain error: one line on stderr, then its own exit code."""
    from kb.text import strip_controls  # deferred: on first use

    click.echo(f"kb: {strip_controls(message)}", err=True)  # messages can quote note paths
    ctx.exit(exit_code)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP: the run ends as on Ctrl-C (rolled back), with exit 128 + signal."""

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(name)
        self.signum = signum
        self.name = name


def stop_on_signals() -> None:
    """Let SIGTERM and SIGHUP end the command through the same path as Ctrl-C."""
    import signal  # deferred: on first use

    def stop(signum: int, frame: object) -> None:
        # Once only: a second signal during the rollback ends the process at once (the OS
        # drops the lock and SQLite's journal undoes the rest).
        signal.signal(signum, signal.SIG_DFL)
        raise Stopped(signum, signal.Signals(signum).name)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)


def open_kb(ctx: click.Context, reads_notes: bool = False) -> KnowledgeBase:
    """The knowledge base in use; for a command that ``reads_notes``, brought up to date
    with the files first as kb.yaml's ``changed_notes`` says (``catch_up``)."""
    from kb.knowledge_base import KnowledgeBase  # deferred: 32 modules more

    kb = KnowledgeBase.open(ctx.obj.get("kb_dir"))
    warn_settings(kb)
    recovered = kb.finish_interrupted_move()
    if recovered:
        click.echo(f"kb: {recovered}", err=True)
    if reads_notes:
        catch_up(kb)
    return kb


def catch_up(kb: KnowledgeBase) -> None:
    """The files changed since the last ingest, by a stat of each: ingested first
    (``changed_notes: ingest``, and ``auto`` up to 20,000 notes: the app does the same), or
    counted in one line on stderr with what to run (``tell``, or more than CATCH_UP_AT_MOST
    changed); ``off`` does not look. stdout stays the command's own (``--json`` is pure
    JSON)."""
    try:
        changes = kb.changes_since_ingest(as_configured=True)
    except KbError:
        return  # no store yet, or one to upgrade: the command itself says so
    if changes is None or not changes.total:
        return
    counts = ", ".join(
        f"{word} {count}"
        for word, count in zip(("added", "updated", "removed"), changes, strict=True)
        if count
    )
    changed = (
        f"{changes.total} note{'s' if changes.total != 1 else ''} changed since the last "
        f"ingest ({counts})"
    )
    if kb.config.changed_notes != "tell" and changes.total <= CATCH_UP_AT_MOST:
        try:
            stats = kb.ingest(lock_wait=0, embed=False)
        except KbError as exc:  # another ingest holds the lock, a read-only store...
            click.echo(f"kb: {changed}, not ingested ({exc}); run 'kb ingest'", err=True)
            return
        show_problems(stats)
        click.echo(f"kb: {changed}: ingested first", err=True)
        return
    click.echo(f"kb: {changed}; run 'kb ingest' to bring them in", err=True)


# More changed files than this (a git checkout, a synced folder) are left to `kb ingest`,
# with its progress bar, rather than read silently before a search.
CATCH_UP_AT_MOST = 500


def warn_settings(kb: KnowledgeBase) -> None:
    """What kb.yaml asks for that kb did only in part, one line each, on stderr."""
    from kb.text import strip_controls  # deferred: on first use

    for warning in kb.config.warnings:
        click.echo(f"kb: warning: {kb.home / 'kb.yaml'}: {strip_controls(warning)}", err=True)


def use_color() -> bool:
    """Colour when --color=always, never with --color=never; by default on a terminal
    unless NO_COLOR is set."""

    ctx = click.get_current_context(silent=True)
    choice = (ctx.find_root().obj or {}).get("color", "auto") if ctx else "auto"
    if choice != "auto":
        return bool(choice == "always")
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def path_line(path: str) -> str:
    """A file path on one line, safe to print; any ordinary name stays exact (for xargs)."""
    from kb.text import strip_controls  # deferred: on first use

    return strip_controls(path).replace("\n", " ")


def relative_path(file: Path) -> str:
    """A path from the current folder, as kb prints them."""

    return os.path.relpath(file)


def ingest_summary(stats: IngestStats) -> str:
    counts = stats.counts()
    parts = [
        f"{key} {counts[key]}"
        for key in ("added", "updated", "moved", "removed", "unchanged", "warnings")
    ]
    summary = ", ".join(parts) + f" in {stats.seconds:.2f} s"
    if stats.embedded:  # search by meaning (kb/meaning), after the words
        summary += f"; embedded {stats.embedded} for meaning in {stats.embed_seconds:.2f} s"
    return summary


def show_problems(stats: IngestStats) -> None:
    from kb.text import one_line  # deferred: on first use

    for path, problem in stats.problems[:MAX_WARNINGS_SHOWN]:
        where = f"{path}:{problem.line}" if problem.line else path
        click.echo(f"warning: {one_line(where)}: {one_line(problem.message)}", err=True)
    hidden = len(stats.problems) - MAX_WARNINGS_SHOWN
    if hidden > 0:
        click.echo(f"warning: … and {hidden} more", err=True)


class ProgressReporter:
    """A rich progress bar on stderr when it is a terminal; nothing otherwise. An ingest
    reports its phases in turn through one callback (the notes read, then the notes
    embedded for meaning): an update after a bar reached its total starts the next."""

    PHASES = ("ingesting", "embedding for meaning")

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.bar: Any = None
        self.task: Any = None
        self.finished = False
        self.phase = -1

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        from rich.console import Console  # deferred: loads rich

        # deferred: loads rich
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.bar.start()
        return self.update

    def update(self, done: int, total: int) -> None:
        if self.task is None or self.finished:
            if self.task is not None:
                self.bar.remove_task(self.task)
            self.phase = min(self.phase + 1, len(self.PHASES) - 1)
            self.task = self.bar.add_task(self.PHASES[self.phase], total=total)
        self.bar.update(self.task, completed=done, total=total)
        self.finished = done >= total

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def highlight(text: str, spans: list[tuple[int, int]], color: bool, bold: bool = False) -> str:
    """Note text with its matches in colour; the text itself is never interpreted.
    Made safe piece by piece, so the spans still point into the text."""
    from kb.text import strip_controls  # deferred: on first use

    if not color:
        return strip_controls(text)
    out, last = [], 0
    for start, end in spans:
        out.append(click.style(strip_controls(text[last:start]), bold=bold))
        out.append(click.style(strip_controls(text[start:end]), fg="yellow", bold=True))
        last = end
    out.append(click.style(strip_controls(text[last:]), bold=bold))
    return "".join(out)


def check_exists(kb: KnowledgeBase, path: Path) -> None:
    """A missing PATH outside every notes root is a typo: say it does not exist. Inside a
    root it may be a note deleted since the last ingest, which the ingest removes."""

    if os.path.lexists(path):
        return
    resolved = path.resolve()
    if not any(r.path == resolved or r.path in resolved.parents for r in kb.config.roots):
        raise UsageError(f"{path} does not exist")
