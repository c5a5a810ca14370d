"""Changing a note a caller read earlier, without clobbering an edit made meanwhile.

Each change names the content hash of the file as it was read (``content_hash``); the
file is written only when its bytes still have that hash, through a temporary file
renamed over it (all or nothing, mode kept). The text edits themselves are pure:
``appended`` and ``replaced_once``.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

from kb.errors import KbError, UsageError, os_error_message
from kb.text import clean_line

HASH_CHARS = 16  # of a SHA-256 in hex: enough to tell two versions of one file apart


def content_hash(data: bytes) -> str:
    """The hash a caller names to say which version of a note it read."""
    return hashlib.sha256(data).hexdigest()[:HASH_CHARS]


def appended(text: str, addition: str) -> str:
    """``text`` with ``addition`` after it, on a line of its own, ending in a newline."""
    if not addition.strip():
        raise UsageError("nothing to append: the text is empty")
    if text and not text.endswith("\n"):
        text += "\n"
    return text + addition + ("" if addition.endswith("\n") else "\n")


def replaced_once(text: str, old: str, new: str) -> str:
    """``text`` with ``old`` replaced by ``new``, when ``old`` occurs exactly once."""
    if not old:
        raise UsageError("old_text is empty; give the exact text to replace")
    count = text.count(old)
    if count == 0:
        raise UsageError(
            "old_text does not occur in the note; read the note again and copy the text exactly"
        )
    if count > 1:
        raise UsageError(
            f"old_text occurs {count} times in the note; include more of the text around it "
            "so it occurs once"
        )
    return text.replace(old, new, 1)


def keeping_newlines(raw: str, change: Callable[[str], str]) -> str:
    """``change`` applied to the text as read_note shows it (line ends as ``\n``), the
    result written back with the file's own line ends when they are all CRLF."""
    crlf = "\r\n" in raw and raw.count("\n") == raw.count("\r\n")
    if not crlf:
        return change(raw)
    return change(raw.replace("\r\n", "\n")).replace("\n", "\r\n")


def read_versioned(path: Path) -> tuple[bytes, str]:
    """A note file's bytes and their hash."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise KbError(os_error_message(exc, path)) from exc
    return data, content_hash(data)


def check_version(path: Path, data: bytes, expected: str) -> None:
    """A KbError when ``data`` (the file's bytes now) no longer has the hash ``expected``."""
    if content_hash(data) != expected.strip().lower():
        raise UsageError(
            f"{clean_line(path.name)} changed since it was read (its hash is now "
            f"{content_hash(data)}, not {clean_line(expected)}); read the note again, "
            "then make the change on what it holds now"
        )


def write_if_unchanged(path: Path, expected: str, new_text: str) -> str:
    """Write ``new_text`` (UTF-8) to ``path`` when the file still has the hash
    ``expected``; returns the new hash. The caller holds kb's write lock on the note
    (``kb.notes.note_lock``), so no other kb writer is between the check and the rename;
    the bytes are checked again right before the rename, and the old file once more after
    it: a save by a program without the lock that lands in between is put back and the
    write refused, as ``kb mv`` does."""
    try:
        old = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise KbError(os_error_message(exc, path)) from exc
    try:
        info = os.fstat(old)
        check_version(path, _read_all(old), expected)
        if not info.st_mode & stat.S_IWUSR:  # its owner made it read-only: respect that
            raise UsageError(f"{clean_line(path.name)} is read-only; nothing was changed")
        encoded = new_text.encode("utf-8")
        _replace_checked(path, old, info, encoded, expected)
    except OSError as exc:
        raise KbError(os_error_message(exc, path)) from exc
    finally:
        os.close(old)
    return content_hash(encoded)


def _replace_checked(
    path: Path, old: int, info: os.stat_result, encoded: bytes, expected: str
) -> None:
    temp = _written_beside(path, encoded, info.st_mode & 0o7777)
    try:
        check_version(path, path.read_bytes(), expected)
        Path(temp).replace(path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    late = os.fstat(old)
    if (late.st_size, late.st_mtime_ns) != (info.st_size, info.st_mtime_ns):
        # Written between the last check and the rename by a program that does not take
        # kb's lock: its bytes go back in place of ours, and the caller reads again.
        back = _written_beside(path, _read_all(old), info.st_mode & 0o7777)
        Path(back).replace(path)
        raise UsageError(
            f"{clean_line(path.name)} changed while kb was writing it; nothing was changed, "
            "read the note again"
        )


def _written_beside(path: Path, data: bytes, mode: int) -> str:
    """A new temporary file beside ``path`` holding ``data`` (synced, mode ``mode``)."""
    fd, temp = tempfile.mkstemp(prefix=".kb-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        Path(temp).chmod(mode)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return temp


def _read_all(descriptor: int) -> bytes:
    os.lseek(descriptor, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(descriptor, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def utf8_text(path: Path, data: bytes) -> str:
    """The file's text for editing: UTF-8 as it is (line endings kept), else a KbError."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(
            f"{clean_line(path.name)} is not UTF-8; edit it in your editor instead"
        ) from None


def new_note_file(folder: Path, title: str, tags: list[str]) -> Path:
    """Write a new note from ``kb new``'s template into ``folder`` (checked by the caller
    to lie inside a root); its name never replaces an existing file."""
    from kb.notes.editing import new_note_text, write_new_note  # deferred: 4 modules more

    if not title.strip():
        raise UsageError("a new note needs a title")
    for tag in tags:
        if not tag or not all(ch.isalnum() or ch in "-_/." for ch in tag):
            raise UsageError(
                f"tag {clean_line(tag)!r} may hold only letters, digits, '-', '_', '.' and '/'"
            )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path = write_new_note(folder, title, new_note_text(title, tags=tags))
    except OSError as exc:
        raise KbError(os_error_message(exc, folder)) from exc
    return path
