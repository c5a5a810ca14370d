"""What changed in the notes roots since the last ingest, by a stat of every file and no
read: what a command that reads notes looks at first (the ``changed_notes`` setting), so
its answer is never silently older than the files."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kb.ingest.walk import collector_paused, scan_root

if TYPE_CHECKING:
    from kb.config import Config
    from kb.store import Store


# `changed_notes: auto` (the default) looks up to this many stored notes: the stat of each
# file costs about a tenth of a second at 10,000 notes and a second at 100,000, on every
# command (docs/configuration.md has the figures).
AUTO_LOOKS_UP_TO = 20_000


class NoteChanges(NamedTuple):
    """Files the next ingest would add, read again and remove."""

    added: int = 0
    updated: int = 0
    removed: int = 0

    @property
    def total(self) -> int:
        return self.added + self.updated + self.removed


def changes_to_catch_up(config: Config, store: Store) -> NoteChanges | None:
    """What changed, when kb.yaml's ``changed_notes`` says to look: None with ``off``, and
    with ``auto`` past AUTO_LOOKS_UP_TO stored notes."""
    if config.changed_notes == "off":
        return None
    if config.changed_notes == "auto" and store.notes.count() > AUTO_LOOKS_UP_TO:
        return None
    return changes_since_ingest(config, store)


def changes_since_ingest(config: Config, store: Store) -> NoteChanges:
    """The notes roots' files compared with the store's stamps (path, size, mtime), as
    ``kb ingest`` compares them, writing nothing. A missing root counts nothing (the
    ingest says why); a folder that cannot be read keeps its notes, as the ingest does."""
    if not all(root.path.is_dir() for root in config.roots):
        return NoteChanges()
    files: dict[str, tuple[int, int]] = {}
    unreadable: list[str] = []
    with collector_paused():
        for root in config.roots:
            found = scan_root(root, config)
            files.update((path, (f.size, f.mtime_ns)) for path, f in found.files.items())
            unreadable.extend(found.unreadable)
        stored = store.notes.stat_stamps()
    added = updated = 0
    for path, (size, mtime_ns) in files.items():
        stamp = stored.get(path)
        if stamp is None:
            added += 1
        elif stamp[1] != size or stamp[2] != mtime_ns:
            updated += 1
    kept = tuple(unreadable)
    removed = sum(1 for path in stored.keys() - files.keys() if not path.startswith(kept))
    return NoteChanges(added, updated, removed)
