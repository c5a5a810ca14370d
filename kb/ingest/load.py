"""Reading note files into parsed records: one file (load_file), or many in parse worker
processes that never touch the caller's terminal (load_files).
"""

from __future__ import annotations

import hashlib
import os
import signal
import stat
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kb.errors import KbError, file_kind
from kb.ingest.walk import (
    NoteFile,
)
from kb.models import ParsedNote, Problem
from kb.store import NoteRecord, pack_text
from kb.words.documents import document_of

if TYPE_CHECKING:
    pass


_PARALLEL_FROM = 300  # below this, starting worker processes costs more than it saves


_CHUNK = 16  # files per message to a parse worker


_IN_FLIGHT = 2  # chunks a worker is sent ahead of its answers: it never waits for work

# Chunks handed out and not yet taken by the writer, per worker: past this a worker waits
# for the writer (back-pressure). Without it a writer slower than the workers (a busy
# machine) let their parsed notes pile up: 976 MB at 100,000 notes under load, 346 quiet.
_AHEAD_PER_WORKER = 4


# What reading a file came to: parsed anew, the same bytes as stored, skipped with a
# problem (too large, binary, unreadable), or gone since the walk saw it.
LoadStatus = Literal["parsed", "same", "skipped", "vanished"]


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
    status: LoadStatus
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

    # deferred: loads linkify_it, markdown_it, yaml
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
    streams = search_streams(parsed, file.rel) if job.with_streams else None
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


def search_streams(parsed: ParsedNote, rel: str) -> tuple[str, ...]:
    from kb.words.streams import document_streams  # deferred: 1 module more

    return document_streams(document_of(parsed, rel))


def _init_worker(parent: int) -> None:
    """Make a parse worker the parent's alone: it stops with it and never outlives it."""
    # Interrupts are the parent's to handle: it rolls the transaction back, then stops us.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    _exit_with_parent(parent)


def _exit_with_parent(parent: int) -> None:
    if sys.platform == "linux":
        import ctypes  # deferred: 5 modules more

        pr_set_pdeathsig = 1
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0:
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(1)
            return
    import threading  # deferred: on first use

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="kb-parent-watch", daemon=True).start()


def run_worker(jobs_fd: int, results_fd: int, parent: int) -> None:
    """A parse worker: chunks of jobs come in on one pipe, their results go out on the
    other, in the order asked, until the parent closes the jobs."""
    import pickle  # deferred: 5 modules more

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
        import subprocess  # deferred: 8 modules more

        jobs_r, jobs_w = os.pipe()  # not inheritable: no other worker gets our ends
        results_r, results_w = os.pipe()
        path = [entry for entry in sys.path if isinstance(entry, str)]  # where kb is found
        code = (
            f"import sys; sys.path[:] = {path!r}; from kb.ingest.load import run_worker; "
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
    answers, so neither side of a pipe ever waits on the other. No chunk is handed out
    more than ``ahead`` chunks past the one the writer takes next, so at most that many
    chunks of parsed notes wait in memory, however slow the writer is."""

    def __init__(self, size: int, chunks: list[list[LoadJob]]) -> None:
        import threading  # deferred: on first use

        self.chunks = chunks
        self.next_chunk = 0
        self.taken = 0  # chunks the writer has taken from answers(), in order
        self.ahead = size * _AHEAD_PER_WORKER
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
                self.taken = index + 1
                self.changed.notify_all()
            if isinstance(answer, BaseException):
                raise answer
            yield answer

    def _feed(self, worker: _Worker) -> None:
        import pickle  # deferred: 5 modules more

        try:
            while True:
                with self.changed:
                    while not self.stopped and (
                        len(worker.sent) >= _IN_FLIGHT or self.next_chunk - self.taken >= self.ahead
                    ):
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
        import pickle  # deferred: 5 modules more

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
