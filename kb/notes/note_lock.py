"""kb's write lock on a note: every face that replaces a note file (the assistant's
append, replace and move, ``kb new``, ``kb mv``) holds it from reading the bytes it
checks to renaming the new file into place, so two kb writers never both succeed on
the same version of a note.

The lock is ``flock`` on a small file in the index folder, ``locks/<key>.lock``, the key
the first 24 hex digits of the SHA-256 of the note's real path. Not on the note itself:
a write renames a new file over the note, so a lock on the old file would guard a file
no longer there, and a second writer could lock the new one meanwhile. ``flock`` (not
``lockf``) because its locks belong to an open file, so two threads of one server
exclude each other as two processes do, and the system drops a lock when its holder
dies (a ``kill -9`` leaves nothing stale). An editor that wants the same promise takes
the same lock (``note_locks``); one that does not is still never overwritten by an
earlier version (the bytes are checked again under the lock), except in the moment
between that last check and the rename (docs/faults-and-recovery.md).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from kb.errors import KbError, os_error_message
from kb.text import clean_line

LOCK_FOLDER = "locks"
WAIT_SECONDS = 10.0  # another writer's hold is a write and an ingest: well under a second
_POLL_SECONDS = 0.005


def lock_file(index_dir: Path, note: Path) -> Path:
    """The lock file of ``note`` (which need not exist yet)."""
    real = os.path.realpath(note)
    key = hashlib.sha256(os.fsencode(real)).hexdigest()[:24]
    return index_dir / LOCK_FOLDER / f"{key}.lock"


@contextlib.contextmanager
def note_locks(index_dir: Path, notes: Iterable[Path], wait: float | None = None) -> Iterator[None]:
    """Hold kb's write lock on every note of ``notes``, taken in one order (so two
    writers of several notes never wait for each other); a KbError, nothing written,
    when the index folder cannot hold the lock files or another writer holds one past
    ``wait`` seconds (WAIT_SECONDS by default)."""
    import fcntl  # deferred: on first use

    wait = WAIT_SECONDS if wait is None else wait
    wanted = {lock_file(index_dir, Path(note)): Path(note) for note in notes}
    held: list[int] = []
    try:
        try:
            (index_dir / LOCK_FOLDER).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise KbError(_cannot_lock(exc, index_dir / LOCK_FOLDER)) from None
        for file in sorted(wanted):
            try:
                descriptor = os.open(file, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise KbError(_cannot_lock(exc, file)) from None
            held.append(descriptor)
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                        raise KbError(_cannot_lock(exc, file)) from None
                if time.monotonic() >= deadline:
                    raise KbError(
                        f"another kb process has been writing {clean_line(str(wanted[file]))} "
                        f"for {wait:g} s; nothing was changed, try again"
                    )
                time.sleep(_POLL_SECONDS)
        yield
    finally:
        for descriptor in reversed(held):
            os.close(descriptor)  # closing drops the lock


def _cannot_lock(exc: OSError, where: Path) -> str:
    return f"cannot take kb's write lock ({os_error_message(exc, where)}); nothing was changed"
