"""Paths a server may touch: only inside the notes roots, after symlinks and ``..`` are
resolved. ``kb mcp`` asks here before it reads or writes any file a caller named, so a
traversal (``../../etc/passwd``), an absolute path elsewhere or a symbolic link that
leads out of the roots is refused with nothing read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from kb.errors import UsageError
from kb.text import clean_line


def real_roots(roots: Iterable[Path]) -> list[Path]:
    """The roots as the file system has them (a root may itself be a symbolic link)."""
    return [Path(os.path.realpath(root)) for root in roots]


def is_inside(path: Path, roots: Iterable[Path]) -> bool:
    """Whether ``path`` (already real) is one of ``roots`` (already real) or below one."""
    return any(path == root or root in path.parents for root in roots)


def looks_like_path(text: str) -> bool:
    """Whether a note name is written as a path a caller might use to leave the roots:
    absolute, home-relative, or with a ``..`` part."""
    cleaned = text.strip().replace("\\", "/")
    return (
        cleaned.startswith(("/", "~"))
        or ".." in PurePosixPath(cleaned).parts
        or (len(cleaned) > 1 and cleaned[1] == ":")  # C:/...
    )


def refuse_outside(text: str, roots: list[Path], base: Path) -> None:
    """A UsageError when the path ``text`` (relative to ``base`` unless absolute) leads
    outside every root once resolved; nothing when it stays inside or is no path."""
    if "\0" in text:
        raise UsageError("a note name holds a NUL character; give its path, title or alias")
    if not looks_like_path(text):
        return
    given = Path(text.strip()).expanduser()
    resolved = Path(os.path.realpath(given if given.is_absolute() else base / given))
    if not is_inside(resolved, real_roots(roots)):
        raise UsageError(
            f"{clean_line(text)!r} is outside the notes roots; "
            "name a note by its path inside them, its title or an alias"
        )


def checked_file(file: Path, roots: list[Path]) -> Path:
    """``file`` when its real path lies inside a root, else a UsageError (nothing read):
    a note reached through a symbolic link to elsewhere stays unread."""
    real = Path(os.path.realpath(file))
    if not is_inside(real, real_roots(roots)):
        raise UsageError(
            f"{clean_line(str(file))} leads outside the notes roots (to {clean_line(str(real))}); "
            "kb mcp reads and writes only inside them"
        )
    return file


def folder_inside(folder: str, root: Path, roots: list[Path]) -> Path:
    """The folder ``folder`` (relative to ``root``) when it resolves inside a root, else a
    UsageError; it need not exist yet."""
    if "\0" in folder:
        raise UsageError("a folder name holds a NUL character")
    if Path(folder).is_absolute() or folder.strip().startswith("~"):
        raise UsageError(f"folder {clean_line(folder)!r} must be relative to the notes root")
    target = Path(os.path.realpath(root / folder))
    if not is_inside(target, real_roots(roots)):
        raise UsageError(
            f"folder {clean_line(folder)!r} is outside the notes roots; give one inside {root}"
        )
    return target
