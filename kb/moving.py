"""``kb mv NOTE NEW_PATH``: move a note and rewrite every link to it, all files or none.

Planning is pure (``plan_link_edits``, ``rewrite_line``): from the store's links to the
note and from it, which line of which file changes from what to what. ``apply_move``
then writes every file, or, when one write fails, puts back every file it wrote.

What is rewritten, keeping each link's anchor, its text and the way it was written
(``.md`` or not, ``%``-encoded or not): relative Markdown and reference links, root-absolute
``/x`` links, Hugo ``ref``/``relref`` paths, typed front-matter links by path, wikilinks
that name the old file stem (or its path) when the stem changes, and the moved note's own
relative links when it changes folder. Links by title or alias need no change.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote, unquote

from kb.errors import KbError, UsageError

_NAME_KINDS = frozenset({"wikilink", "embed"})
_PATH_KINDS = frozenset({"markdown", "reference", "hugo-ref", "front-matter", "image"})
_SUFFIXES = (".md", ".markdown")


class LinkAt(NamedTuple):
    """A link as stored: in note ``source`` (path inside the root), line ``line``."""

    source: str
    kind: str
    target: str  # as written, without the #anchor
    line: int


class LinkEdit(NamedTuple):
    source: str  # path inside the root of the file to change (the old path for the note)
    line: int
    old: str
    new: str


class MovePlan(NamedTuple):
    source: Path
    destination: Path
    edits: list[LinkEdit]
    left: list[LinkAt]  # links to the note kb cannot rewrite (site URLs, folder links)
    root: Path


def plan_link_edits(
    old_rel: str, new_rel: str, backlinks: Iterable[LinkAt], outgoing: Iterable[LinkAt]
) -> tuple[list[LinkEdit], list[LinkAt]]:
    """The edits that keep links working when the note at ``old_rel`` moves to
    ``new_rel`` (both inside one notes root), and the links to it left as they are."""
    edits: list[LinkEdit] = []
    left: list[LinkAt] = []
    for link in backlinks:
        new = _new_target(link, old_rel, new_rel)
        if new is None:
            left.append(link)
        elif new != link.target:
            edits.append(LinkEdit(link.source, link.line, link.target, new))
    old_dir, new_dir = posixpath.dirname(old_rel), posixpath.dirname(new_rel)
    if old_dir != new_dir:
        for link in outgoing:
            if link.kind in ("markdown", "reference", "image") and _relative(link.target):
                where = posixpath.normpath(posixpath.join(old_dir, unquote(link.target)))
                moved = posixpath.relpath(where, new_dir or ".")
                new = _written_like(link.target, moved)
                if new != link.target:
                    edits.append(LinkEdit(old_rel, link.line, link.target, new))
    return _unique(edits), left


def _new_target(link: LinkAt, old_rel: str, new_rel: str) -> str | None:
    """The target a link to the moved note should have; None when kb cannot tell."""
    if link.kind in _NAME_KINDS:
        return _new_name(link.target, old_rel, new_rel)
    if link.kind not in _PATH_KINDS or not link.target or "://" in link.target:
        return None
    written = unquote(link.target)
    source_dir = posixpath.dirname(link.source)
    if written.startswith("/"):
        candidates = [("/", posixpath.normpath(written.lstrip("/")))]
    else:
        candidates = [(source_dir, posixpath.normpath(posixpath.join(source_dir, written)))]
        if link.kind in ("hugo-ref", "front-matter"):  # from the root, else the note's folder
            candidates.insert(0, ("", posixpath.normpath(written)))
    for base, path in candidates:
        form = _form(path, old_rel)
        if form is None:
            continue
        new_path = _with_form(new_rel, form)
        if base == "/":
            new = "/" + new_path
        elif base == "":
            new = new_path
        else:
            new = posixpath.relpath(new_path, base or ".")
        return _written_like(link.target, new)
    if link.kind == "front-matter":
        return link.target  # a title or an alias: it follows the note by itself
    return None


def _new_name(target: str, old_rel: str, new_rel: str) -> str:
    """A wikilink by file stem or by path follows the new name; by title or alias it
    needs nothing."""
    old_stem, new_stem = _strip_suffix(old_rel), _strip_suffix(new_rel)
    name = target.strip()
    if "/" in name:
        if _strip_suffix(name.lstrip("/")).casefold() == old_stem.casefold():
            return target.replace(name, new_stem if not name.endswith(_SUFFIXES) else new_rel)
        return target
    if _strip_suffix(name).casefold() == posixpath.basename(old_stem).casefold():
        new_name = posixpath.basename(new_stem)
        return target.replace(name, new_name + (name[len(_strip_suffix(name)) :]))
    return target


def _form(path: str, old_rel: str) -> str | None:
    """How ``path`` names the note at ``old_rel``: 'file', 'stem', 'html', or None."""
    if path == old_rel:
        return "file"
    stem = _strip_suffix(old_rel)
    if path == stem:
        return "stem"
    if path == stem + ".html":
        return "html"
    return None


def _with_form(rel: str, form: str) -> str:
    stem = _strip_suffix(rel)
    return {"file": rel, "stem": stem, "html": stem + ".html"}[form]


def _strip_suffix(name: str) -> str:
    for suffix in _SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _relative(target: str) -> bool:
    return bool(target) and not target.startswith(("/", "#")) and ":" not in target


def _written_like(old: str, new: str) -> str:
    """``new`` encoded as ``old`` was: fully %-encoded, spaces only, or as it is (spaces
    encoded anyway, since a Markdown link cannot hold one)."""
    if "%" in old and old.isascii():
        return quote(new, safe="/._-~")
    return new.replace("%", "%25").replace(" ", "%20") if "%" in old or " " in new else new


def _unique(edits: list[LinkEdit]) -> list[LinkEdit]:
    return list(dict.fromkeys(edits))  # one line may hold the same link twice


_BEFORE = r"(?<=[(<\[\"' ,:])"
_AFTER = r"(?=[)#>\]|\"' ,]|$)"


def rewrite_line(line: str, old: str, new: str) -> str | None:
    """``line`` with the link target ``old`` made ``new`` wherever it stands as a target
    (after ``](``, ``[[``, a quote or a list separator); None if it is not there."""
    pattern = re.compile(_BEFORE + re.escape(old) + _AFTER)
    changed, count = pattern.subn(lambda _: new, line)
    return changed if count else None


# -- doing it ------------------------------------------------------------------------------


def destination_for(source: Path, new_path: Path, roots: dict[str, Path]) -> tuple[Path, Path]:
    """Where NEW_PATH (a file or a folder, from the current folder) puts the note, and
    its notes root. The destination must be in the note's own root and must not exist."""
    target = new_path.expanduser()
    if target.is_dir():
        target = target / source.name
    if not target.name.lower().endswith(_SUFFIXES):
        target = target.with_name(target.name + ".md")
    target = target.resolve()
    root = next((r for r in roots.values() if r == source.parent or r in source.parents), None)
    if root is None or (root not in target.parents):
        raise UsageError(f"{new_path} is outside the note's notes root {root}")
    if target.exists() or target.is_symlink():
        raise UsageError(f"{target} already exists")
    return target, root


def read_text(path: Path) -> tuple[str, str]:
    """A note file's text and encoding, as ingest reads it."""
    from kb.parse.decode import decode_note

    decoded = decode_note(path.read_bytes())
    return decoded.text, decoded.encoding


def edited_files(plan: MovePlan) -> dict[str, tuple[str, str, list[LinkEdit]]]:
    """Each file to change (by path inside the root): its new text, its encoding and the
    edits made. Raises KbError when a link is not found where the store says it is (the
    file changed since the last ingest)."""
    by_file: dict[str, list[LinkEdit]] = {}
    for edit in plan.edits:
        by_file.setdefault(edit.source, []).append(edit)
    changed = {}
    for rel, edits in by_file.items():
        text, encoding = read_text(plan.root / rel)
        lines = text.splitlines(keepends=True)
        for edit in edits:
            index = edit.line - 1
            new_line = (
                rewrite_line(lines[index], edit.old, edit.new) if index < len(lines) else None
            )
            if new_line is None:
                raise KbError(
                    f"{rel}:{edit.line} no longer holds the link {edit.old}; "
                    "run 'kb ingest' and try again"
                )
            lines[index] = new_line
        changed[rel] = ("".join(lines), encoding, edits)
    return changed


def apply_move(plan: MovePlan) -> None:
    """Write the edited files and move the note: every change or none (what was written
    is put back when a write fails)."""
    source_rel = plan.source.relative_to(plan.root).as_posix()
    changes = edited_files(plan)
    originals: dict[Path, bytes] = {}
    created: Path | None = None
    try:
        for rel, (text, encoding, _) in changes.items():
            if rel == source_rel:
                continue
            path = plan.root / rel
            originals[path] = path.read_bytes()
            _write(path, text.encode(_codec(encoding)))
        moved = changes.get(source_rel)
        data = moved[0].encode(_codec(moved[1])) if moved is not None else plan.source.read_bytes()
        plan.destination.parent.mkdir(parents=True, exist_ok=True)
        created = plan.destination
        _write(plan.destination, data, exclusive=True)
        plan.source.unlink()
    except BaseException:
        for path, data in originals.items():
            _write(path, data)
        if created is not None and plan.source.exists():
            created.unlink(missing_ok=True)
        raise


def _codec(encoding: str) -> str:
    # Ingest reads a UTF-8 BOM as UTF-8; writing it back keeps the BOM.
    return "utf-8-sig" if encoding.lower().replace("_", "-") == "utf-8-sig" else encoding


def _write(path: Path, data: bytes, exclusive: bool = False) -> None:
    """Write through a temporary file in the same folder, then rename: a crash leaves the
    old file or the new one, never half of one."""
    temporary = path.with_name(f".{path.name}.kb-mv")
    temporary.write_bytes(data)
    try:
        if exclusive and path.exists():
            raise UsageError(f"{path} already exists")
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)
