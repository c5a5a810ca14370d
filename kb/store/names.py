"""The names notes go by, as hashed lookup keys in the store, and a link index over them.

Resolving the links an edit touches must not load every note's names (at 100,000 notes
that alone took a second). ``name_keys`` holds, for each note, the key of every entry
``LinkIndex.build`` would make for it; ``StoreLinkIndex`` is a ``LinkIndex`` whose
tables fill themselves from those keys as resolution asks, so it answers exactly as the
index built over every note would. What a broken link looked up is kept in
``link_lookups``: it is resolved again only when a note that answers one of those
lookups is written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from kb.names.resolve import LinkIndex, NoteName, fold, path_key, site_path
from kb.store.links import key_hash

# LinkIndex tables that keep one note per key (the first by path); the others keep a list.
_SINGLE = frozenset({"by_rel", "by_rel_folded", "by_url"})
_TABLES = ("by_rel", "by_rel_folded", "by_stem", "by_title", "by_alias", "by_url", "by_slug")
_SUFFIX = "suffix"  # _path_suffix_matches: a wikilink with a folder in it


def lookup_entries(note: NoteName) -> set[tuple[str, Hashable]]:
    """The (table, key) entries ``LinkIndex.build`` makes for ``note``, and the path
    suffixes ``_path_suffix_matches`` compares (tested against ``build`` itself)."""
    entries: set[tuple[str, Hashable]] = {
        ("by_rel", (note.root, note.rel)),
        ("by_rel_folded", (note.root, note.rel.lower())),
        ("by_stem", fold(note.stem)),
        ("by_title", fold(note.title)),
    }
    entries.update(("by_alias", fold(alias)) for alias in note.aliases)
    entries.update(("by_url", site_path(url)) for url in note.url_aliases)
    if note.slug:
        entries.add(("by_slug", fold(note.slug)))
    parts = fold(path_key(note.rel)).split("/")
    entries.update((_SUFFIX, (note.root, "/".join(parts[i:]))) for i in range(len(parts) - 1))
    return entries


def entry_hash(table: str, key: Hashable) -> int:
    text = "\0".join(key) if isinstance(key, tuple) else str(key)
    return key_hash(f"{table}\0{text}")


def entry_hashes(notes: Iterable[NoteName]) -> set[int]:
    return {entry_hash(table, key) for note in notes for table, key in lookup_entries(note)}


class NameKeyDao:
    """Writes and reads of ``name_keys`` and ``link_lookups``."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def replace(self, notes: Iterable[NoteName], fresh: bool = False) -> None:
        """Enter notes (just written or moved) under their entries instead of their old
        ones (``fresh``: a new store, where they have none yet)."""
        notes = list(notes)
        if not fresh:
            self.conn.executemany(
                "DELETE FROM name_keys WHERE note_id = ?", [(note.id,) for note in notes]
            )
        self.conn.executemany(
            "INSERT OR IGNORE INTO name_keys(key, note_id) VALUES (?, ?)",
            [(key, note.id) for note in notes for key in entry_hashes([note])],
        )

    def forget_lookups(self) -> None:
        """Before every link is resolved again."""
        self.conn.execute("DELETE FROM link_lookups")

    def note_ids(self, key: int) -> list[int]:
        return [row[0] for row in self.conn.execute(
            "SELECT note_id FROM name_keys WHERE key = ?", (key,)
        )]  # fmt: skip

    def names(self, note_ids: list[int]) -> list[NoteName]:
        """The names of a few notes, by their ids."""
        if not note_ids:
            return []
        marks = ",".join("?" * len(note_ids))
        rows = self.conn.execute(
            f"SELECT id, root, rel, title, slug FROM notes WHERE id IN ({marks})", note_ids
        ).fetchall()
        aliases: dict[int, tuple[list[str], list[str]]] = {}
        for note_id, alias, kind in self.conn.execute(
            f"SELECT note_id, alias, kind FROM aliases WHERE note_id IN ({marks}) ORDER BY rowid",
            note_ids,
        ):
            aliases.setdefault(note_id, ([], []))[0 if kind == "name" else 1].append(alias)
        return [NoteName(*row, *(tuple(a) for a in aliases.get(row[0], ([], [])))) for row in rows]

    def broken_by(self, keys: Iterable[int]) -> list[int]:
        """Broken links that looked up any of ``keys``."""
        found: set[int] = set()
        for key in set(keys):
            found.update(
                row[0]
                for row in self.conn.execute(
                    "SELECT link_id FROM link_lookups WHERE key = ?", (key,)
                )
            )
        return sorted(found)

    def set_lookups(self, resolved: Iterable[int], broken: dict[int, set[int]]) -> None:
        """Forget what re-resolved links looked up; remember it for the broken ones."""
        self.conn.executemany(
            "DELETE FROM link_lookups WHERE link_id = ?", [(link,) for link in resolved]
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO link_lookups(link_id, key) VALUES (?, ?)",
            [(link, key) for link, keys in broken.items() for key in keys],
        )


class _Table(dict[Any, Any]):
    """One LinkIndex table: records each key looked up (for broken links) and, when the
    index is backed by the store, fills the key from it the first time it is asked."""

    def __init__(self, name: str, index: StoreLinkIndex, data: dict[Any, Any] | None = None):
        super().__init__(data or {})
        self.name = name
        self.index = index
        self.filled: set[Hashable] = set()

    def _ask(self, key: Hashable) -> None:
        if self.index.looked_up is not None:
            self.index.looked_up.add(entry_hash(self.name, key))
        if self.index.fill is not None and key not in self.filled:
            self.filled.add(key)
            value = self.index.fill(self.name, key)
            if value:
                super().__setitem__(key, value)

    def get(self, key: Hashable, default: Any = None) -> Any:
        self._ask(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self._ask(key)
        return super().__contains__(key)

    def __getitem__(self, key: Hashable) -> Any:
        self._ask(key)
        return super().__getitem__(key)


class _Notes(dict[int, NoteName]):
    """``LinkIndex.notes`` filled by id from the store."""

    def __init__(self, load: Callable[[list[int]], list[NoteName]]) -> None:
        super().__init__()
        self.load = load

    def add(self, ids: Iterable[int]) -> None:
        missing = [i for i in dict.fromkeys(ids) if not dict.__contains__(self, i)]
        for note in self.load(missing):
            super().__setitem__(note.id, note)

    def get(self, key: int, default: Any = None) -> Any:
        self.add([key])
        return super().get(key, default)

    def __getitem__(self, key: int) -> NoteName:
        self.add([key])
        return super().__getitem__(key)

    def values(self) -> Any:  # only _path_suffix_matches iterates, and it is overridden
        raise NotImplementedError


class StoreLinkIndex(LinkIndex):
    """A LinkIndex that records what each resolution looked up and, built with ``over``
    (the store's names), loads only the names a resolution asks for."""

    def __init__(
        self,
        site_host: str = "",
        headings: Callable[[int], set[str]] | None = None,
        names: NameKeyDao | None = None,
        built: LinkIndex | None = None,
    ) -> None:
        super().__init__(site_host, headings)
        self.looked_up: set[int] | None = None
        self.names = names
        self.fill: Callable[[str, Hashable], Any] | None = None
        if names is not None:
            self.notes = _Notes(names.names)
            self.fill = self._fill
        elif built is not None:
            self.notes = built.notes
        for table in _TABLES:
            data = getattr(built, table) if built is not None else None
            setattr(self, table, _Table(table, self, data))
        self.suffixes = _Table(_SUFFIX, self)
        self.built = built

    def _fill(self, table: str, key: Hashable) -> Any:
        assert self.names is not None and isinstance(self.notes, _Notes)
        ids = self.names.note_ids(entry_hash(table, key))
        if not ids:
            return None
        self.notes.add(ids)
        matching = sorted(
            (note for note in map(self.notes.get, ids) if note is not None
             and (table, key) in lookup_entries(note)),
            key=lambda n: (n.rel, n.id),
        )  # fmt: skip
        if not matching:
            return None  # only another key's hash collided
        if table in _SINGLE:
            return matching[0].id
        if table == _SUFFIX:
            return [note.id for note in matching]
        return [note.id for note in matching for _ in range(_times(table, key, note))]

    def _path_suffix_matches(self, root: str, wanted: str) -> list[int]:
        found = self.suffixes.get((root, wanted))
        if found is not None or self.built is None:
            return list(found or [])
        return self.built._path_suffix_matches(root, wanted)

    def resolve_recording(self, link: Any) -> tuple[Any, set[int]]:
        """The resolution of ``link`` and the hashes of the entries it looked up."""
        self.looked_up = set()
        try:
            return self.resolve(link), self.looked_up
        finally:
            self.looked_up = None


def _times(table: str, key: Hashable, note: NoteName) -> int:
    """How often ``build`` lists the note under the key (aliases may repeat)."""
    if table == "by_alias":
        return sum(1 for alias in note.aliases if fold(alias) == key) or 1
    return 1
