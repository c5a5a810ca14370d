"""Incremental ingest: compare the notes roots with the store and apply the difference.

Unchanged files cost one ``stat``; changed ones are read, hashed and parsed (in worker
processes when there are many); all of one run's changes are one transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from kb.config import Config, NotesRoot
from kb.engines.contract import EngineEntry, IndexWriter
from kb.errors import NotesRootError
from kb.ingest.load import LoadJob, LoadResult, load_files, search_streams
from kb.ingest.spool import StreamSpool
from kb.ingest.walk import (
    SCAN_PROBLEM_KINDS,
    NoteFile,
    ScanResult,
    collector_paused,
    is_note_name,
    note_path,
    scan_root,
)
from kb.models import Problem
from kb.names.resolve import LinkIndex, host_of_url
from kb.store import FileStamp, NoteRecord, StatStamp, Store
from kb.store.names import StoreLinkIndex, entry_hashes
from kb.words.streams import document_streams, vocabulary_words

if TYPE_CHECKING:
    from kb.names.resolve import NoteName

ProgressCallback = Callable[[int, int], None]
_BATCH = 200
_FULL_LINKS_SHARE = 8  # resolve every link at once when a run wrote over 1/8 of the notes
_HEADINGS_CACHED = 4096  # notes whose heading slugs link resolution keeps at hand


@dataclass(slots=True)
class IngestStats:
    added: int = 0
    updated: int = 0
    moved: int = 0
    removed: int = 0
    unchanged: int = 0
    warnings: int = 0
    seconds: float = 0.0
    links_seconds: float = 0.0  # of which resolving links
    embedded: int = 0  # notes embedded for search by meaning, after the words (kb/meaning)
    embed_seconds: float = 0.0
    changes: list[tuple[str, str]] = field(default_factory=list)  # (action, path)
    problems: list[tuple[str, Problem]] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.moved + self.removed

    def counts(self) -> dict[str, int | float]:
        data = asdict(self)
        del data["changes"], data["problems"]
        data["seconds"] = round(self.seconds, 3)
        data["links_seconds"] = round(self.links_seconds, 3)
        data["embed_seconds"] = round(self.embed_seconds, 3)
        return data


@dataclass(slots=True)
class _Scope:
    """One part of a notes root to refresh: the whole root, a folder, or a file."""

    root: NotesRoot
    start: Path
    prefix: str  # note path of start ('' for a whole single root)
    whole_root: bool


class Ingester:
    def __init__(
        self,
        config: Config,
        store: Store,
        progress: ProgressCallback | None = None,
        engine: EngineEntry | None = None,
    ):
        from kb.engines.registry import DEFAULT_ENGINE, engine_entry  # deferred: on first use

        self.config = config
        self.store = store
        self.progress = progress
        entry = engine or engine_entry(DEFAULT_ENGINE)
        # With an engine outside the store (tantivy, whoosh), the tokens of the notes
        # written in this run are kept for it (bounded: kb.ingest.spool); it commits
        # after the store does.
        self.streams: StreamSpool | None = None if entry.in_store else StreamSpool(config.index_dir)
        self.stats = IngestStats()
        self.generation: int | None = None
        self.index: IndexWriter = entry.writer(store)
        self.index_is_empty = False  # then there is nothing in it to delete
        # For link resolution: notes written this run, and the names notes had before.
        self.written_ids: set[int] = set()
        self.unindexed: set[int] = set()  # notes whose old document left the index this run
        # A Hugo, Jekyll or docs site: its URL rules give each note its site addresses.
        from kb.sites import find_site, site_links

        self.site = find_site(config)
        self.site_links = site_links(config, self.site)
        self.old_link_keys: set[str] = set()
        self.old_lookups: set[int] = set()  # their lookup entries (kb.store.names)
        self.lost_links: set[int] = set()  # links to notes this run removes
        self.started_empty = False

    def run(self, targets: Iterable[Path] | None = None, rebuild: bool = False) -> IngestStats:
        started = time.perf_counter()
        self.started_empty = self.store.generation == 0  # nothing was ever written to it
        scopes = self._scopes(targets)
        explicit_rebuild = rebuild
        settings = self.config.settings_signature()
        known = self.store.meta.get("settings")
        if targets is None and known is not None and known != settings:
            # Roots, exclusions, typed-link keys or site_url changed: what every note
            # means may have changed with them, so read everything again.
            rebuild = True
        scanned = ScanResult()
        stored: dict[str, StatStamp] = {}
        with collector_paused():
            for scope in scopes:
                found = scan_root(scope.root, self.config, scope.start)
                if len(scopes) == 1:
                    scanned = found  # not copied: 100,000 entries take 50 ms
                else:
                    scanned.files.update(found.files)
                    scanned.problems.update(found.problems)
                    scanned.unreadable.extend(found.unreadable)
                if not rebuild:
                    in_scope = self._stamps_in(scope)
                    stored = stored | in_scope if stored else in_scope
                self._refuse_to_empty(scope, found, explicit_rebuild)
            if scanned.unreadable:
                # Notes in a folder that cannot be read now are neither removed nor touched.
                unreadable = tuple(scanned.unreadable)
                stored = {p: s for p, s in stored.items() if not p.startswith(unreadable)}
            changed = self._changed(scanned, stored)
        gone = sorted(stored.keys() - scanned.files.keys())
        # Ids and hashes only of stored files that changed or went: most notes are
        # compared by a stat, and new files have none. (A rebuild empties the store.)
        were_stored = [f.path for f in changed if f.path in stored]
        stamps = self.store.notes.file_stamps([*were_stored, *gone])
        jobs = [
            LoadJob(
                file,
                stamps[file.path].hash if file.path in stamps else "",
                self.config.max_file_size,
                self.config.typed_link_keys,
            )
            for file in changed
        ]
        # (A path that left the store since it was listed has nothing left to remove.)
        removed = [p for p in gone if p in stamps and stamps[p].note_id]
        gone_skipped = [p for p in gone if p in stamps and not stamps[p].note_id]
        with self.store.transaction():
            self.index_is_empty = self.index.prepare()
            if self.streams is not None:
                # The index lives outside the store: nothing in the store to delete from or
                # to fill, so old documents are never rebuilt just to be thrown away.
                self.index_is_empty = False
            vocabulary_is_new = self.store.vocabulary.prepare()
            if rebuild:
                self.store.clear()
                self.index.clear()
                self.store.vocabulary.clear()
                self.index_is_empty = True
                self._bump()
            indexed = self._apply(jobs, stamps, removed)
            self._remove(gone_skipped)
            for scope in scopes:  # folder problems found last time may be gone now
                self.store.problems.clear(scope.prefix, SCAN_PROBLEM_KINDS)
            for path, problems in sorted(scanned.problems.items()):
                self.store.problems.replace(path, problems)
                self._warn(path, problems)
            if self.index_is_empty and not rebuild:
                self._index_from_store(exclude=indexed)
            elif vocabulary_is_new and not rebuild:
                self._vocabulary_from_store()
            self.index.mark_synced(self.store.generation)
            links_started = time.perf_counter()
            self._resolve_links(full=rebuild)
            self.stats.links_seconds = time.perf_counter() - links_started
            if targets is None:
                self.store.meta.set("settings", settings)
            # kb stats' "last ingest": this run's own time, not a file's (readers touch -shm).
            self.store.meta.set("last_ingest", datetime.now(UTC).isoformat(timespec="seconds"))
        self.stats.seconds = time.perf_counter() - started
        return self.stats

    # -- planning ---------------------------------------------------------------------

    def _scopes(self, targets: Iterable[Path] | None) -> list[_Scope]:
        if targets is None:
            scopes = []
            for root in self.config.roots:
                if not root.path.is_dir():
                    raise NotesRootError(
                        f"notes root {root.path} does not exist: create it, or fix 'roots' "
                        f"in {self.config.home / 'kb.yaml'}"
                    )
                prefix = f"{root.name}/" if self.config.prefixed else ""
                scopes.append(_Scope(root, root.path, prefix, True))
            return scopes
        return [self._scope_of(Path(t)) for t in targets]

    def _scope_of(self, target: Path) -> _Scope:
        target = target.expanduser()
        try:
            resolved = target.resolve(strict=True)
        except (OSError, RuntimeError):  # missing, dangling or a loop (RuntimeError < 3.13)
            resolved = target.parent.resolve() / target.name
        root = self.config.root_of(resolved)  # the innermost, when roots are nested
        if root is not None and resolved == root.path:
            prefix = f"{root.name}/" if self.config.prefixed else ""
            return _Scope(root, root.path, prefix, True)
        if root is not None:
            rel = resolved.relative_to(root.path).as_posix()
            if resolved.is_dir():
                rel += "/"
            elif resolved.exists() and not is_note_name(resolved.name):
                raise NotesRootError(f"{target} is not a Markdown note (.md or .markdown)")
            return _Scope(root, resolved, note_path(root, rel, self.config), False)
        roots = ", ".join(str(r.path) for r in self.config.roots)
        raise NotesRootError(
            f"{target} is outside every notes root ({roots}); add its folder to 'roots' "
            f"in {self.config.home / 'kb.yaml'}"
        )

    def _stamps_in(self, scope: _Scope) -> dict[str, StatStamp]:
        if scope.prefix and not scope.prefix.endswith("/"):  # one file: by the path index
            return self.store.notes.stat_stamps(scope.prefix, exact=True)
        return self.store.notes.stat_stamps(scope.prefix)

    def _refuse_to_empty(self, scope: _Scope, found: ScanResult, rebuild: bool) -> None:
        if not scope.whole_root or found.files or found.unreadable or rebuild:
            return
        stored = self.store.notes.count(scope.root.name)
        if stored:
            raise NotesRootError(
                f"notes root {scope.root.path} has no notes, but the store holds {stored}; "
                "refusing to remove them all (is a drive unmounted?). "
                "Use 'kb ingest --rebuild' if the notes are really gone"
            )

    def _changed(self, scanned: ScanResult, stored: dict[str, StatStamp]) -> list[NoteFile]:
        """The files whose size or time differs from the store's, by path; counts the
        unchanged notes."""
        changed = []
        unchanged = 0
        for path, file in scanned.files.items():
            stamp = stored.get(path)
            if stamp and stamp[1] == file.size and stamp[2] == file.mtime_ns:
                unchanged += stamp[3]  # a skipped file that is still skipped is no note
            else:
                changed.append(file)
        self.stats.unchanged += unchanged
        changed.sort()
        return changed

    # -- applying -------------------------------------------------------------------

    def _bump(self) -> int:
        if self.generation is None:
            self.generation = self.store.meta.next_generation()
        return self.generation

    def _write(self, batch: list[NoteRecord]) -> list[int]:
        """Write a batch of notes to the store and the index; returns their ids."""
        existing = list(self.store.notes.ids_of(r.path for r in batch).values())
        self._remember_names(existing)
        self._unindex(existing)
        self._add_site_urls(batch)
        ids = self.store.notes.write(batch, self._bump())
        self.written_ids.update(ids)
        for note_id, record in zip(ids, batch, strict=True):
            streams = record.streams or search_streams(record.parsed, record.rel)
            self.index.add(note_id, streams)
            self.store.vocabulary.add(vocabulary_words(streams, self.store.vocabulary.written))
            if self.streams is not None:
                self.streams[note_id] = streams
        return ids

    def _add_site_urls(self, batch: list[NoteRecord]) -> None:
        """The URLs the site publishes each note at, kept with its URL aliases."""
        if self.site is None:
            return
        from kb.sites import site_urls  # loaded with find_site: only a site's ingest needs it

        for record in batch:
            file = self.site_links.roots[record.root] / record.rel
            own = record.parsed.url_aliases
            own.extend(url for url in site_urls(self.site, file, record.parsed) if url not in own)

    def _unindex(self, note_ids: list[int]) -> None:
        """Take stored notes' documents out of an index kept in the store, once each."""
        pending = [i for i in note_ids if i not in self.unindexed]
        self.unindexed.update(pending)
        if pending and not self.index_is_empty and self.streams is None:
            self.index.delete(self.store.notes.search_documents(pending))

    def _remove(self, paths: Iterable[str]) -> int:
        """Remove notes from the index and the store (tombstones record it)."""
        paths = list(paths)
        if not paths:
            return 0
        existing = list(self.store.notes.ids_of(paths).values())
        self._remember_names(existing)
        self.lost_links.update(self.store.links.targeting(existing))
        self._unindex(existing)
        return self.store.notes.remove(paths, self._bump())

    def _remember_names(self, note_ids: list[int]) -> None:
        """Keep the names notes had before this run changes them: links that looked those
        names up must be resolved again."""

        names = self.store.notes.names(note_ids)
        for name in names:
            self.old_link_keys.update(name.keys())
        self.old_lookups.update(entry_hashes(names))

    def _resolve_links(self, full: bool) -> None:
        """Point links at their notes again where this run may have changed the answer."""
        if not (self.generation or self.store.links.has_unresolved()):
            return
        # Bounded: a cache of every linked note's headings grew with the notes (the
        # slow climb of a first ingest's memory while it resolved its links).
        headings = lru_cache(maxsize=_HEADINGS_CACHED)(self.store.notes.heading_slugs)
        written = self.store.notes.names(self.written_ids)
        fresh = self.started_empty or (full and self.index_is_empty)
        self.store.names.replace(written, fresh=fresh)
        # Both ways give the same answers; past a share of the notes, one pass over every
        # link in memory is cheaper than looking each link's names up.
        notes = self.store.notes.count()
        if full or len(self.written_ids) * _FULL_LINKS_SHARE > notes:
            # When every note was written (a first ingest, a rebuild) their names are
            # every note's: not read a second time, not held twice.
            self._resolve_all_links(headings, written if len(written) == notes else None)
        else:
            self._resolve_changed_links(written, headings)

    def _resolve_all_links(
        self, headings: Callable[[int], set[str]], names: list[NoteName] | None
    ) -> None:
        everyone = self.store.notes.names() if names is None else names
        index = LinkIndex.build(everyone, self.config.site_url, headings, self.site_links)
        recording = StoreLinkIndex(index.site_host, headings, built=index)
        recording.site = index.site
        self.store.names.forget_lookups()
        for links in self.store.links.all_to_resolve():
            updates = []
            broken: dict[int, set[int]] = {}
            for link in links:
                found = index.resolve(link)
                if found.status == "broken":  # what it looked up says when to try again
                    found, broken[link.id] = recording.resolve_recording(link)
                updates.append((found.target_id, found.status, found.key, link.id))
            self.store.links.set_targets(updates)
            self.store.names.set_lookups((), broken)

    def _resolve_changed_links(
        self, written: list[NoteName], headings: Callable[[int], set[str]]
    ) -> None:

        keys = set(self.old_link_keys)
        for note in written:
            keys.update(note.keys())
        retry = self.store.names.broken_by(self.old_lookups | entry_hashes(written))
        links = self.store.links.to_resolve(self.written_ids, keys, [*retry, *self.lost_links])
        index = StoreLinkIndex(host_of_url(self.config.site_url), headings, names=self.store.names)
        index.site = self.site_links
        updates = []
        broken: dict[int, set[int]] = {}
        for link in links:
            found, looked_up = index.resolve_recording(link)
            if found.status == "broken":
                broken[link.id] = looked_up
            updates.append((found.target_id, found.status, found.key, link.id))
        self.store.links.set_targets(updates)
        self.store.names.set_lookups([link.id for link in links], broken)

    def _index_from_store(self, exclude: set[int]) -> None:
        """Fill a new (or re-created) index from the notes already in the store."""

        missing = [i for i in self.store.notes.all_ids() if i not in exclude]
        for note_id, document in self.store.notes.search_documents(missing):
            streams = document_streams(document)
            self.index.add(note_id, streams)
            self.store.vocabulary.add(vocabulary_words(streams, self.store.vocabulary.written))

    def _vocabulary_from_store(self) -> None:
        """Fill a new vocabulary (a store from before it existed) from the stored notes."""

        for _, document in self.store.notes.search_documents(self.store.notes.all_ids()):
            vocabulary = self.store.vocabulary
            vocabulary.add(vocabulary_words(document_streams(document), vocabulary.written))

    def _apply(
        self, jobs: list[LoadJob], stamps: dict[str, FileStamp], removed: list[str]
    ) -> set[int]:
        indexed: set[int] = set()
        removed_set = set(removed)
        removed_by_hash: dict[str, list[str]] = {}
        for path in removed:
            removed_by_hash.setdefault(stamps[path].hash, []).append(path)
        batch: list[NoteRecord] = []
        total = len(jobs)
        for done, result in enumerate(load_files(jobs), start=1):
            self._apply_one(result, stamps, removed_set, removed_by_hash, batch)
            if len(batch) >= _BATCH:
                indexed.update(self._write(batch))
                batch.clear()
            if self.progress:
                self.progress(done, total)
        if batch:
            indexed.update(self._write(batch))
        if removed_set:
            self.stats.removed += self._remove(sorted(removed_set))
            self.stats.changes.extend(("removed", p) for p in sorted(removed_set))
        return indexed

    def _apply_one(
        self,
        result: LoadResult,
        stamps: dict[str, FileStamp],
        removed: set[str],
        removed_by_hash: dict[str, list[str]],
        batch: list[NoteRecord],
    ) -> None:
        path = result.file.path
        stamp = stamps.get(path)
        was_note = bool(stamp and stamp.note_id)
        if result.status == "vanished":
            if was_note:
                removed.add(path)
        elif result.status == "skipped":
            if was_note:
                removed.discard(path)
                self.stats.removed += self._remove([path])
                self.stats.changes.append(("removed", path))
            self.store.notes.mark_skipped(path, result.size, result.mtime_ns, result.problems)
            self._warn(path, result.problems)
        elif result.status == "same":
            self.store.notes.touch(path, result.size, result.mtime_ns)
            self.stats.unchanged += 1
        else:
            assert result.record is not None
            self._warn(path, result.problems)
            moved_from = None if was_note else self._take_moved(result.hash, removed_by_hash)
            if moved_from is not None:
                removed.discard(moved_from)
                file = result.file
                self._remember_names([stamps[moved_from].note_id or 0])
                # The path is searched too: take the note out of the index under its old
                # path before the store forgets it.
                self._unindex([stamps[moved_from].note_id or 0])
                self.store.notes.move(
                    stamps[moved_from].note_id or 0,
                    path,
                    file.root,
                    file.rel,
                    result.size,
                    result.mtime_ns,
                    self._bump(),
                )
                self.stats.moved += 1
                self.stats.changes.append(("moved", f"{moved_from} -> {path}"))
            elif was_note:
                self.stats.updated += 1
                self.stats.changes.append(("updated", path))
            else:
                self.stats.added += 1
                self.stats.changes.append(("added", path))
            batch.append(result.record)

    @staticmethod
    def _take_moved(digest: str, removed_by_hash: dict[str, list[str]]) -> str | None:
        candidates = removed_by_hash.get(digest)
        return candidates.pop(0) if candidates else None

    def _warn(self, path: str, problems: list[Problem]) -> None:
        self.stats.warnings += len(problems)
        self.stats.problems.extend((path, p) for p in problems)
