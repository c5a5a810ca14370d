"""Domain errors, each carrying the exit code the CLI turns it into, and the wording of what
the OS reports: an OS error (``os_error_message``), a file that is no regular file
(``file_kind``: the walk, ingest's reader and config's kb.yaml reader say it alike). It stays
here: in the walk, config would import ingest, a circle with the walk and a way up to ingest
for the engines, meaning and sites, which read config."""

import errno
import stat


class KbError(Exception):
    """Something kb cannot do; the message is one line meant for the user."""

    exit_code = 1


class NoKnowledgeBase(KbError):
    """No knowledge base could be found or created from the given places."""


class NotesRootError(KbError):
    """A notes root is missing, empty when the store is not, or a path lies outside every root."""


class StoreError(KbError):
    """The store cannot be opened or is newer than this kb understands."""


class IngestLocked(KbError):
    """Another ingest holds the lock past the wait."""

    exit_code = 3


class UsageError(KbError):
    """The user asked for something malformed (a bad query, an unknown note)."""

    exit_code = 2


_OS_CAUSES = {
    errno.ENOSPC: "disk full",
    errno.EDQUOT: "disk quota exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "read-only file system",
    errno.EISDIR: "a folder where kb expects a file",
    errno.ENOTDIR: "a file where kb expects a folder",
}


def os_error_message(exc: OSError, path: object = None) -> str:
    """An OS error as one line: its cause in plain words, then the path it concerns
    (``path`` when the error does not name one, such as a write that found the disk full)."""
    cause = _OS_CAUSES.get(exc.errno or 0) or exc.strerror or str(exc)
    where = exc.filename if exc.filename is not None else path
    return f"{cause}: {where}" if where is not None else cause


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for a warning; '' for a regular file."""
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a special file"
