"""``kb mv NOTE NEW_PATH``: move a note and rewrite every link to it, all files or none.

Planning is pure: from the links the store resolved to the note (which files, which
targets) and from the parser's exact positions of those targets in each file as it is now
(``kb.parse.spans``), the new bytes of each file, changed only inside the link targets
(``kb.links.exact_text``). ``kb.links.move_transaction`` then writes them as one transaction.

What is rewritten, keeping each link's anchor, its text and the way it was written
(``.md`` or not, ``%``-encoded or not): relative Markdown links and reference definitions,
root-absolute ``/x`` links, Hugo ``ref``/``relref`` paths, typed front-matter links by
path, wikilinks that name the old file stem (or its path) when the stem changes, and the
moved note's own relative links when it changes folder (its links to itself follow it).
Links by title or alias need no change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import quote, unquote

from kb.errors import KbError, UsageError

if TYPE_CHECKING:
    from kb.config import Config
    from kb.notes.naming import NoteRef
    from kb.store import Store

_NAME_KINDS = frozenset({"wikilink", "embed"})
_PATH_KINDS = frozenset({"markdown", "reference", "hugo-ref", "front-matter", "image"})
# The kinds of a note's own links that are relative to its folder.
RELATIVE_KINDS = frozenset({"markdown", "reference", "image"})
_SUFFIXES = (".md", ".markdown")


class LinkAt(NamedTuple):
    """A link as stored, from the file ``source`` (absolute) at line ``line``."""

    source: Path
    kind: str
    target: str  # as written, without the #anchor
    line: int


class LinkEdit(NamedTuple):
    """One link target changed: in ``source`` (the note's old path for its own links), at
    1-based ``line``, from character ``column`` (0-based, in the line as the parser reads
    it: an editor converts it to its own units)."""

    source: Path
    line: int
    old: str
    new: str
    column: int = 0


class FileEdit(NamedTuple):
    """A file's bytes before and after: only the link targets differ."""

    path: Path  # the real file (a symlinked note is edited where it really is)
    before: bytes
    after: bytes
    links: tuple[LinkEdit, ...]


class MovePlan(NamedTuple):
    source: Path
    destination: Path
    files: tuple[FileEdit, ...]  # the note's own edit, if any, at its old path
    left: tuple[LinkAt, ...]  # links to the note kb cannot rewrite (site URLs, folder links)
    root: Path

    @property
    def edits(self) -> list[LinkEdit]:
        return [edit for file in self.files for edit in file.links]


class OpenLink(NamedTuple):
    """A link of a file an editor holds open: its kind, target as written, and the note
    it leads to (None for none), as kb resolves the unsaved text."""

    kind: str
    target: str
    target_id: int | None


class OpenText(NamedTuple):
    """A file as an editor holds it, unsaved: the text edits are computed on, and its
    links (the store's rows describe the file as saved, which may differ)."""

    text: str
    links: tuple[OpenLink, ...]


class Place(NamedTuple):
    """Where a file is: its path and the notes root it belongs to (both absolute)."""

    file: Path
    root: Path


# -- the new target of one link ---------------------------------------------------------------


def new_target(kind: str, target: str, source: Place, old: Path, new: Path) -> str | None:
    """The target a link written in ``source`` to the note at ``old`` should have once the
    note is at ``new``; None when kb cannot tell (a site URL, a folder link)."""
    if kind in _NAME_KINDS:
        return _new_name(target, old, new, source.root)
    if kind not in _PATH_KINDS or not target or "://" in target:
        return None
    written = unquote(target)
    source_dir = source.file.parent
    if written.startswith("/"):
        candidates = [("/", _join(source.root, written.lstrip("/")))]
    else:
        candidates = [("dir", _join(source_dir, written))]
        if kind in ("hugo-ref", "front-matter"):  # from the root, else the note's folder
            candidates.insert(0, ("root", _join(source.root, written)))
    for base, path in candidates:
        form = _form(path, old)
        if form is None:
            continue
        moved = _with_form(new, form)
        if base == "/":
            if not _inside(moved, source.root):
                return None
            result = "/" + _posix(os.path.relpath(moved, source.root))
        elif base == "root":
            if not _inside(moved, source.root):
                return None
            result = _posix(os.path.relpath(moved, source.root))
        else:
            result = _posix(os.path.relpath(moved, source_dir))
        return _written_like(target, result)
    if kind == "front-matter":
        return target  # a title or an alias: it follows the note by itself
    return None


def moved_own_target(target: str, old: Path, new: Path) -> str:
    """A relative link in the moved note itself, written from its new folder: to the same
    file, or to the note itself when it linked to itself."""
    where = _join(old.parent, unquote(target))
    form = _form(where, old)
    moved = _with_form(new, form) if form is not None else where
    return _written_like(target, _posix(os.path.relpath(moved, new.parent)))


def _new_name(target: str, old: Path, new: Path, root: Path) -> str:
    """A wikilink by file stem or by path follows the new name; by title or alias it
    needs nothing."""
    old_stem = _posix(os.path.relpath(_strip_suffix_path(old), root))
    new_stem = _posix(os.path.relpath(_strip_suffix_path(new), root))
    name = target.strip()
    if "/" in name:
        if _strip_suffix(name.lstrip("/")).casefold() == old_stem.casefold():
            new_rel = _posix(os.path.relpath(new, root))
            return target.replace(name, new_stem if not name.endswith(_SUFFIXES) else new_rel)
        return target
    if _strip_suffix(name).casefold() == _strip_suffix(old.name).casefold():
        new_name = _strip_suffix(new.name)
        return target.replace(name, new_name + (name[len(_strip_suffix(name)) :]))
    return target


def _form(path: Path, old: Path) -> str | None:
    """How ``path`` names the note at ``old``: 'file', 'stem', 'html', or None."""
    if path == old:
        return "file"
    stem = _strip_suffix_path(old)
    if path == stem:
        return "stem"
    if path == stem.with_name(stem.name + ".html"):
        return "html"
    return None


def _with_form(path: Path, form: str) -> Path:
    stem = _strip_suffix_path(path)
    return {"file": path, "stem": stem, "html": stem.with_name(stem.name + ".html")}[form]


def _strip_suffix(name: str) -> str:
    for suffix in _SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _strip_suffix_path(path: Path) -> Path:
    return path.with_name(_strip_suffix(path.name))


def _join(base: Path, written: str) -> Path:
    return Path(os.path.normpath(base / written))


def _posix(path: str) -> str:
    return Path(path).as_posix()


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def is_relative(target: str) -> bool:
    return bool(target) and not target.startswith(("/", "#")) and ":" not in target


def _written_like(old: str, new: str) -> str:
    """``new`` encoded as ``old`` was: fully %-encoded, spaces only, or as it is (spaces
    encoded anyway, since a Markdown link cannot hold one)."""
    if "%" in old and old.isascii():
        return quote(new, safe="/._-~")
    return new.replace("%", "%25").replace(" ", "%20") if "%" in old or " " in new else new


# -- the new bytes of one file --------------------------------------------------------------


def edit_file(
    path: Path, data: bytes, wanted: Mapping[tuple[str, str], str], typed_link_keys: Iterable[str]
) -> tuple[bytes, list[LinkEdit], set[tuple[str, str]]]:
    """``data`` (the bytes of ``path``) with every link target ``(kind, target)`` of
    ``wanted`` replaced by its new text, and nothing else changed; the edits, and the
    wanted links not found in the file."""
    from kb.links.exact_text import ExactText  # deferred: 3 modules more
    from kb.parse.spans import link_spans  # deferred: loads linkify_it, markdown_it, yaml

    exact = ExactText.of(data)
    if exact is None:
        raise KbError(f"{path}: kb cannot rewrite this file's encoding exactly; nothing was moved")
    spans = link_spans(exact.normalised, typed_link_keys)
    replacements = []
    edits = []
    found: set[tuple[str, str]] = set()
    for span in spans:
        key = (span.kind, span.target)
        new = wanted.get(key)
        if new is None and span.kind == "reference":
            new = wanted.get(("image", span.target))  # an image written reference-style
            key = ("image", span.target) if new is not None else key
        if new is None:
            continue
        found.add(key)
        written = exact.normalised[span.start : span.end]
        text = new if written == span.target else _written_like(written, unquote(new))
        if text != written:
            replacements.append((span.start, span.end, text))
            line_start = exact.normalised.rfind("\n", 0, span.start) + 1
            edits.append(LinkEdit(path, span.line, written, text, span.start - line_start))
    return exact.replaced(replacements), edits, set(wanted) - found


# -- where a note may go ----------------------------------------------------------------------


def destination_for(
    source: Path, new_path: str, roots: Iterable[Path], excluded: Callable[[Path, str], str]
) -> tuple[Path, Path]:
    """Where NEW_PATH (a file, or a folder: one that exists or a path ending in ``/``,
    from the current folder) puts the note, and the notes root it lands in. Refused:
    outside every root, an excluded or hidden folder, an existing file."""
    if not new_path.strip():
        raise UsageError("NEW_PATH is empty")
    target = Path(new_path).expanduser()
    into_folder = new_path.endswith(("/", os.sep)) or target.is_dir()
    if into_folder:
        if target.exists() and not target.is_dir():
            raise UsageError(f"{new_path} is a file, not a folder")
        target = target / source.name
    if not target.name.lower().endswith(_SUFFIXES):
        target = target.with_name(target.name + ".md")
    target = Path(os.path.normpath(target.absolute()))
    real_parent = Path(os.path.realpath(target.parent))
    target = real_parent / target.name
    roots = list(roots)
    inner = [r for r in roots if _inside(target, r)]
    if not inner:
        listed = ", ".join(str(r) for r in roots)
        raise UsageError(f"{new_path} is outside every notes root ({listed})")
    root = max(inner, key=lambda r: len(r.parts))  # a note belongs to the innermost root
    rule = excluded(root, target.relative_to(root).as_posix())
    if rule:
        raise UsageError(f"{new_path} is in a folder kb does not read ({rule}); nothing was moved")
    if target.exists() or target.is_symlink():
        raise UsageError(f"{target} already exists")
    if target == source:
        raise UsageError(f"{new_path} is where the note already is")
    return target, root


# -- the plan -----------------------------------------------------------------------------


def plan_move(
    store: Store,
    config: Config,
    note: NoteRef,
    new_path: str,
    unsaved: Mapping[Path, OpenText] | None = None,
) -> MovePlan:
    """What moving ``note`` to ``new_path`` changes: the new bytes of every file that
    links to it (and of the note, for its own relative links), and the links left as
    they are. Reads the store and the files; writes nothing.

    ``unsaved``: the files an editor holds open, by path; each is planned on its unsaved
    text and the links that text holds (a link not saved yet is rewritten too), the
    others on the file and the store's links."""
    unsaved = {Path(os.path.realpath(f)): text for f, text in (unsaved or {}).items()}

    def is_open(file: Path) -> bool:
        return Path(os.path.realpath(file)) in unsaved

    from kb.ingest.walk import exclusion_rule  # the walk's rules, loaded only by kb mv
    from kb.links.move_transaction import check_writable  # deferred: 8 modules more

    row = store.notes.by_id(note.id)
    if row is None:
        raise KbError(f"{note.path} is no longer in the store")
    root_paths = {root.name: root.path for root in config.roots}
    source = root_paths[row.root] / row.rel
    if source.is_symlink():
        raise UsageError(f"{source} is a symbolic link; move the file it points to")
    destination, root = destination_for(
        source,
        new_path,
        list(root_paths.values()),
        lambda _root, rel: exclusion_rule(rel, config),
    )
    wanted: dict[Path, dict[tuple[str, str], str]] = {}
    left: list[LinkAt] = []
    backlinks = store.links.backlinks(note.id)
    names = {n.id: n for n in store.notes.names({b.source_id for b in backlinks})}
    linking: list[tuple[Path, Path, Any]] = []  # (file, its root, link)
    for link in backlinks:
        name = names.get(link.source_id)
        if name is not None and not is_open(root_paths[name.root] / name.rel):
            linking.append((root_paths[name.root] / name.rel, root_paths[name.root], link))
    for file, open_text in unsaved.items():
        file_root = _root_of(file, list(root_paths.values()))
        if file_root is not None and file != Path(os.path.realpath(source)):
            linking += [(file, file_root, o) for o in open_text.links if o.target_id == note.id]
    for file, file_root, link in linking:
        place = Place(file, file_root)
        new = new_target(link.kind, link.target, place, source, destination)
        if new is None:
            left.append(LinkAt(file, link.kind, link.target, getattr(link, "line", 0)))
        elif new != link.target:
            wanted.setdefault(file, {})[(link.kind, link.target)] = new
    moved_folder = source.parent != destination.parent
    source_open = unsaved.get(Path(os.path.realpath(source)))
    own_links = source_open.links if source_open is not None else store.links.outgoing(note.id)
    for own in own_links:
        to_itself = own.target_id == note.id
        if own.kind in RELATIVE_KINDS and is_relative(own.target):
            if not (moved_folder or to_itself):
                continue
            new = moved_own_target(own.target, source, destination)
        elif to_itself:
            found = new_target(own.kind, own.target, Place(destination, root), source, destination)
            if found is None:
                continue
            new = found
        else:
            continue
        if new != own.target:
            wanted.setdefault(source, {})[(own.kind, own.target)] = new
    files = []
    for file, links in _by_real_file(wanted, list(root_paths.values())).items():
        held = unsaved.get(file)
        if held is None:  # an open file is the editor's to write (it may not exist yet)
            check_writable(file)
        before = held.text.encode("utf-8") if held is not None else file.read_bytes()
        after, edits, missing = edit_file(file, before, links, config.typed_link_keys)
        if missing:
            kind, target = sorted(missing)[0]
            raise KbError(
                f"{file}: the {kind} link to {target} is not where the last ingest "
                "found it; run 'kb ingest' and try again (nothing was moved)"
            )
        if edits:
            files.append(FileEdit(file, before, after, tuple(edits)))
    return MovePlan(source, destination, tuple(files), tuple(left), root)


def _root_of(file: Path, roots: list[Path]) -> Path | None:
    """The innermost notes root holding ``file``, None outside them."""
    inner = [r for r in roots if _inside(file, r)]
    return max(inner, key=lambda r: len(r.parts)) if inner else None


def _by_real_file(
    wanted: dict[Path, dict[tuple[str, str], str]], roots: list[Path]
) -> dict[Path, dict[tuple[str, str], str]]:
    """The edits by the file really written: a note that is a symbolic link is edited
    where it points, when that is inside a notes root."""
    real: dict[Path, dict[tuple[str, str], str]] = {}
    for file, links in wanted.items():
        target = Path(os.path.realpath(file))
        if target != file and not any(r == target or r in target.parents for r in roots):
            raise UsageError(
                f"{file} is a link to {target}, outside the notes roots; kb mv does not "
                "edit through it (nothing was moved)"
            )
        real.setdefault(target, {}).update(links)
    return real
