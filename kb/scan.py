"""Walk notes roots: which files are notes, by the exclusion and symlink rules."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kb.config import Config, NotesRoot
from kb.models import Problem

NOTE_SUFFIXES = (".md", ".markdown")
ALWAYS_EXCLUDED = frozenset({".git", "node_modules", "__pycache__"})
# Hugo site folders that hold no notes of the user's own; excluded at a root's top level.
HUGO_EXCLUDED = frozenset({"themes", "archetypes", "public", "resources"})


@dataclass(frozen=True, slots=True)
class NoteFile:
    path: str  # note id: rel, prefixed with the root's name when there are several roots
    root: str
    rel: str  # POSIX path inside the root
    abs_path: Path
    size: int
    mtime_ns: int


@dataclass(slots=True)
class ScanResult:
    files: dict[str, NoteFile] = field(default_factory=dict)
    problems: dict[str, list[Problem]] = field(default_factory=dict)


def note_path(root: NotesRoot, rel: str, config: Config) -> str:
    return f"{root.name}/{rel}" if config.prefixed else rel


def is_note_name(name: str) -> bool:
    return name.lower().endswith(NOTE_SUFFIXES)


def scan_root(root: NotesRoot, config: Config, start: Path | None = None) -> ScanResult:
    """Every note file under ``start`` (default: the whole root), each real file once."""
    result = ScanResult()
    root_real = Path(os.path.realpath(root.path))
    start = start or root.path
    if start.is_file():
        _add_file(result, root, config, start, _rel(root.path, start), root_real)
        return result
    seen_dirs: set[tuple[int, int]] = set()
    seen_files: set[tuple[int, int]] = set()
    linked: list[tuple[Path, str]] = []
    for abs_path, rel, via_link in _walk(root, config, start, root_real, seen_dirs, result):
        if via_link:
            linked.append((abs_path, rel))
        else:
            _add_file(result, root, config, abs_path, rel, root_real, seen_files)
    # Files reached through a symlink count only when their real file was not seen directly.
    for abs_path, rel in linked:
        _add_file(result, root, config, abs_path, rel, root_real, seen_files)
    return result


def _walk(
    root: NotesRoot,
    config: Config,
    start: Path,
    root_real: Path,
    seen_dirs: set[tuple[int, int]],
    result: ScanResult,
) -> Iterator[tuple[Path, str, bool]]:
    stack: list[tuple[Path, bool]] = [(start, False)]
    while stack:
        folder, via_link = stack.pop()
        try:
            info = folder.stat()
        except OSError as exc:
            _problem(result, root, config, _rel(root.path, folder), "unreadable", str(exc))
            continue
        if (info.st_dev, info.st_ino) in seen_dirs:
            continue  # a symlink loop, or a folder linked twice
        seen_dirs.add((info.st_dev, info.st_ino))
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            _problem(result, root, config, _rel(root.path, folder), "unreadable", str(exc))
            continue
        for entry in entries:
            rel = _rel(root.path, Path(entry.path))
            if _excluded(entry.name, rel, config, top_level=folder == root.path):
                continue
            is_link = entry.is_symlink()
            if is_link and not _link_allowed(entry, root_real, config):
                if entry.is_dir() or is_note_name(entry.name):
                    _problem(
                        result,
                        root,
                        config,
                        rel,
                        "symlink",
                        "symlink points outside the notes root; not followed "
                        "(set follow_external_symlinks: true to follow)",
                    )
                continue
            try:
                if entry.is_dir():
                    stack.append((Path(entry.path), via_link or is_link))
                elif entry.is_file() and is_note_name(entry.name):
                    yield Path(entry.path), rel, via_link or is_link
            except OSError:
                continue


def _add_file(
    result: ScanResult,
    root: NotesRoot,
    config: Config,
    abs_path: Path,
    rel: str,
    root_real: Path,
    seen_files: set[tuple[int, int]] | None = None,
) -> None:
    try:
        info = abs_path.stat()
    except OSError:
        return  # vanished between listing and stat: not a note now
    if seen_files is not None:
        key = (info.st_dev, info.st_ino)
        if key in seen_files:
            return
        seen_files.add(key)
    path = note_path(root, rel, config)
    result.files[path] = NoteFile(path, root.name, rel, abs_path, info.st_size, info.st_mtime_ns)


def _excluded(name: str, rel: str, config: Config, top_level: bool) -> bool:
    if name.startswith(".") or name in ALWAYS_EXCLUDED:
        return True
    if top_level and name in HUGO_EXCLUDED:
        return True
    return any(
        fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(name, pattern)
        for pattern in config.exclude
    )


def _link_allowed(entry: os.DirEntry, root_real: Path, config: Config) -> bool:
    if config.follow_external_symlinks:
        return True
    target = Path(os.path.realpath(entry.path))
    return target == root_real or root_real in target.parents


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else ""


def _problem(
    result: ScanResult, root: NotesRoot, config: Config, rel: str, kind: str, message: str
) -> None:
    path = note_path(root, rel, config) if rel else root.name
    result.problems.setdefault(path, []).append(Problem(kind, message))
