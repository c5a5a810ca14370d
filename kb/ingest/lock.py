"""One ingest at a time: the lock file in the index folder, named by the pid that holds it."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kb.config import Config
from kb.errors import IngestLocked, KbError


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
