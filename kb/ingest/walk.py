"""Walk notes roots: which files are notes, by the exclusion and symlink rules."""

from __future__ import annotations

import errno
import fnmatch
import gc
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from kb.config import Config, NotesRoot
from kb.errors import file_kind
from kb.models import NOTE_SUFFIXES, Problem

# Problems the walk itself finds (not a note's content): replaced on every walk of a scope.
SCAN_PROBLEM_KINDS = ("symlink", "unreadable-folder", "file-name")
# A folder that fails with these is gone (its notes are removed); other errors keep them.
_GONE = (errno.ENOENT, errno.ENOTDIR)
ALWAYS_EXCLUDED = frozenset({".git", "node_modules", "__pycache__"})
# Hugo site folders that hold no notes of the user's own; excluded at a root's top level.
HUGO_EXCLUDED = frozenset({"themes", "archetypes", "public", "resources"})


class NoteFile(NamedTuple):
    """One file the walk found (a NamedTuple: 100,000 of them are made on every walk)."""

    path: str  # note id: rel, prefixed with the root's name when there are several roots
    root: str
    rel: str  # POSIX path inside the root
    abs_path: str
    size: int
    mtime_ns: int
    kind: str = ""  # what it is when it is not a regular file ("a FIFO"); never read then


@dataclass(slots=True)
class ScanResult:
    files: dict[str, NoteFile] = field(default_factory=dict)
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    # Note-path prefixes of folders that exist but could not be read: their notes are kept.
    unreadable: list[str] = field(default_factory=list)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused: a walk makes hundreds of thousands of small
    tuples and no cycles, and the collector, run every 700 of them, costs a tenth of a
    no-op ingest of 100,000 notes."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _broken_link(path: str, error: OSError) -> tuple[os.stat_result, str] | None:
    """The stamp and description of a name that cannot be followed; None when it is gone."""
    try:
        info = os.lstat(path)
    except OSError:
        return None  # vanished between listing and stat: not a note now
    if error.errno == errno.ELOOP:
        return info, "a symlink loop"
    if error.errno == errno.ENOENT and stat.S_ISLNK(info.st_mode):
        return info, "a dangling symlink"
    return info, f"a file that cannot be opened ({error.strerror})"


def note_path(root: NotesRoot, rel: str, config: Config) -> str:
    return f"{root.name}/{rel}" if config.prefixed else rel


def is_note_name(name: str) -> bool:
    return name.lower().endswith(NOTE_SUFFIXES)


def scan_root(root: NotesRoot, config: Config, start: Path | None = None) -> ScanResult:
    """Every note file under ``start`` (default: the whole root), each real file once."""
    result = ScanResult()
    root_real = os.path.realpath(root.path)
    start = start or root.path
    if start != root.path and _target_excluded(start.relative_to(root.path).as_posix(), config):
        return result  # an excluded or hidden path is never a note, even when named
    if not os.path.lexists(start):
        return result  # a deleted file or folder: its notes are removed, nothing to scan
    if not start.is_dir():  # a file, a FIFO, a dangling or looping symlink...
        rel = start.relative_to(root.path).as_posix()
        try:
            info, kind = start.stat(), ""
        except OSError as exc:
            broken = _broken_link(str(start), exc)
            if broken is None:
                return result
            info, kind = broken
        _add_file(result, root, config, str(start), rel, info, kind)
        return result
    linked: list[tuple[os.DirEntry[str], str]] = []
    shared: list[tuple[str, NoteFile, tuple[int, int]]] = []  # files with several names
    rel_start = start.relative_to(root.path).as_posix() if start != root.path else ""
    # Plain strings, not Path objects, and the common case inline: a no-op ingest of
    # 100,000 notes is mostly this loop (a function call per file costs 0.1 s there).
    files, prefix, root_name = result.files, note_path(root, "", config), root.name
    for entry, rel, via_link in _walk(root, config, str(start), rel_start, root_real, result):
        if via_link:
            linked.append((entry, rel))
            continue
        try:
            info = entry.stat()
        except OSError:  # a broken or looping symlink: described by _add_entry
            linked.append((entry, rel))
            continue
        mode = info.st_mode
        path = prefix + rel
        file = NoteFile(
            path,
            root_name,
            rel,
            entry.path,
            info.st_size,
            info.st_mtime_ns,
            "" if stat.S_ISREG(mode) else file_kind(mode),
        )
        if info.st_nlink > 1:  # hard links: one note per real file, decided below
            shared.append((path, file, (info.st_dev, info.st_ino)))
        else:
            files[path] = file
    # A file with several names is the note at the first of them in path order.
    seen_files: set[tuple[int, int]] = set()
    for path, file, key in sorted(shared, key=lambda item: item[0]):
        if key not in seen_files:
            seen_files.add(key)
            files[path] = file
    # Files reached through a symlink count only when their real file was not seen directly.
    for entry, rel in sorted(linked, key=lambda item: item[1]):
        try:
            real = os.path.realpath(entry.path)
        except OSError:  # a link that cannot be read: _add_entry describes it
            real = ""
        if real.startswith(root_real + os.sep):
            real_rel = Path(os.path.relpath(real, root_real)).as_posix()
            if prefix + real_rel in files or _in_inner_root(real_rel, root):
                continue
        _add_entry(result, root, config, entry, rel, seen_files)
    return result


def _walk(
    root: NotesRoot,
    config: Config,
    start: str,
    rel_start: str,
    root_real: str,
    result: ScanResult,
) -> Iterator[tuple[os.DirEntry[str], str, bool]]:
    seen_dirs: set[tuple[int, int]] = set()
    stack: list[tuple[str, str, bool]] = [(start, rel_start, False)]
    # Folders reached through a symlink are walked after every real one, in path order,
    # so a folder that is both is walked (and its notes named) at its real path.
    linked: list[tuple[str, str, bool]] = []
    while stack or linked:
        if not stack:
            linked.sort(key=lambda item: item[1], reverse=True)
        folder, folder_rel, via_link = stack.pop() if stack else linked.pop()
        try:
            info = os.stat(folder)  # noqa: PTH116 - str paths keep the walk cheap
            if (info.st_dev, info.st_ino) in seen_dirs:
                continue  # a symlink loop, or a folder linked twice
            seen_dirs.add((info.st_dev, info.st_ino))
            with os.scandir(folder) as listing:
                entries = list(listing)  # in no order: what depends on it sorts
        except OSError as exc:
            if exc.errno in _GONE:
                continue  # deleted while the walk ran: its notes are removed
            # Its notes stay in the store, untouched, until it can be read again.
            result.unreadable.append(
                note_path(root, f"{folder_rel}/" if folder_rel else "", config)
            )
            _problem(
                result,
                root,
                config,
                folder_rel,
                "unreadable-folder",
                f"cannot read folder ({exc.strerror}); its notes are kept until it can be read",
            )
            continue
        prefix = f"{folder_rel}/" if folder_rel else ""
        inner = root.inner  # roots of their own inside this one: their notes are theirs
        # The exclusion rules beyond hidden and tool folders apply at the top, or by pattern.
        ruled = not folder_rel or bool(config.exclude)
        for entry in entries:
            name = entry.name
            if name[0] == "." or name in ALWAYS_EXCLUDED:
                continue
            rel = prefix + name
            if ruled and _excluded(name, rel, config, top_level=not folder_rel):
                continue
            if not name.isascii() and not _utf8(name):
                if entry.is_dir() or is_note_name(name):
                    _problem(
                        result,
                        root,
                        config,
                        printable(rel),
                        "file-name",
                        "file name is not valid UTF-8; rename it to ingest it",
                    )
                continue
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()
            except OSError:  # a symlink loop: not a folder; a note name is reported later
                is_link, is_dir = True, False
            if is_link:
                allowed = _link_allowed(entry.path, root_real, config)
                if not allowed:
                    if is_dir or is_note_name(name):
                        why = _OUTSIDE_LINK if allowed is False else _UNREADABLE_LINK
                        _problem(result, root, config, rel, "symlink", why)
                    continue
            if is_dir:
                if inner and rel in inner:
                    continue
                (linked if via_link or is_link else stack).append(
                    (entry.path, rel, via_link or is_link)
                )
            elif is_note_name(name):  # FIFOs and broken links too: they are reported
                yield entry, rel, via_link or is_link


_UNREADABLE_LINK = "symlink that cannot be read; skipped"
_OUTSIDE_LINK = (
    "symlink points outside the notes root; not followed "
    "(set follow_external_symlinks: true to follow)"
)


def _add_entry(
    result: ScanResult,
    root: NotesRoot,
    config: Config,
    entry: os.DirEntry[str],
    rel: str,
    seen_files: set[tuple[int, int]],
) -> None:
    try:
        info, kind = entry.stat(), ""
    except OSError as exc:
        broken = _broken_link(entry.path, exc)
        if broken is None:
            return
        info, kind = broken
    key = (info.st_dev, info.st_ino)
    if key in seen_files:
        return
    seen_files.add(key)
    _add_file(result, root, config, entry.path, rel, info, kind)


def _add_file(
    result: ScanResult,
    root: NotesRoot,
    config: Config,
    abs_path: str,
    rel: str,
    info: os.stat_result,
    kind: str = "",
) -> None:
    path = note_path(root, rel, config)
    kind = kind or file_kind(info.st_mode)
    result.files[path] = NoteFile(
        path, root.name, rel, abs_path, info.st_size, info.st_mtime_ns, kind
    )


def _in_inner_root(rel: str, root: NotesRoot) -> bool:
    """Whether ``rel`` lies in a root nested in ``root``: a note of that root, not this one."""
    return any(rel.startswith(f"{inner}/") for inner in root.inner)


def _excluded(name: str, rel: str, config: Config, top_level: bool) -> bool:
    if name.startswith(".") or name in ALWAYS_EXCLUDED:
        return True
    if top_level and name in HUGO_EXCLUDED:
        return True
    return bool(config.exclude) and any(
        fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(name, pattern)
        for pattern in config.exclude
    )


def _target_excluded(rel: str, config: Config) -> bool:
    """Whether any folder on the way to ``rel``, or its name, is excluded."""
    parts = rel.strip("/").split("/")
    return any(
        _excluded(part, "/".join(parts[: i + 1]), config, top_level=i == 0)
        for i, part in enumerate(parts)
    )


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # undecodable bytes, kept by Python as surrogates
        return False
    return True


def printable(path: str) -> str:
    """A path with undecodable bytes shown as U+FFFD, safe to store and print."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _link_allowed(path: str, root_real: str, config: Config) -> bool | None:
    """Whether the walk follows the symlink ``path``; None when where it leads cannot be
    read (``/proc/N/exe`` of a process that ended: realpath raises), which is skipped."""
    if config.follow_external_symlinks:
        return True
    try:
        target = os.path.realpath(path)
    except OSError:
        return None
    return target == root_real or target.startswith(root_real + os.sep)


def _problem(
    result: ScanResult, root: NotesRoot, config: Config, rel: str, kind: str, message: str
) -> None:
    path = note_path(root, rel, config) if rel else root.name
    result.problems.setdefault(path, []).append(Problem(kind, message))


def exclusion_rule(rel: str, config: Config) -> str:
    """Why kb does not read the path ``rel`` inside a notes root, in a few words naming the
    rule; '' when it does (``kb mv`` refuses to move a note where it would be lost)."""
    parts = rel.strip("/").split("/")
    for index, name in enumerate(parts):
        folder = "/".join(parts[: index + 1])
        if name.startswith("."):
            return f"{folder} is hidden"
        if name in ALWAYS_EXCLUDED or (index == 0 and name in HUGO_EXCLUDED):
            return f"{folder} is a tool's folder"
        for pattern in config.exclude:
            if fnmatch.fnmatch(folder, pattern) or fnmatch.fnmatch(name, pattern):
                return f"{folder} matches exclude: {pattern!r} in kb.yaml"
    return ""
