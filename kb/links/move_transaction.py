"""``kb mv`` as a transaction over files: every file wholly before or wholly after.

Before anything is written, a journal in the index folder records the move and, for each
file, the hashes of its bytes before and after and the byte edits between them. Each file
is then replaced (a new file beside it, with its mode and owner, renamed into place; a
file with several hard links is rewritten in place, its old bytes in the journal), each
only if it still holds the bytes the plan read, so a save made meanwhile is never
overwritten; the note is renamed last, and the journal removed. A failure, Ctrl-C,
SIGTERM or SIGHUP puts back what was written. After SIGKILL or a power cut the journal is
still there: the next kb command finishes the move when the note already is at its new
path, or undoes it, and says which (``recover``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from kb.errors import KbError, UsageError

_LOCK_NAME = "kb-mv.lock"
_JOURNAL_VERSION = 1


class FileChange(NamedTuple):
    path: Path
    before: bytes
    after: bytes


class Changed(KbError):
    """A file changed while kb was moving: the move is undone."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_writable(path: Path) -> None:
    """Refuse to edit a file its owner made read-only (root could write it anyway)."""
    info = path.stat()
    if not info.st_mode & stat.S_IWUSR:
        raise UsageError(f"{path} is read-only; nothing was moved")


@contextlib.contextmanager
def move_lock(index_dir: Path) -> Iterator[None]:
    """One ``kb mv`` at a time in a knowledge base (a recovery waits for none)."""
    import fcntl  # deferred: on first use

    index_dir.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(index_dir / _LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise KbError("another 'kb mv' is running in this knowledge base") from None
        yield
    finally:
        os.close(descriptor)


def run_move(journal: Path, source: Path, destination: Path, changes: list[FileChange]) -> None:
    """Write every change and rename ``source`` to ``destination``, or nothing; what is
    about to be done is in ``journal`` until it is done."""
    if journal.exists():
        raise KbError(f"{journal} is left by an unfinished move; run any kb command first")
    created = _missing_parents(destination.parent)
    _write_journal(journal, source, destination, changes, created)
    try:
        for change in changes:
            _replace(change)
        for folder in reversed(created):
            folder.mkdir(exist_ok=True)
        if destination.exists() or destination.is_symlink():
            raise UsageError(f"{destination} already exists")
        source.rename(destination)
        _fsync_folder(destination.parent)
        if source.parent != destination.parent:
            _fsync_folder(source.parent)
        journal.unlink()
        _fsync_folder(journal.parent)
    except BaseException:
        # Whatever step was cut off: the note goes back, and every file that holds the
        # new bytes gets its old ones (a file holding anything else is left alone).
        if destination.exists() and not source.exists():
            destination.rename(source)
        for change in reversed(changes):
            _put_back(change.path, change.after, change.before)
        for folder in created:
            with contextlib.suppress(OSError):
                folder.rmdir()
        journal.unlink(missing_ok=True)
        raise


def _missing_parents(folder: Path) -> list[Path]:
    """The folders to create for ``folder``, outermost last."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    return missing


def _write_journal(
    journal: Path, source: Path, destination: Path, changes: list[FileChange], created: list[Path]
) -> None:
    record: dict[str, Any] = {
        "kb_move": _JOURNAL_VERSION,
        "source": str(source),
        "destination": str(destination),
        "created": [str(folder) for folder in created],
        "files": [
            {
                "path": str(change.path),
                "before": _sha(change.before),
                "after": _sha(change.after),
                "edits": _byte_edits(change.before, change.after),
                # Rewritten in place (hard links), a file can be left half written: its
                # whole old bytes are kept to put back.
                **(
                    {"before_bytes": _b64(change.before)} if change.path.stat().st_nlink > 1 else {}
                ),
            }
            for change in changes
        ],
    }
    temporary = journal.with_name(journal.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as out:
        json.dump(record, out)
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(journal)
    _fsync_folder(journal.parent)


def _byte_edits(before: bytes, after: bytes) -> list[list[Any]]:
    """Where ``after`` differs from ``before``, as one span [offset, old, new] (base64):
    from the first byte that differs to the last (link edits are few; this is enough to
    go either way, and linear)."""
    if before == after:
        return []
    shortest = min(len(before), len(after))
    low, high = 0, shortest  # the longest common prefix, by slices compared in C
    while low < high:
        middle = (low + high + 1) // 2
        if before[:middle] == after[:middle]:
            low = middle
        else:
            high = middle - 1
    prefix = low
    low, high = 0, shortest - prefix
    while low < high:
        middle = (low + high + 1) // 2
        if before[len(before) - middle :] == after[len(after) - middle :]:
            low = middle
        else:
            high = middle - 1
    suffix = low
    return [
        [
            prefix,
            _b64(before[prefix : len(before) - suffix]),
            _b64(after[prefix : len(after) - suffix]),
        ]
    ]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"))


def _apply_edits(before: bytes, edits: list[list[Any]]) -> bytes:
    out, at = [], 0
    for offset, old, new in edits:
        out.append(before[at:offset])
        out.append(_unb64(new))
        at = offset + len(_unb64(old))
    out.append(before[at:])
    return b"".join(out)


def _undo_edits(after: bytes, edits: list[list[Any]]) -> bytes:
    out, at, shift = [], 0, 0
    for offset, old, new in edits:
        start = offset + shift
        out.append(after[at:start])
        out.append(_unb64(old))
        at = start + len(_unb64(new))
        shift += len(_unb64(new)) - len(_unb64(old))
    out.append(after[at:])
    return b"".join(out)


# -- replacing one file -----------------------------------------------------------------------


def _replace(change: FileChange) -> None:
    """Put ``change.after`` in place of the file, only if it still holds ``before``."""
    path = change.path
    old = os.open(path, os.O_RDONLY)
    try:
        info = os.fstat(old)
        if _read_all(old) != change.before:
            raise Changed(f"{path} changed while moving; nothing was moved")
        if info.st_nlink > 1:
            _rewrite_in_place(path, change)
            return
        temporary = path.with_name(f".{path.name}.kb-mv")
        try:
            _write_new(temporary, change.after, info)
            # Checked again just before the rename, then once more on the old file after
            # it: a save that lands in between is found and the file put back.
            if _read_path(path) != change.before:
                raise Changed(f"{path} changed while moving; nothing was moved")
            temporary.replace(path)
        finally:
            temporary.unlink(missing_ok=True)
        late = os.fstat(old)
        if (late.st_size, late.st_mtime_ns) != (info.st_size, info.st_mtime_ns):
            _write_new(temporary, _read_all(old), info)
            temporary.replace(path)
            raise Changed(f"{path} changed while moving; nothing was moved")
    finally:
        os.close(old)


def _rewrite_in_place(path: Path, change: FileChange) -> None:
    import fcntl  # deferred: on first use

    with path.open("r+b") as file:
        fcntl.lockf(file, fcntl.LOCK_EX)
        if file.read() != change.before:
            raise Changed(f"{path} changed while moving; nothing was moved")
        file.seek(0)
        file.write(change.after)
        file.truncate()
        file.flush()
        os.fsync(file.fileno())


def _write_new(path: Path, data: bytes, like: os.stat_result) -> None:
    """A new file with ``data``, the mode and (where allowed) the owner of ``like``."""
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(descriptor, stat.S_IMODE(like.st_mode))
        with contextlib.suppress(OSError):
            os.fchown(descriptor, like.st_uid, like.st_gid)
        view = memoryview(data)
        while view:
            view = view[os.write(descriptor, view) :]
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _put_back(path: Path, written: bytes, original: bytes) -> bool:
    """``original`` in place of ``written``; False (and nothing done) when the file holds
    neither, as after an edit someone made since."""
    try:
        current = _read_path(path)
    except FileNotFoundError:
        return False
    if current == original:
        return True
    if current != written:
        return False
    info = path.stat()
    if info.st_nlink > 1:
        with path.open("r+b") as file:
            file.write(original)
            file.truncate()
            os.fsync(file.fileno())
        return True
    temporary = path.with_name(f".{path.name}.kb-mv")
    _write_new(temporary, original, info)
    temporary.replace(path)
    return True


def _read_all(descriptor: int) -> bytes:
    os.lseek(descriptor, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(descriptor, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _read_path(path: Path) -> bytes:
    return path.read_bytes()


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


# -- after a kill ------------------------------------------------------------------------------


def recover(journal: Path) -> str | None:
    """Finish or undo a move a kill interrupted; what was done, in one line (None: no
    journal). The move is finished when the note is already at its new path, else undone."""
    if not journal.exists():
        return None
    import fcntl  # deferred: on first use

    descriptor = os.open(journal.parent / _LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # the move is still running
        if not journal.exists():
            return None
        return _recover(journal)
    finally:
        os.close(descriptor)


def _recover(journal: Path) -> str:
    try:
        record = json.loads(journal.read_text(encoding="utf-8"))
        source, destination = Path(record["source"]), Path(record["destination"])
        files = record["files"]
    except (OSError, ValueError, KeyError, TypeError):
        journal.replace(journal.with_name(journal.name + ".unreadable"))
        return f"a 'kb mv' journal could not be read and was set aside as {journal.name}.unreadable"
    finish = destination.exists() and not source.exists()
    left: list[str] = []
    for entry in files:
        path = Path(entry["path"])
        path.with_name(f".{path.name}.kb-mv").unlink(missing_ok=True)  # a kill's leftover
        if finish and path == source:
            path = destination
        try:
            current = path.read_bytes()
        except OSError:
            left.append(str(path))
            continue
        wanted_hash = entry["after"] if finish else entry["before"]
        if _sha(current) == wanted_hash:
            continue
        other_hash = entry["before"] if finish else entry["after"]
        if _sha(current) == other_hash:
            new = (
                _apply_edits(current, entry["edits"])
                if finish
                else _undo_edits(current, entry["edits"])
            )
        elif "before_bytes" in entry:  # rewritten in place and cut off halfway
            before = _unb64(entry["before_bytes"])
            new = _apply_edits(before, entry["edits"]) if finish else before
        else:
            left.append(str(path))
            continue
        if _sha(new) != wanted_hash:
            left.append(str(path))
            continue
        _put_back(path, current, new)
    if not finish:
        for folder in record.get("created", []):
            with contextlib.suppress(OSError):
                Path(folder).rmdir()
    journal.unlink()
    what = "finished" if finish else "undone"
    move = f"{source} → {destination}"
    line = f"an interrupted 'kb mv {move}' was {what}"
    if left:
        line += f"; changed since, left as they are: {', '.join(left)}"
    return line
