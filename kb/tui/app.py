"""The kb app: one factory that the CLI and the tests both use."""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App, SuspendNotSupported
from textual.binding import Binding
from textual.command import CommandPalette, Provider
from textual.content import Content
from textual.widgets import Input, Static

from kb.errors import IngestLocked, KbError
from kb.knowledge_base import KnowledgeBase
from kb.notes.editing import editor_command, start_editor
from kb.text import strip_controls
from kb.tui import wrapping
from kb.tui.messages import IngestProgress, ListTerm, NotesChanged, OpenNote
from kb.tui.widgets import plural

if TYPE_CHECKING:
    from kb.tui.commands import PaletteNotes

WATCH_SECONDS = 3.0  # the stat walk's period, where file notifications are not available
WATCH_DEBOUNCE_MS = 400  # a burst of notifications (an editor's save) is one re-ingest
PROGRESS_FROM = 100  # files; a refresh of fewer is over before its count could be read

# The screens and the palette name KbApp only for their typed ``app`` (TYPE_CHECKING);
# the app imports them when it first needs them, which keeps the first screen quick.


def _note_commands() -> type[Provider]:
    from kb.tui.commands import NoteCommands  # deferred: on first use

    return NoteCommands


class KbApp(App[None]):
    """Search as you type, read, follow links, browse tags and series, write notes."""

    TITLE = "kb"
    CSS_PATH = "kb.tcss"
    COMMANDS = App.COMMANDS | {_note_commands}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True),
        Binding("f1", "help", "Help", id="help"),
        Binding("question_mark", "help", "Help", show=False, id="help-key"),
    ]

    def __init__(
        self,
        kb: KnowledgeBase,
        watch: bool = True,
        note_id: int | None = None,
        query: str = "",
    ) -> None:
        super().__init__()
        self.kb = kb
        # Where `kb open` starts: on a note, or on the search screen with a query typed.
        self.start_note = note_id
        self.start_query = query
        self.watch_files = watch  # re-ingest when the notes change on disk
        self.watching = ""  # how: "notifications" (watchfiles), else "polling"
        self._stop_watching = threading.Event()
        # One ingest at a time from this app: an edit waits for a running refresh rather
        # than fail on the core's ingest lock. Reads never take it.
        self._one_ingest = threading.Lock()
        # Search by meaning embeds in its own worker after an ingest; an ingest that comes
        # meanwhile asks it to stop after its batch (each batch is committed) and goes first.
        self._embedding = threading.Lock()
        self._stop_embedding = threading.Event()
        # The command palette's notes, with the store generation they were read at.
        self.palette_notes: tuple[int, PaletteNotes] | None = None

    def on_mount(self) -> None:
        from kb.tui.note_screen import NoteScreen  # deferred: loads pygments, textual
        from kb.tui.search_screen import SearchScreen  # deferred: loads pygments, textual

        self.install_screen(SearchScreen(), "search")
        self.install_screen(NoteScreen(), "note")
        self.push_screen("search")
        if self.start_note is not None:
            self.post_message(OpenNote(self.start_note))
        elif self.start_query:
            self.call_after_refresh(self._type_query, self.start_query)
        self.start_up()
        if self.watch_files:
            self.watch_notes()

    def on_unmount(self) -> None:
        self._stop_watching.set()

    @work(thread=True, exclusive=True, group="ingest")
    def start_up(self) -> None:
        """No store yet, or one from an older kb: the first ingest builds or upgrades it."""
        try:
            self.kb.check_ready()
        except KbError:
            self._ingest(first=True)

    @work(thread=True, exclusive=True, group="watch")
    def watch_notes(self) -> None:
        """Re-ingest when the notes change on disk, told by the system (watchfiles: inotify,
        FSEvents), so an idle app does nothing. Where it cannot watch (no watchfiles, too
        many folders for inotify, a file system without notifications) a stat walk every
        WATCH_SECONDS takes over."""
        store = self.kb.config.store_path.parent
        roots = [root.path for root in self.kb.config.roots if root.path.is_dir()]
        try:
            from watchfiles import Change, DefaultFilter, watch  # deferred: loads anyio, watchfiles

            editor_files = DefaultFilter()  # swap files, .git and the like

            def note_change(change: Change, path: str) -> bool:
                # Not the store's own writes, or a store inside a notes root would loop.
                return editor_files(change, path) and not Path(path).is_relative_to(store)

            self.watching = "notifications"
            for changes in watch(
                *roots,
                watch_filter=note_change,
                debounce=WATCH_DEBOUNCE_MS,
                stop_event=self._stop_watching,
                raise_interrupt=False,
            ):
                changed = sorted({Path(path) for _, path in changes})
                self.call_from_thread(self.reindex, False, changed)
        except (ImportError, OSError, RuntimeError):
            if not self._stop_watching.is_set():
                self.call_from_thread(self._poll)

    def _poll(self) -> None:
        self.watching = "polling"
        self.set_interval(WATCH_SECONDS, self.reindex, name="watch")

    def _type_query(self, text: str) -> None:

        self.get_screen("search").query_one("#query", Input).value = text

    # -- opening notes -------------------------------------------------------------------

    def on_open_note(self, message: OpenNote) -> None:
        from kb.tui.note_screen import NoteScreen  # deferred: loads pygments, textual

        note_screen = self.get_screen("note", NoteScreen)
        if self.screen is not note_screen:
            self.push_screen("note")
        note_screen.show(message.note_id, message.anchor)

    def on_list_term(self, message: ListTerm) -> None:
        from kb.tui.search_screen import SearchScreen  # deferred: loads pygments, textual

        search = self.get_screen("search", SearchScreen)
        while self.screen is not search and len(self.screen_stack) > 1:
            self.pop_screen()
        search.list_term(message.kind, message.name)

    # -- keeping up with the notes ----------------------------------------------------------

    @work(thread=True, exclusive=True, group="ingest")
    def reindex(self, first: bool = False, paths: list[Path] | None = None) -> None:
        """Ingest every note, or only ``paths`` (notes the system said changed); the
        screens refresh if anything changed."""
        self._ingest(first, paths)

    def _ingest(self, first: bool, paths: list[Path] | None = None) -> None:
        """In a worker. ``first``: after any ingest of ours still running; else (the watch
        timer) a tick that finds an ingest running leaves it to the next. Named notes wait
        for a running ingest: that one may have passed them already. A first ingest, and
        any of PROGRESS_FROM files or more (a checkout, a renamed folder), counts its
        progress in the status line."""
        counted = False

        def progress(done: int, total: int) -> None:
            nonlocal counted
            if first or total >= PROGRESS_FROM:
                counted = True
                self.post_message(IngestProgress(done, total))

        if not self._one_ingest.acquire(blocking=first or bool(paths)):
            return
        try:
            self._pause_embedding()
            if paths:
                stats = self.kb.ingest_changed(paths, lock_wait=0, progress=progress, embed=False)
            else:
                stats = self.kb.ingest(
                    progress=progress, lock_wait=None if first else 0, embed=False
                )
        except IngestLocked:
            return  # another process is ingesting; the next tick catches up
        except KbError as exc:
            self._tell_error(exc)
            return
        finally:
            self._one_ingest.release()
            if counted:  # the status line says what the screen shows again
                self.call_from_thread(self.refresh_screens)
        if (stats.changed or first) and not counted:
            self.call_from_thread(self.refresh_screens)
        self.call_from_thread(self.embed_notes)
        if first:
            self.call_from_thread(
                self.notify,
                f"Indexed {plural(stats.added, 'note')} ({plural(stats.warnings, 'warning')})",
                markup=False,
            )

    def _pause_embedding(self) -> None:
        """In a worker, before an ingest: a running embedding ends after its batch."""
        self._stop_embedding.set()
        with self._embedding:
            pass

    @work(thread=True, exclusive=True, group="embed")
    def embed_notes(self) -> None:
        """Embed the notes that changed for search by meaning (kb/meaning), after the
        words are in: the search works meanwhile, and finds more by meaning once done."""
        if self.kb.by_meaning.configured() is None:
            return
        with self._embedding:
            self._stop_embedding.clear()

            def progress(done: int, total: int) -> None:
                if total >= PROGRESS_FROM:
                    self.post_message(IngestProgress(done, total, "embedding for meaning"))

            try:
                stats = self.kb.embed(progress, stop=self._stop_embedding.is_set)
            except IngestLocked:
                return  # another process is ingesting: it embeds too
            except KbError as exc:
                self._tell_error(exc)
                return
        if stats.embedded:
            self.call_from_thread(self.refresh_screens)
        for where, problem in stats.problems:
            self.call_from_thread(
                self.notify,
                strip_controls(f"{Path(where).name}: {problem.message}"),
                severity="warning",
                markup=False,
            )

    def _tell_error(self, error: KbError) -> None:
        """From a worker: show a core error (it may quote note text, never markup)."""
        self.call_from_thread(
            self.notify, strip_controls(str(error)), severity="error", markup=False
        )

    def on_ingest_progress(self, message: IngestProgress) -> None:
        if self.screen.id == "search":
            self.screen.query_one("#status", Static).update(
                Content(f"{message.doing} {message.done}/{message.total} notes …")
            )

    def refresh_screens(self) -> None:
        for name in ("search", "note"):
            self.get_screen(name).post_message(NotesChanged())

    def action_reindex(self) -> None:
        self.notify("Re-indexing …")
        self.reindex(first=True)

    @work(thread=True, group="open")
    def open_file(self, path: Path) -> None:
        """Open a file (a note's image) with the system's viewer, as `click.launch` does
        (xdg-open, open, start): only ever on the user's request."""
        import click  # deferred: loads click

        name = strip_controls(path.name)
        if click.launch(str(path)) == 0:
            self.call_from_thread(self.notify, f"Opening {name}", markup=False)
        else:
            self.call_from_thread(
                self.notify,
                f"No viewer could open {name} (xdg-open, open or start)",
                severity="error",
                markup=False,
            )

    # -- writing -------------------------------------------------------------------------

    def action_edit(self, path: Path) -> None:
        """Open a note in $EDITOR (the app steps aside), then ingest it and refresh."""
        if self._run_editor(path):
            self.after_edit(path)

    def _run_editor(self, path: Path) -> bool:
        """Whether the editor ran; if not (it cannot be parsed or started) a notification
        says why, and a note just written stays."""
        try:
            command = editor_command(path)
            failure: KbError | None = None
            try:
                with self.suspend():
                    # Caught inside: Textual resumes the app only when the block ends
                    # normally, and an editor that fails to start left a blank screen.
                    try:
                        start_editor(command)
                    except KbError as exc:
                        failure = exc
            except SuspendNotSupported:
                # Headless (tests, pipes): the editor needs no terminal of ours.
                start_editor(command, stdin=subprocess.DEVNULL)
            if failure is not None:
                raise failure
        except KbError as exc:
            self.notify(strip_controls(str(exc)), severity="error", markup=False)
            return False
        return True

    @work(thread=True, exclusive=True, group="ingest")
    def after_edit(self, path: Path, open_it: bool = False) -> None:
        try:
            with self._one_ingest:
                self._pause_embedding()
                self.kb.ingest([path], embed=False)
            found = self.kb.find_note(str(path)) if open_it else None
        except KbError as exc:
            self._tell_error(exc)
            return
        self.call_from_thread(self.refresh_screens)
        self.call_from_thread(self.embed_notes)
        if found is not None:
            self.post_message(OpenNote(found.id))

    def action_new_note(self, title: str = "") -> None:
        from kb.tui.dialogs import TitleDialog  # deferred: on first use

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
            self.notify(strip_controls(str(exc)), severity="error", markup=False)
            return
        self._run_editor(path)
        self.after_edit(path, open_it=True)  # the file exists either way: show it

    # -- help ----------------------------------------------------------------------------

    def action_command_palette(self) -> None:
        """Textual's palette, saying what typing in it does: opening a note."""

        from kb.tui.commands import PLACEHOLDER  # deferred: on first use

        opened = any(isinstance(screen, CommandPalette) for screen in self.screen_stack)
        if self.use_command_palette and not opened:
            self.push_screen(CommandPalette(placeholder=PLACEHOLDER, id="--command-palette"))

    def action_help(self) -> None:
        """Help for the screen on top: its keys, and the query language on the search."""
        from kb.tui.help import HelpScreen, key_rows  # deferred: on first use

        screen = self.screen
        if isinstance(screen, HelpScreen):
            screen.dismiss()
            return
        title = {"search": "Search", "note": "Reading a note"}.get(screen.id or "", "kb")
        self.push_screen(HelpScreen(title, key_rows(screen), screen.id == "search"))


def make_app(
    kb: KnowledgeBase, watch: bool = True, note_id: int | None = None, query: str = ""
) -> KbApp:
    """The one way to build the app, for `kb`, `kb open` and the tests."""

    wrapping.install()
    return KbApp(kb, watch=watch, note_id=note_id, query=query)


def run(kb: KnowledgeBase, note_id: int | None = None, query: str = "") -> None:
    app = make_app(kb, note_id=note_id, query=query)
    app.run()
    if app.return_code:  # it crashed (Textual printed why): not a success for the shell
        raise SystemExit(app.return_code)
