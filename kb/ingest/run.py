"""Incremental ingest: compare the notes roots with the store and apply the difference.

Unchanged files cost one ``stat``; changed ones are read, hashed and parsed (in worker
processes when there are many); all of one run's changes are one transaction.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import signal
import stat
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kb.config import Config, NotesRoot
from kb.engines.contract import EngineEntry, IndexWriter
from kb.errors import IngestLocked, KbError, NotesRootError, file_kind
from kb.ingest.documents import document_of
from kb.ingest.walk import (
    SCAN_PROBLEM_KINDS,
    NoteFile,
    ScanResult,
    collector_paused,
    is_note_name,
    note_path,
    scan_root,
)
from kb.models import ParsedNote, Problem
from kb.query.plan import vocabulary_words
from kb.store import FileStamp, NoteRecord, StatStamp, Store, pack_text

if TYPE_CHECKING:
    from kb.links.resolve import NoteName

ProgressCallback = Callable[[int, int], None]
_PARALLEL_FROM = 300  # below this, starting worker processes costs more than it saves
_CHUNK = 16  # files per message to a parse worker
_IN_FLIGHT = 2  # chunks a worker is sent ahead of its answers: it never waits for work
_BATCH = 200
_FULL_LINKS_SHARE = 8  # resolve every link at once when a run wrote over 1/8 of the notes


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
        return data


@dataclass(frozen=True, slots=True)
class LoadJob:
    file: NoteFile
    known_hash: str
    max_size: int
    typed_link_keys: tuple[str, ...]
    with_streams: bool = True


@dataclass(slots=True)
class LoadResult:
    file: NoteFile
    status: str  # parsed | same | skipped | vanished
    hash: str = ""
    size: int = 0
    mtime_ns: int = 0
    record: NoteRecord | None = None
    problems: list[Problem] = field(default_factory=list)


def read_bytes(path: str, max_size: int) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file of at most ``max_size`` bytes (else nothing is read, or at
    most one byte more, so the caller sees it is too large), and its stat."""
    # O_NONBLOCK: opening a FIFO waits for a writer otherwise; the descriptor says what it is.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    with open(fd, "rb") as handle:  # noqa: PTH123 - wraps the descriptor, closes it
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_size:
            return b"", info
        data = handle.read(info.st_size + 1)
        if len(data) > info.st_size:  # it grew since the stat: read on, up to the cap
            data += handle.read(max_size + 1 - len(data))
        return data, info


def load_file(job: LoadJob) -> LoadResult:
    """Read, hash and (if the content changed) parse one file. Never raises for bad input."""
    file = job.file
    if file.kind:  # never opened: opening a device or a FIFO can block or act
        return _not_a_file(file, file.kind, file.size, file.mtime_ns)
    try:
        data, info = read_bytes(file.abs_path, job.max_size)
    except FileNotFoundError:
        return LoadResult(file, "vanished")
    except OSError as exc:
        message = f"cannot read: {exc.strerror or exc}"
        return LoadResult(
            file,
            "skipped",
            size=file.size,
            mtime_ns=file.mtime_ns,
            problems=[Problem("unreadable", message)],
        )
    size, mtime_ns = info.st_size, info.st_mtime_ns
    if not stat.S_ISREG(info.st_mode):  # replaced since the scan
        return _not_a_file(file, file_kind(info.st_mode), size, mtime_ns)
    if size > job.max_size or len(data) > job.max_size:
        size = max(size, len(data))
        message = (
            f"file is {size / 1048576:.1f} MB, over max_file_size "
            f"({job.max_size / 1048576:.1f} MB); skipped"
        )
        return LoadResult(
            file, "skipped", size=size, mtime_ns=mtime_ns, problems=[Problem("too-large", message)]
        )
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    if digest == job.known_hash:
        return LoadResult(file, "same", digest, size, mtime_ns)
    # Imported here: a no-op ingest parses nothing (markdown-it and yaml take ~100 ms).
    from kb.parse.decode import BinaryFile, decode_note
    from kb.parse.note import fallback_note, parse_note

    try:
        decoded = decode_note(data)
    except BinaryFile as exc:
        return LoadResult(
            file, "skipped", digest, size, mtime_ns, problems=[Problem("binary", str(exc))]
        )
    try:
        parsed = parse_note(file.rel, decoded.text, job.typed_link_keys)
    except Exception as exc:
        parsed = fallback_note(file.rel, decoded.text, repr(exc))
    if decoded.warning:
        parsed.problems.insert(0, Problem("encoding", decoded.warning))
    streams = _streams(parsed, file.rel) if job.with_streams else None
    # Compressed here, in the worker: zlib was the main process's largest write cost.
    packed = (pack_text(parsed.text), pack_text(parsed.code))
    record = NoteRecord(
        file.path,
        file.root,
        file.rel,
        digest,
        mtime_ns,
        size,
        decoded.encoding,
        parsed,
        streams,
        packed,
    )
    return LoadResult(file, "parsed", digest, size, mtime_ns, record, list(parsed.problems))


def _not_a_file(file: NoteFile, kind: str, size: int, mtime_ns: int) -> LoadResult:
    problem = Problem("not-a-file", f"{kind}, not a regular file; skipped")
    return LoadResult(file, "skipped", size=size, mtime_ns=mtime_ns, problems=[problem])


def _streams(parsed: ParsedNote, rel: str) -> tuple[str, ...]:
    from kb.query.plan import document_streams

    return document_streams(document_of(parsed, rel))


def _init_worker(parent: int) -> None:
    """Make a parse worker the parent's alone: it stops with it and never outlives it."""
    # Interrupts are the parent's to handle: it rolls the transaction back, then stops us.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    _exit_with_parent(parent)


def _exit_with_parent(parent: int) -> None:
    if sys.platform == "linux":
        import ctypes

        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(1)
            return
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="kb-parent-watch", daemon=True).start()


def run_worker(jobs_fd: int, results_fd: int, parent: int) -> None:
    """A parse worker: chunks of jobs come in on one pipe, their results go out on the
    other, in the order asked, until the parent closes the jobs."""
    import pickle

    _init_worker(parent)
    with open(jobs_fd, "rb") as jobs, open(results_fd, "wb") as results:
        while True:
            try:
                chunk: list[LoadJob] = pickle.load(jobs)
            except EOFError:
                return
            answer: list[LoadResult] | BaseException
            try:
                answer = [load_file(job) for job in chunk]
            except Exception as exc:  # a bug: the parent raises it, as for its own files
                answer = exc
            try:
                data = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
            except Exception as exc:
                data = pickle.dumps(RuntimeError(f"parse worker: {answer!r} ({exc})"))
            results.write(data)
            results.flush()


def load_files(jobs: list[LoadJob]) -> Iterator[LoadResult]:
    """Load in order; in worker processes when there are enough files to pay for them."""
    workers = min(os.cpu_count() or 1, 4)
    if len(jobs) < _PARALLEL_FROM or workers < 2 or not sys.executable:
        yield from map(load_file, jobs)
        return
    chunks = [jobs[i : i + _CHUNK] for i in range(0, len(jobs), _CHUNK)]
    pool = _ParsePool(workers, chunks)
    try:
        for answer in pool.answers():
            yield from answer
    finally:
        pool.stop()  # at the end, or early (an error, Ctrl-C): the workers are not wanted


class _Worker:
    """One parse worker process, the two pipes to it, and the chunks it was sent."""

    def __init__(self) -> None:
        import subprocess

        jobs_r, jobs_w = os.pipe()  # not inheritable: no other worker gets our ends
        results_r, results_w = os.pipe()
        path = [entry for entry in sys.path if isinstance(entry, str)]  # where kb is found
        code = (
            f"import sys; sys.path[:] = {path!r}; from kb.ingest.run import run_worker; "
            f"run_worker({jobs_r}, {results_w}, {os.getpid()})"
        )
        try:
            # Not multiprocessing: it hands its helper process sys.stderr's descriptor,
            # which the app (Textual) does not have, and its children the caller's
            # terminal or pipes. These get /dev/null and a session of their own.
            self.process = subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(jobs_r, results_w),
                start_new_session=True,
            )
        except BaseException:
            for fd in (jobs_w, results_r):
                os.close(fd)
            raise
        finally:
            os.close(jobs_r)
            os.close(results_w)
        self.jobs = open(jobs_w, "wb")  # noqa: PTH123, SIM115 - closed by _feed
        self.results = open(results_r, "rb")  # noqa: PTH123, SIM115 - closed by _read
        self.sent: deque[int] = deque()  # chunks sent and not yet answered, in order

    def died(self) -> str:
        """How it ended, for the user: out of memory is the usual reason."""
        try:
            code = self.process.wait(timeout=5)
        except Exception:
            return "it stopped answering"
        if code < 0:
            with suppress(ValueError):
                return f"killed by {signal.Signals(-code).name}, out of memory?"
            return f"killed by signal {-code}"
        return f"exit status {code}"


class _ParsePool:
    """Worker processes that parse chunks of files; answers come back in chunk order.

    Each worker has a feeding thread (at most _IN_FLIGHT chunks ahead of its answers, so a
    slow chunk holds up one worker only) and a reading thread that always drains its
    answers, so neither side of a pipe ever waits on the other."""

    def __init__(self, size: int, chunks: list[list[LoadJob]]) -> None:
        import threading

        self.chunks = chunks
        self.next_chunk = 0
        self.done: dict[int, list[LoadResult] | BaseException] = {}
        self.failure: str | None = None
        self.stopped = False
        self.changed = threading.Condition()
        self.workers: list[_Worker] = []
        try:
            for _ in range(size):
                self.workers.append(_Worker())
        except OSError as exc:
            self.stop()
            for worker in self.workers:  # no threads of theirs started to close them
                worker.jobs.close()
                worker.results.close()
            raise KbError(f"cannot start a parse worker process: {exc.strerror or exc}") from None
        for number, worker in enumerate(self.workers):
            for target in (self._feed, self._read):
                name = f"kb-parse-{target.__name__[1:]}-{number}"
                threading.Thread(target=target, args=(worker,), name=name, daemon=True).start()

    def answers(self) -> Iterator[list[LoadResult]]:
        for index in range(len(self.chunks)):
            with self.changed:
                while index not in self.done and self.failure is None:
                    self.changed.wait()
                if index not in self.done:
                    raise KbError(
                        f"a parse worker process died ({self.failure}); nothing was changed"
                    )
                answer = self.done.pop(index)
                self.changed.notify_all()
            if isinstance(answer, BaseException):
                raise answer
            yield answer

    def _feed(self, worker: _Worker) -> None:
        import pickle

        try:
            while True:
                with self.changed:
                    while len(worker.sent) >= _IN_FLIGHT and not self.stopped:
                        self.changed.wait()
                    if self.stopped or self.next_chunk == len(self.chunks):
                        return
                    index = self.next_chunk
                    self.next_chunk += 1
                    worker.sent.append(index)
                worker.jobs.write(pickle.dumps(self.chunks[index], pickle.HIGHEST_PROTOCOL))
                worker.jobs.flush()
        except OSError:  # it died: what it was sent is lost
            self._fail(worker)
        finally:
            with suppress(OSError):
                worker.jobs.close()  # its end of the jobs: the worker exits

    def _read(self, worker: _Worker) -> None:
        import pickle

        with worker.results:
            while True:
                try:
                    answer = pickle.load(worker.results)
                except Exception:  # the pipe ended, or ended mid-answer: the worker is gone
                    break
                with self.changed:
                    self.done[worker.sent.popleft()] = answer
                    self.changed.notify_all()
        with self.changed:
            # A worker ends by itself only once every chunk is handed out and answered.
            lost = bool(worker.sent) or self.next_chunk < len(self.chunks)
        if lost:
            self._fail(worker)

    def _fail(self, worker: _Worker) -> None:
        reason = worker.died()
        with self.changed:
            if not self.stopped and self.failure is None:
                self.failure = reason
            self.changed.notify_all()

    def stop(self) -> None:
        """End the workers now: whatever they are still parsing is not wanted."""
        with self.changed:
            self.stopped = True
            self.changed.notify_all()
        for worker in self.workers:
            with suppress(OSError):
                worker.process.kill()
            worker.process.wait()


@contextmanager
def ingest_lock(config: Config, wait_seconds: float | None = None) -> Iterator[None]:
    """One ingest at a time per knowledge base; the OS drops the lock if the process dies."""
    lock_path = config.index_dir / "ingest.lock"
    fd = _open_lock(lock_path)
    wait = config.lock_wait_seconds if wait_seconds is None else wait_seconds
    deadline = time.monotonic() + wait
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                    who = f" (pid {holder})" if holder.isdigit() else ""
                    raise IngestLocked(
                        f"another kb ingest is running{who} on {config.home} "
                        f"(waited {wait:g} s); try again when it has finished"
                    ) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _open_lock(lock_path: Path) -> int:
    """The lock file's descriptor (not inherited by child processes)."""
    try:
        lock_path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise KbError(f"{lock_path.parent} is a file, not a folder: move it away") from None
    except OSError as exc:
        raise KbError(f"cannot create the folder {lock_path.parent}: {exc.strerror}") from None
    try:
        return os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except IsADirectoryError:
        raise KbError(f"{lock_path} is a folder, not a lock file: remove it") from None
    except OSError as exc:
        raise KbError(f"cannot open the ingest lock {lock_path}: {exc.strerror}") from None


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
        from kb.engines.registry import DEFAULT_ENGINE, engine_entry

        self.config = config
        self.store = store
        self.progress = progress
        entry = engine or engine_entry(DEFAULT_ENGINE)
        # With an engine outside the store (whoosh), the tokens of the notes written in
        # this run are kept for it; it commits after the store does.
        self.streams: dict[int, tuple[str, ...]] | None = None if entry.in_store else {}
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
            streams = record.streams or _streams(record.parsed, record.rel)
            self.index.add(note_id, streams)
            self.store.vocabulary.add(vocabulary_words(streams, self.store.vocabulary.written))
            if self.streams is not None:
                self.streams[note_id] = streams
        return ids

    def _add_site_urls(self, batch: list[NoteRecord]) -> None:
        """The URLs the site publishes each note at, kept with its URL aliases."""
        if self.site is None:
            return
        for record in batch:
            file = self.site_links.roots[record.root] / record.rel
            own = record.parsed.url_aliases
            own.extend(url for url in self.site.urls(file, record.parsed) if url not in own)

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
        from kb.store.names import entry_hashes

        names = self.store.notes.names(note_ids)
        for name in names:
            self.old_link_keys.update(name.keys())
        self.old_lookups.update(entry_hashes(names))

    def _resolve_links(self, full: bool) -> None:
        """Point links at their notes again where this run may have changed the answer."""
        if not (self.generation or self.store.links.has_unresolved()):
            return
        cache: dict[int, set[str]] = {}

        def headings(note_id: int) -> set[str]:
            if note_id not in cache:
                cache[note_id] = self.store.notes.heading_slugs(note_id)
            return cache[note_id]

        written = self.store.notes.names(self.written_ids)
        fresh = self.started_empty or (full and self.index_is_empty)
        self.store.names.replace(written, fresh=fresh)
        # Both ways give the same answers; past a share of the notes, one pass over every
        # link in memory is cheaper than looking each link's names up.
        if full or len(self.written_ids) * _FULL_LINKS_SHARE > self.store.notes.count():
            self._resolve_all_links(headings)
        else:
            self._resolve_changed_links(written, headings)

    def _resolve_all_links(self, headings: Callable[[int], set[str]]) -> None:
        from kb.links.resolve import LinkIndex
        from kb.store.names import StoreLinkIndex

        index = LinkIndex.build(
            self.store.notes.names(), self.config.site_url, headings, self.site_links
        )
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
        from kb.links.resolve import _host
        from kb.store.names import StoreLinkIndex, entry_hashes

        keys = set(self.old_link_keys)
        for note in written:
            keys.update(note.keys())
        retry = self.store.names.broken_by(self.old_lookups | entry_hashes(written))
        links = self.store.links.to_resolve(self.written_ids, keys, [*retry, *self.lost_links])
        index = StoreLinkIndex(_host(self.config.site_url), headings, names=self.store.names)
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
        from kb.query.plan import document_streams

        missing = [i for i in self.store.notes.all_ids() if i not in exclude]
        for note_id, document in self.store.notes.search_documents(missing):
            streams = document_streams(document)
            self.index.add(note_id, streams)
            self.store.vocabulary.add(vocabulary_words(streams, self.store.vocabulary.written))

    def _vocabulary_from_store(self) -> None:
        """Fill a new vocabulary (a store from before it existed) from the stored notes."""
        from kb.query.plan import document_streams

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
