"""Link resolution: which note a written link points at, by the rules in the README.

Pure logic over a snapshot of the notes' names (``LinkIndex``); the store supplies the
snapshot and writes the results. No guessing beyond the rules: a link written relative
to the wrong folder stays broken.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from kb.models import NOTE_SUFFIXES
from kb.text import slugify

_PAGE_SUFFIXES = (".html", ".htm")
_INDEX_NAMES = ("index.md", "_index.md", "README.md", "index.markdown", "readme.md")


class NoteName(NamedTuple):
    """What a note can be called by: its path, file stem, title, aliases and slug."""

    id: int
    root: str
    rel: str
    title: str
    slug: str | None = None
    aliases: tuple[str, ...] = ()
    url_aliases: tuple[str, ...] = ()

    @property
    def stem(self) -> str:
        name = posixpath.basename(self.rel)
        for suffix in NOTE_SUFFIXES:
            if name.lower().endswith(suffix):
                return name[: -len(suffix)]
        return name

    @property
    def folder(self) -> str:
        return posixpath.dirname(self.rel)

    def keys(self) -> set[str]:
        """Every lookup key a link to this note can use (see ``Resolution.key``): when a
        note changes, links that looked up any key it had or has are resolved again."""
        keys = {f"name:{fold(self.stem)}", f"name:{fold(self.title)}"}
        keys.update(f"name:{fold(a)}" for a in self.aliases)
        path_key = _path_key(self.rel)
        keys.add(f"path:{self.root}:{path_key}")
        parts = fold(path_key).split("/")
        keys.update(f"suffix:{'/'.join(parts[i:])}" for i in range(len(parts) - 1))
        keys.add(f"url:{site_path(self.rel)}")
        if posixpath.basename(self.rel) in _INDEX_NAMES:
            keys.add(f"path:{self.root}:{self.folder}")
            keys.add(f"url:{self.folder.lower()}")
        keys.update(f"url:{site_path(a)}" for a in self.url_aliases)
        if self.slug:
            keys.add(f"url:{posixpath.join(self.folder, self.slug).strip('/').lower()}")
            keys.add(f"name:{fold(self.slug)}")
        # A link found by a unique slug looks up only its last URL segment; any note that
        # can answer for that segment must make it look again.
        keys.update({f"url-leaf:{k[4:].rsplit('/', 1)[-1]}" for k in keys if k.startswith("url:")})
        return keys


class LinkToResolve(NamedTuple):
    id: int
    source_id: int
    target: str
    anchor: str
    kind: str


class Resolution(NamedTuple):
    target_id: int | None
    status: str  # resolved | ambiguous | missing-heading | broken | external | attachment
    key: str = ""  # the name or path looked up, so a change to notes with that key re-resolves
    candidates: tuple[int, ...] = ()


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def site_path(url_or_path: str) -> str:
    """``https://x.org/posts/a/`` or ``/posts/a.html`` → ``posts/a``, for comparing URLs."""
    path = urlsplit(url_or_path).path if "://" in url_or_path else url_or_path
    path = unquote(path.split("#")[0].split("?")[0]).strip("/")
    for suffix in (*_PAGE_SUFFIXES, *NOTE_SUFFIXES):
        if path.lower().endswith(suffix):
            path = path[: -len(suffix)]
    if path.endswith("/index") or path == "index":
        path = path[: -len("index")].rstrip("/")
    return path.lower()


def _path_key(rel: str) -> str:
    for suffix in (*NOTE_SUFFIXES, *_PAGE_SUFFIXES):
        if rel.lower().endswith(suffix):
            return rel[: -len(suffix)].rstrip("/")
    return rel.rstrip("/")


class LinkIndex:
    """Lookup tables from every name a note goes by to the notes that have it."""

    __slots__ = (
        "by_alias",
        "by_rel",
        "by_rel_folded",
        "by_slug",
        "by_stem",
        "by_title",
        "by_url",
        "headings",
        "notes",
        "site_host",
    )

    def __init__(
        self, site_host: str = "", headings: Callable[[int], set[str]] | None = None
    ) -> None:
        self.notes: dict[int, NoteName] = {}
        self.by_rel: dict[tuple[str, str], int] = {}
        self.by_rel_folded: dict[tuple[str, str], int] = {}  # for site URLs
        self.by_stem: dict[str, list[int]] = {}
        self.by_title: dict[str, list[int]] = {}
        self.by_alias: dict[str, list[int]] = {}
        self.by_slug: dict[str, list[int]] = {}
        self.by_url: dict[str, int] = {}
        self.site_host = site_host
        self.headings: Callable[[int], set[str]] = headings or (lambda note_id: set())

    @classmethod
    def build(
        cls,
        notes: Iterable[NoteName],
        site_url: str = "",
        headings: Callable[[int], set[str]] | None = None,
    ) -> LinkIndex:
        index = cls(_host(site_url), headings)
        for note in sorted(notes, key=lambda n: n.rel):
            index.notes[note.id] = note
            index.by_rel[(note.root, note.rel)] = note.id
            index.by_rel_folded.setdefault((note.root, note.rel.lower()), note.id)
            index.by_stem.setdefault(fold(note.stem), []).append(note.id)
            index.by_title.setdefault(fold(note.title), []).append(note.id)
            for alias in note.aliases:
                index.by_alias.setdefault(fold(alias), []).append(note.id)
            for url in note.url_aliases:
                index.by_url.setdefault(site_path(url), note.id)
            if note.slug:
                index.by_slug.setdefault(fold(note.slug), []).append(note.id)
        return index

    # -- resolving ----------------------------------------------------------------------

    def resolve(self, link: LinkToResolve) -> Resolution:
        source = self.notes.get(link.source_id)
        if source is None:
            return Resolution(None, "broken")
        kind, target = link.kind, link.target.strip()
        if kind == "image":
            return Resolution(None, "attachment")
        if kind == "anchor" or (not target and kind in ("markdown", "reference")):
            return self._with_anchor(Resolution(source.id, "resolved"), link.anchor)
        if kind == "url":
            return self._resolve_url(target, link.anchor, source)
        if kind in ("wikilink", "embed"):
            found = self._by_name(target, source)
        elif kind == "hugo-ref":
            found = self._by_path(target, source, relative_first=True, root_fallback=True)
        elif kind == "front-matter":
            found = self._by_path(target, source, relative_first=False, root_fallback=True)
            if found.status == "broken":
                named = self._by_name(target, source)
                found = named if named.target_id else found
        else:  # markdown and reference-style links
            found = self._by_path(target, source, relative_first=True, root_fallback=False)
            if found.status == "broken" and target.startswith("/"):
                site = self._by_site_path(site_path(target), source)
                found = site if site.target_id else found
        return self._with_anchor(found, link.anchor)

    def _with_anchor(self, found: Resolution, anchor: str) -> Resolution:
        if found.target_id is None or not anchor or anchor.startswith("^"):
            return found
        wanted = unquote(anchor).strip()
        slugs = {s.casefold() for s in self.headings(found.target_id)}
        if wanted.casefold() in slugs or slugify(wanted) in slugs:
            return found
        return Resolution(found.target_id, "missing-heading", found.key, found.candidates)

    def _by_path(
        self, target: str, source: NoteName, relative_first: bool, root_fallback: bool
    ) -> Resolution:
        decoded = unquote(target)
        if decoded.startswith("/"):
            bases = [""]
        elif relative_first:
            bases = [source.folder, ""] if root_fallback else [source.folder]
        else:
            bases = ["", source.folder]
        first_key = ""
        for base in bases:
            rel = posixpath.normpath(posixpath.join(base, decoded.lstrip("/")))
            if rel.startswith("../") or rel == "..":
                continue
            rel = "" if rel == "." else rel
            first_key = first_key or f"path:{source.root}:{_path_key(rel)}"
            for candidate in _file_candidates(rel, decoded.endswith("/")):
                note_id = self.by_rel.get((source.root, candidate))
                if note_id is not None:
                    return Resolution(note_id, "resolved", first_key)
        if _is_attachment(decoded):
            return Resolution(None, "attachment", first_key)
        return Resolution(None, "broken", first_key)

    def _by_name(self, target: str, source: NoteName) -> Resolution:
        name = unquote(target).strip()
        lowered = name.lower()
        for suffix in NOTE_SUFFIXES:
            if lowered.endswith(suffix):
                name = name[: -len(suffix)]
        key = f"name:{fold(name)}"
        if "/" in name.strip("/"):
            wanted = fold(name.strip("/"))
            matches = self._path_suffix_matches(source.root, wanted)
            return self._choose(matches, source, f"suffix:{wanted}")
        for table in (self.by_stem, self.by_title, self.by_alias):
            named = table.get(fold(name))
            if named:
                return self._choose(named, source, key)
        if _is_attachment(name):
            return Resolution(None, "attachment", key)
        return Resolution(None, "broken", key)

    def _path_suffix_matches(self, root: str, wanted: str) -> list[int]:
        """Notes in ``root`` whose folded path (no suffix) is ``wanted`` or ends in ``/wanted``."""
        return [
            n.id
            for n in self.notes.values()
            if n.root == root
            and (fold(_path_key(n.rel)) == wanted or fold(_path_key(n.rel)).endswith("/" + wanted))
        ]

    def _resolve_url(self, target: str, anchor: str, source: NoteName) -> Resolution:
        parts = urlsplit(target)
        if (
            not self.site_host
            or parts.scheme not in ("http", "https")
            or parts.netloc.lower() != self.site_host
        ):
            return Resolution(None, "external")
        found = self._by_site_path(site_path(target), source)
        return self._with_anchor(found, anchor or parts.fragment)

    def _by_site_path(self, path: str, source: NoteName) -> Resolution:
        """A page of the published site: a URL alias, the file's own path, or section + slug."""
        key = f"url:{path}"
        if path in self.by_url:
            return Resolution(self.by_url[path], "resolved", key)
        for candidate in _file_candidates(path, False):
            # URLs are compared without case: a site serves posts/MyPost.md as /posts/mypost/.
            note_id = self.by_rel_folded.get((source.root, candidate.lower()))
            if note_id is not None:
                return Resolution(note_id, "resolved", key)
        folder, _, slug = path.rpartition("/")
        with_slug = self.by_slug.get(slug, [])
        in_folder = [i for i in with_slug if self.notes[i].folder.lower() == folder]
        if len(in_folder) == 1:
            return Resolution(in_folder[0], "resolved", key)
        if len(with_slug) == 1:
            # Found by a slug unique in the knowledge base: a second note taking the same
            # slug must resolve this link again, so it looks up the slug itself.
            return Resolution(with_slug[0], "resolved", f"url-leaf:{slug}")
        return Resolution(None, "broken", key)

    def _choose(self, matches: list[int], source: NoteName, key: str) -> Resolution:
        """One match resolves; several resolve by the documented rule and are reported."""
        unique = list(dict.fromkeys(matches))
        if not unique:
            return Resolution(None, "broken", key)
        if len(unique) == 1:
            return Resolution(unique[0], "resolved", key)
        chosen = min(unique, key=lambda i: self._preference(i, source))
        return Resolution(chosen, "ambiguous", key, tuple(sorted(unique)))

    def _preference(self, note_id: int, source: NoteName) -> tuple[int, int, str]:
        # Same folder as the linking note first, then the shallowest path, then by name.
        note = self.notes[note_id]
        return (0 if note.folder == source.folder else 1, note.rel.count("/"), note.rel)


def _file_candidates(rel: str, folder_only: bool) -> list[str]:
    """``x``, ``x.md``, ``x/index.md``, ``x/_index.md``, ``x/README.md``, ``x.html`` → ``x.md``."""
    rel = rel.rstrip("/")
    candidates = [] if folder_only else [rel, *(rel + suffix for suffix in NOTE_SUFFIXES)]
    if rel.lower().endswith(_PAGE_SUFFIXES):
        stem = rel.rsplit(".", 1)[0]
        candidates += [stem + suffix for suffix in NOTE_SUFFIXES]
    prefix = f"{rel}/" if rel else ""
    candidates += [f"{prefix}{name}" for name in _INDEX_NAMES]
    return candidates


# Repository files that are linked without an extension and are never notes.
_PLAIN_FILES = frozenset(
    {
        "license",
        "licence",
        "copying",
        "notice",
        "authors",
        "contributors",
        "changelog",
        "makefile",
        "dockerfile",
        "version",
    }
)


def _is_attachment(target: str) -> bool:
    """A file that is not a note or a page (an image, a PDF, a script, LICENSE)."""
    name = posixpath.basename(target.rstrip("/"))
    if "." not in name:
        return name.lower() in _PLAIN_FILES
    suffix = "." + name.rsplit(".", 1)[1].lower()
    if suffix in (*NOTE_SUFFIXES, *_PAGE_SUFFIXES):
        return False
    return suffix[1:].isalnum() and not suffix[1:].isdigit() and len(suffix) <= 6


def _host(site_url: str) -> str:
    if not site_url:
        return ""
    parts = urlsplit(site_url if "://" in site_url else f"https://{site_url}")
    return parts.netloc.lower()
