"""The kb app: one factory that the CLI and the tests both use."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path

from textual import work
from textual.app import App, SuspendNotSupported
from textual.binding import Binding
from textual.content import Content

from kb.browse import editor_command
from kb.errors import IngestLocked, KbError
from kb.knowledge_base import KnowledgeBase
from kb.tui.commands import NoteCommands
from kb.tui.messages import IngestProgress, NotesChanged, OpenNote
from kb.tui.screens import NoteScreen, SearchScreen, TitleDialog
from kb.tui.widgets import plain

WATCH_SECONDS = 3.0


class KbApp(App[None]):
    """Search as you type, read, follow links, browse tags and series, write notes."""

    TITLE = "kb"
    CSS_PATH = "kb.tcss"
    COMMANDS = App.COMMANDS | {NoteCommands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
        Binding("question_mark", "toggle_help", "Help", id="help"),
    ]

    def __init__(self, kb: KnowledgeBase, watch: bool = True) -> None:
        super().__init__()
        self.kb = kb
        # One SQLite connection, used from worker threads one at a time.
        self.kb_lock = threading.RLock()
        self.watch = watch

    def on_mount(self) -> None:
        self.install_screen(SearchScreen(), "search")
        self.install_screen(NoteScreen(), "note")
        self.push_screen("search")
        if self._store_needs_ingest():
            self.reindex(first=True)
        if self.watch:
            self.set_interval(WATCH_SECONDS, self.reindex, name="watch")

    def _store_needs_ingest(self) -> bool:
        """No store yet, or one from an older kb: the first ingest builds or upgrades it."""
        try:
            with self.kb_lock:
                self.kb.store  # noqa: B018 - opening it checks its version
        except KbError:
            return True
        return False

    # -- opening notes -------------------------------------------------------------------

    def on_open_note(self, message: OpenNote) -> None:
        note_screen = self.get_screen("note")
        if self.screen is not note_screen:
            self.push_screen("note")
        note_screen.show(message.note_id, message.anchor)  # type: ignore[attr-defined]

    # -- keeping up with the notes ----------------------------------------------------------

    @work(thread=True, exclusive=True, group="ingest")
    def reindex(self, first: bool = False, paths: list[Path] | None = None) -> None:
        """Ingest (all notes, or ``paths``); the screens refresh if anything changed."""

        def progress(done: int, total: int) -> None:
            self.post_message(IngestProgress(done, total))

        try:
            with self.kb_lock:
                stats = self.kb.ingest(
                    paths, progress=progress if first else None, lock_wait=0 if not first else None
                )
        except IngestLocked:
            return  # someone else is ingesting; the next tick catches up
        except KbError as exc:
            self.call_from_thread(self.notify, plain(str(exc)), severity="error")
            return
        if stats.changed or first:
            self.call_from_thread(self.refresh_screens)
        if first:
            self.call_from_thread(
                self.notify, Content(f"Indexed {stats.added} notes ({stats.warnings} warnings)")
            )

    def on_ingest_progress(self, message: IngestProgress) -> None:
        if self.screen.id == "search":
            self.screen.query_one("#status").update(  # type: ignore[attr-defined]
                Content(f"indexing {message.done}/{message.total} notes …")
            )

    def refresh_screens(self) -> None:
        for name in ("search", "note"):
            self.get_screen(name).post_message(NotesChanged())

    def action_reindex(self) -> None:
        self.notify("Re-indexing …")
        self.reindex(first=True)

    # -- writing -------------------------------------------------------------------------

    def action_edit(self, path: Path) -> None:
        """Open a note in $EDITOR (the app steps aside), then ingest it and refresh."""
        if self._run_editor(path):
            self.after_edit(path)

    def _run_editor(self, path: Path) -> bool:
        command = editor_command(path)
        try:
            with self.suspend():
                subprocess.run(command, check=False)
        except SuspendNotSupported:
            # Headless (tests, pipes): the editor needs no terminal of ours.
            subprocess.run(command, check=False, stdin=subprocess.DEVNULL)
        except OSError as exc:
            self.notify(plain(f"cannot start the editor {command[0]}: {exc}"), severity="error")
            return False
        return True

    @work(thread=True, exclusive=True, group="ingest")
    def after_edit(self, path: Path, open_it: bool = False) -> None:
        try:
            with self.kb_lock:
                self.kb.ingest_file(path)
                found = self.kb.find_note(str(path)) if open_it else None
        except KbError as exc:
            self.call_from_thread(self.notify, plain(str(exc)), severity="error")
            return
        self.call_from_thread(self.refresh_screens)
        if found is not None:
            self.post_message(OpenNote(found.id))

    def action_new_note(self, title: str = "") -> None:
        if title:
            self._create_note(title)
        else:
            self.push_screen(TitleDialog(), self._create_note)

    def _create_note(self, title: str | None) -> None:
        if not title:
            return
        try:
            path = self.kb.new_note(title)
        except KbError as exc:
            self.notify(plain(str(exc)), severity="error")
            return
        self._run_editor(path)
        self.after_edit(path, open_it=True)  # the file exists either way: show it

    # -- help ----------------------------------------------------------------------------

    def action_toggle_help(self) -> None:
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()


def make_app(kb: KnowledgeBase, watch: bool = True) -> KbApp:
    """The one way to build the app, for `kb` and for the tests."""
    return KbApp(kb, watch=watch)


def run(kb: KnowledgeBase) -> None:
    make_app(kb).run()
