"""The commands that write notes: ``kb new``, ``kb edit``, ``kb mv``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kb.cli.complete import complete_note
from kb.cli.output import (
    EXIT_INTERRUPTED,
    Stopped,
    fail,
    open_kb,
    path_line,
    relative_path,
    show_problems,
    stop_on_signals,
)
from kb.errors import KbError, StoreError, UsageError

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase


@click.command()
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

    When a note already has this title, that note is opened instead, and kb says so
    (--force-new makes another). kb prints the note's file from this folder. If the
    editor cannot start, the note is kept and ingested, and kb exits 1.
    """
    from kb.notes.editing import editor_command, start_editor  # deferred: 4 modules more

    kb = open_kb(ctx)
    text = " ".join(title)
    path = None if force_new else _note_titled(kb, text)
    existing = path is not None
    if path is None:
        path = kb.new_note(text, folder)
    failure = None
    if not no_edit:
        try:
            start_editor(editor_command(path))
        except KbError as exc:  # the note is written: keep it, ingest it, say why
            failure = str(exc)
    kb.ingest_file(path)  # the file is kept and ingested, edited or not
    shown = path_line(kb.shown_file(path))  # as every command prints a note's file
    if existing:  # stderr: stdout stays the one path a script reads
        from kb.text import one_line  # deferred: on first use

        done = "nothing made" if no_edit else "opened it"
        click.echo(
            f"kb: a note is already titled {one_line(text)!r}; {done} (--force-new makes another)",
            err=True,
        )
    click.echo(shown)
    if failure:
        fail(ctx, f"{failure}; the note is kept and ingested", 1)


def _meant_destination(kb: KnowledgeBase, new_path: str) -> str | None:
    """``kb mv redis posts/`` typed where ``posts/`` is no folder but ``notes/posts/`` is:
    NEW_PATH read inside a notes root (the path kb prints from outside the knowledge base,
    and the note's path in its root); None when NEW_PATH from here lies in a root already,
    is absolute, or no root holds its folder."""

    typed = Path(new_path).expanduser()
    if typed.is_absolute() or not new_path.strip():
        return None
    here = Path.cwd()
    roots = [root.path for root in kb.config.roots]
    whole = Path(os.path.normpath(here / typed))
    if any(whole == root or root in whole.parents for root in roots):
        return None
    into_folder = new_path.endswith(("/", os.sep))
    for root in roots:
        candidate = Path(os.path.normpath(root / typed))
        if root not in candidate.parents:
            continue  # ../ out of the root again
        as_folder = into_folder or candidate.is_dir()
        if (candidate if as_folder else candidate.parent).is_dir():
            return str(candidate) + ("/" if as_folder else "")
    return None


def _note_titled(kb: KnowledgeBase, title: str) -> Path | None:
    """The file of the note titled ``title`` (any case), if the store holds one; a usage
    error when several are, so kb never opens the wrong one."""
    from kb.notes.editing import notes_titled  # deferred: 4 modules more

    if not kb.config.store_path.exists():
        return None  # nothing ingested yet
    try:
        same = notes_titled(kb.note_choices(), title)
    except StoreError:
        return None  # from an older kb: the ingest after the edit upgrades it
    if len(same) > 1:
        from kb.text import one_line  # deferred: on first use

        listing = "; ".join(one_line(note.path) for note in same)
        raise UsageError(
            f"{len(same)} notes are titled {one_line(title)!r} ({listing}); "
            "open one with its path, or use --force-new"
        )
    return kb.note_page(same[0].id).file if same else None


@click.command()
@click.argument("note", shell_complete=complete_note)
@click.pass_context
def edit(ctx: click.Context, note: str) -> None:
    """Open NOTE in $VISUAL or $EDITOR, then ingest it and say what changed.

    NOTE is named as for 'kb show'. If the editor cannot start, kb says so, ingests the
    note anyway and exits 1.
    """
    from kb.notes.editing import editor_command, start_editor  # deferred: 4 modules more

    kb = open_kb(ctx)
    details = kb.note_details(kb.find_note(note))
    failure = None
    try:
        start_editor(editor_command(details.file))
    except KbError as exc:
        failure = str(exc)
    stats = kb.ingest_file(details.file)
    show_problems(stats)
    counts = stats.counts()
    changed = [key for key in ("added", "updated", "moved", "removed") if counts[key]]
    click.echo(f"{path_line(kb.shown_file(details.file))}: " + (", ".join(changed) or "unchanged"))
    if failure:
        fail(ctx, f"{failure}; the note was ingested as it is", 1)


@click.command()
@click.argument("note", shell_complete=complete_note)
@click.argument("new_path", type=click.Path())
@click.option(
    "--dry-run", is_flag=True, help="List each change as path:line: old → new; change nothing."
)
@click.pass_context
def mv(ctx: click.Context, note: str, new_path: str, dry_run: bool) -> None:
    """Move NOTE to NEW_PATH (a file, or a folder: an existing one or a path ending in /)
    and rewrite every link to it.

    Relative and root-absolute Markdown links, reference definitions, Hugo refs, typed
    front-matter links and wikilinks by file name follow the note, keeping anchors and
    link text; so do the note's own relative links. Only the bytes of each link target
    change. Every file is written or none, even when kb is killed (the next kb command
    finishes or undoes the move); a file saved meanwhile is never overwritten. Then kb
    ingests. Exit codes: 0 moved, 1 could not, 2 NOTE names no note or several, NEW_PATH
    exists, is outside the notes roots or in a folder kb does not read.
    """
    from kb.text import one_line  # deferred: on first use

    kb = open_kb(ctx)
    found = kb.find_note(note)
    # NEW_PATH from this folder, or inside the notes root as kb search and kb links print
    # a note's path there when run from elsewhere: both are taken.
    new_path = _meant_destination(kb, new_path) or new_path
    if dry_run:
        plan = kb.moves.plan(found, new_path)
    else:
        stop_on_signals()  # SIGTERM and SIGHUP put every file back, as Ctrl-C does
        done: list[tuple[Path, Path]] = []
        try:
            plan, stats = kb.moves.move(
                found, new_path, moved=lambda plan: done.append((plan.source, plan.destination))
            )
        except KeyboardInterrupt as exc:
            if not done:
                raise  # every file put back: "nothing was changed"
            # The files moved; only the ingest after it stopped. Say so, truly.
            how = f"stopped by {exc.name}" if isinstance(exc, Stopped) else "interrupted"
            moved = f"{relative_path(done[0][0])} → {relative_path(done[0][1])}"
            click.echo(
                f"kb: moved {one_line(moved)} and rewrote its links, then {how} before the "
                "store caught up: run 'kb ingest'",
                err=True,
            )
            ctx.exit(128 + exc.signum if isinstance(exc, Stopped) else EXIT_INTERRUPTED)
    for edit in plan.edits:
        where = kb.shown_file(edit.source)
        click.echo(f"{one_line(where)}:{edit.line}: {one_line(edit.old)} → {one_line(edit.new)}")
    for link in plan.left:
        click.echo(
            f"kb: {one_line(kb.shown_file(link.source))}:{link.line}: {one_line(link.target)} "
            f"({link.kind}) is left as it is",
            err=True,
        )
    move = f"{one_line(kb.shown_file(plan.source))} → {one_line(kb.shown_file(plan.destination))}"
    if dry_run:
        click.echo(f"would move {move}")
        return
    show_problems(stats)
    files = len(plan.files)
    links = len(plan.edits)
    click.echo(
        f"moved {move}; {links} link{'s' if links != 1 else ''} rewritten in "
        f"{files} file{'s' if files != 1 else ''}"
    )
