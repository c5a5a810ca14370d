"""``kb mv`` as the facade offers it, its part ``moves``: what a move would change
(``plan``), and the move itself (``move``) under kb's locks, between two ingests.

The plan is ``kb.links.moving``'s, the writing ``kb.links.move_transaction``'s; this part
holds them together for every face that moves a note (kb mv, the editor server's rename,
the assistant server's move). Finishing a move a kill interrupted stays on the facade
(``finish_interrupted_move``): every command asks it, and a stat must answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kb.errors import KbError

if TYPE_CHECKING:
    from kb.config import Config
    from kb.ingest.run import IngestStats
    from kb.links.moving import MovePlan
    from kb.notes.naming import NoteRef
    from kb.store import Store


class Moves:
    """Moving notes; ``store`` is this thread's reader, ``ingest`` the facade's own."""

    def __init__(
        self, config: Config, store: Callable[[], Store], ingest: Callable[[], IngestStats]
    ) -> None:
        self._config = config
        self._store = store
        self._ingest = ingest

    def plan(self, note: NoteRef, new_path: str) -> MovePlan:
        """What moving ``note`` to ``new_path`` changes: the new bytes of every file that
        links to it (and of the note, for its own relative links), and the links left as
        they are. Reads the store and the files; writes nothing."""
        from kb.links.moving import plan_move  # deferred: on first use

        return plan_move(self._store(), self._config, note, new_path)

    def move(
        self,
        note: NoteRef,
        new_path: str,
        check: Callable[[MovePlan], None] | None = None,
        moved: Callable[[MovePlan], None] | None = None,
    ) -> tuple[MovePlan, IngestStats]:
        """Move ``note`` to ``new_path`` and rewrite every link to it, as one transaction
        (``kb.links.move_transaction``), then ingest. The store is brought up to date first, so
        the plan reads the links as the files hold them; every file the move writes is
        under kb's write lock (``kb.notes.note_lock``) while it is written, after
        ``check`` (if given) has seen the plan. ``moved`` is told the plan as soon as the
        files are moved, before the last ingest (which Ctrl-C may stop)."""
        # deferred: 5 modules more
        from kb.links.move_transaction import FileChange, move_lock, run_move
        from kb.notes.note_lock import note_locks  # deferred: on first use

        with move_lock(self._config.index_dir):
            self._ingest()
            note = self._same_note(note)
            plan = self.plan(note, new_path)
            changes = [FileChange(f.path, f.before, f.after) for f in plan.files]
            written = [plan.source, plan.destination, *(f.path for f in plan.files)]
            with note_locks(self._config.index_dir, written):
                if check is not None:
                    check(plan)
                run_move(self._config.move_journal, plan.source, plan.destination, changes)
            if moved is not None:
                moved(plan)
        return plan, self._ingest()

    def _same_note(self, note: NoteRef) -> NoteRef:
        """``note`` as the store holds it now: an ingest that started over (the knowledge
        base moved to another folder, a setting changed) gives every note a new id."""
        from kb.notes.naming import note_ref  # deferred: 2 modules more

        store = self._store()
        row = store.notes.by_id(note.id)
        if row is not None and row.path == note.path:
            return note
        found = store.notes.by_path(note.path) if note.path else None
        if found is None:
            raise KbError(f"{note.path} is no longer in the store; run 'kb ingest'")
        return note_ref(store, found.id)
