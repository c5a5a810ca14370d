"""Link resolution: which note a written link points at, by the rules in the README.

Pure logic over a snapshot of the notes' names (``LinkIndex``); the store supplies the
snapshot and writes the results. No guessing beyond the rules: a link written relative
to the wrong folder stays broken.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from kb.models import NOTE_SUFFIXES
from kb.text import slugify

_PAGE_SUFFIXES = (".html", ".htm")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
# An anchor an HTML element sets: <a name="x">, <span id="x">.
_HTML_ANCHOR = re.compile(r"""<[a-zA-Z][^<>]*?\b(?:name|id)\s*=\s*["']?([^"'\s<>]+)""")
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
        own_key = path_key(self.rel)
        keys.add(f"path:{self.root}:{own_key}")
        parts = fold(own_key).split("/")
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


class SiteLinks(NamedTuple):
    """What link resolution knows of the folders behind the notes (kb.sites makes it)."""

    roots: Mapping[str, Path] = {}  # root name -> folder: links to files that exist are valid
    hosts: tuple[str, ...] = ()  # hosts a URL to the site names, beside site_url's
    base_path: str = ""  # the path the site is served under, stripped from site links
    is_site: bool = False  # the notes are a published site (Hugo, Jekyll, docs)
    files: tuple[Path, ...] = ()  # where the site's own files are (Hugo static/)
    # The first segments of the site's pages (post of /post/x/): a site link outside
    # them is a page kb does not have rather than a broken link. None: every one counts.
    sections: frozenset[str] | None = None


class LinkToResolve(NamedTuple):
    id: int
    source_id: int
    target: str
    anchor: str
    kind: str


class Resolution(NamedTuple):
    target_id: int | None
    # resolved | ambiguous | missing-heading | broken | external | attachment | missing-file
    # | tag | category (a site's list page of a tag or category: kb's own list answers it)
    status: str
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


# The list pages a site generates for its taxonomies (Hugo's defaults, Jekyll's archives):
# /tags/redis/ lists the notes tagged redis, /categories/ every category.
TAXONOMIES = {"tags": "tag", "tag": "tag", "categories": "category", "category": "category"}


def taxonomy_page(path: str) -> tuple[str, str] | None:
    """``tags/redis`` (a site path, as ``site_path`` gives it) → ("tag", "redis"); ("tag", "")
    for the list of every tag; None for any other page."""
    first, _, rest = path.strip("/").partition("/")
    kind = TAXONOMIES.get(first)
    if kind is None or "/" in rest.strip("/"):
        return None
    return kind, rest.strip("/")


def path_key(rel: str) -> str:
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
        "html_anchors",
        "notes",
        "site",
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
        self.site = SiteLinks()
        self.html_anchors: dict[int, frozenset[str]] = {}

    @classmethod
    def build(
        cls,
        notes: Iterable[NoteName],
        site_url: str = "",
        headings: Callable[[int], set[str]] | None = None,
        site: SiteLinks | None = None,
    ) -> LinkIndex:
        index = cls(host_of_url(site_url), headings)
        index.site = site or SiteLinks()
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
            return self._image(target, source)
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
        elif kind == "liquid-link":  # {% link path %}: a path in the site's folder
            found = self._by_path("/" + target.lstrip("/"), source, False, True)
        elif kind == "liquid-post":  # {% post_url name %}: a post by its file name
            found = self._by_name(target, source)
        else:  # markdown, reference-style links and images
            found = self._by_path(target, source, relative_first=True, root_fallback=False)
            if found.status in ("broken", "missing-file") and target.startswith("/"):
                found = self._site_link(target, source, found)
        return self._with_anchor(found, link.anchor)

    def _image(self, target: str, source: NoteName) -> Resolution:
        """An image is a file: found, missing, or (with no folder to look in) unchecked."""
        if not target or _SCHEME.match(target) or target.startswith("//"):
            return Resolution(None, "external" if target else "attachment")
        if source.root not in self.site.roots:
            return Resolution(None, "attachment")
        found = self._by_path(target, source, relative_first=True, root_fallback=False)
        if found.target_id is not None or found.status == "broken":
            found = Resolution(None, "attachment" if found.target_id else "missing-file", found.key)
        if found.status == "missing-file" and target.startswith("/"):
            found = self._site_link(target, source, found)
        status = "attachment" if found.target_id is not None else found.status
        return Resolution(None, status, found.key)

    def _site_link(self, target: str, source: NoteName, found: Resolution) -> Resolution:
        """A root-relative link in a site: a page by its URL, a file of the site, or a page
        the site has that is not a note."""
        path = self._without_base(site_path(target))
        site = self._by_site_path(path, source)
        if site.target_id is not None:
            return site
        taxonomy = taxonomy_page(path)
        if taxonomy is not None:
            return Resolution(None, taxonomy[0], site.key)
        if not self.site.is_site:
            return found
        relative = unquote(target.split("#", maxsplit=1)[0].split("?", maxsplit=1)[0]).lstrip("/")
        if any(_exists(folder / relative) for folder in self.site.files):
            return Resolution(None, "attachment", site.key)
        if self.site.sections is not None and path.split("/", 1)[0] not in self.site.sections:
            return Resolution(None, "external", site.key)
        return site if found.status == "broken" else found

    def _without_base(self, path: str) -> str:
        base = self.site.base_path.strip("/").lower()
        if base and (path == base or path.startswith(base + "/")):
            return path[len(base) :].lstrip("/")
        return path

    def _with_anchor(self, found: Resolution, anchor: str) -> Resolution:
        wanted = unquote(anchor).strip()
        if found.target_id is None or not wanted or wanted.startswith("^"):
            return found
        slugs = {s.casefold() for s in self.headings(found.target_id)}
        if wanted.casefold() in slugs or slugify(wanted) in slugs:
            return found
        if self._has_html_anchor(found.target_id, wanted):
            return found
        return Resolution(found.target_id, "missing-heading", found.key, found.candidates)

    def _has_html_anchor(self, note_id: int, anchor: str) -> bool:
        """Whether the note's file names the anchor in HTML (``<a name="x">``, ``id="x"``).
        Read once per note, and only for notes that a link's anchor no heading answers."""
        if note_id not in self.html_anchors:
            self.html_anchors[note_id] = self._read_html_anchors(note_id)
        return anchor.casefold() in self.html_anchors[note_id]

    def _read_html_anchors(self, note_id: int) -> frozenset[str]:
        note = self.notes.get(note_id)
        folder = self.site.roots.get(note.root) if note is not None else None
        if note is None or folder is None:
            return frozenset()
        try:
            text = (folder / note.rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return frozenset()
        if "<" not in text:
            return frozenset()
        return frozenset(found.casefold() for found in _HTML_ANCHOR.findall(text))

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
            first_key = first_key or f"path:{source.root}:{path_key(rel)}"
            for candidate in _file_candidates(rel, decoded.endswith("/")):
                note_id = self.by_rel.get((source.root, candidate))
                if note_id is not None:
                    return Resolution(note_id, "resolved", first_key)
        if not decoded.startswith("/"):
            across = self._across_roots(decoded, source)
            if across is not None:
                return across
        folder = self.site.roots.get(source.root)
        if folder is not None:
            # Any file that exists is a valid target; a missing one is a missing file when
            # it names a file rather than a note.
            for base in bases:
                rel = posixpath.normpath(posixpath.join(base, decoded.lstrip("/")))
                if not rel.startswith("../") and _exists(folder / rel):
                    return Resolution(None, "attachment", first_key)
            if _is_attachment(decoded):
                return Resolution(None, "missing-file", first_key)
        elif _is_attachment(decoded):
            return Resolution(None, "attachment", first_key)
        return Resolution(None, "broken", first_key)

    def _across_roots(self, decoded: str, source: NoteName) -> Resolution | None:
        """A relative link that leaves its note's root, or enters a root nested in it
        (``roots: [notes, notes/sub]``): the note at that place on disk, in whichever
        root holds it (the innermost)."""
        folder = self.site.roots.get(source.root)
        if folder is None or len(self.site.roots) < 2:
            return None
        place = Path(os.path.normpath(folder / source.folder / decoded))
        holders = [
            (name, root)
            for name, root in self.site.roots.items()
            if name != source.root and (place == root or root in place.parents)
        ]
        if not holders:
            return None
        name, root = max(holders, key=lambda holder: len(holder[1].parts))
        rel = place.relative_to(root).as_posix()
        rel = "" if rel == "." else rel
        for candidate in _file_candidates(rel, decoded.endswith("/")):
            note_id = self.by_rel.get((name, candidate))
            if note_id is not None:
                return Resolution(note_id, "resolved", f"path:{name}:{path_key(rel)}")
        return None

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
            and (fold(path_key(n.rel)) == wanted or fold(path_key(n.rel)).endswith("/" + wanted))
        ]

    def _resolve_url(self, target: str, anchor: str, source: NoteName) -> Resolution:
        parts = urlsplit(target)
        hosts = (self.site_host, *self.site.hosts) if self.site_host else self.site.hosts
        if parts.scheme not in ("http", "https") or parts.netloc.lower() not in hosts:
            return Resolution(None, "external")
        found = self._site_link(parts.path or "/", source, Resolution(None, "broken"))
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


# A file extension: letters and digits (and - or _ inside), with a letter, up to 16 long
# (.png, .drawio, .pcapng, .excalidraw, .tar.gz's .gz); "v1.2" or "a. b" are not.
_EXTENSION = re.compile(r"[a-z0-9][a-z0-9_-]{0,15}")


def _is_attachment(target: str) -> bool:
    """A file that is not a note or a page (an image, a PDF, a drawing, a script, LICENSE)."""
    name = posixpath.basename(target.split("?", maxsplit=1)[0].rstrip("/"))
    if "." not in name:
        return name.lower() in _PLAIN_FILES
    suffix = name.rsplit(".", 1)[1].lower()
    if f".{suffix}" in (*NOTE_SUFFIXES, *_PAGE_SUFFIXES):
        return False
    return bool(_EXTENSION.fullmatch(suffix)) and not suffix.isdigit() and suffix.isascii()


def _exists(path: Path) -> bool:
    try:
        return os.path.exists(path)  # noqa: PTH110 - one stat, no Path objects made
    except (OSError, ValueError):  # a name too long, or with a NUL
        return False


def host_of_url(site_url: str) -> str:
    if not site_url:
        return ""
    parts = urlsplit(site_url if "://" in site_url else f"https://{site_url}")
    return parts.netloc.lower()
