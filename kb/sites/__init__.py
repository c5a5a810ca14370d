"""Static-site generators read as they are: which kind of folder ``kb init`` is in, and
the URLs a Hugo, Jekyll or docs site publishes each note at, by the generator's own rules.

Pure rules over a folder's config files and a note's front matter: ingest stores the URLs
as the note's site addresses, and link resolution (``kb.links``) looks links up in them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import posixpath
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from kb.models import NOTE_SUFFIXES

if TYPE_CHECKING:
    from kb.config import Config
    from kb.links.resolve import SiteLinks
    from kb.models import ParsedNote

HUGO_CONFIGS = (
    "hugo.toml",
    "hugo.yaml",
    "hugo.yml",
    "hugo.json",
    "config.toml",
    "config.yaml",
    "config.yml",
    "config.json",
)
JEKYLL_CONFIGS = ("_config.yml", "_config.yaml")
MKDOCS_CONFIGS = ("mkdocs.yml", "mkdocs.yaml")
DOCUSAURUS_CONFIGS = ("docusaurus.config.js", "docusaurus.config.ts", "docusaurus.config.mjs")
VUEPRESS_CONFIGS = tuple(f".vuepress/config.{ext}" for ext in ("js", "ts", "mjs", "cjs"))
# Jekyll's named permalink styles (https://jekyllrb.com/docs/permalinks/#built-in-formats).
JEKYLL_STYLES = {
    "date": "/:categories/:year/:month/:day/:title:output_ext",
    "pretty": "/:categories/:year/:month/:day/:title/",
    "ordinal": "/:categories/:year/:y_day/:title:output_ext",
    "weekdate": "/:categories/:year/W:week/:short_day/:title:output_ext",
    "none": "/:categories/:title:output_ext",
}
_JEKYLL_POST_NAME = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})-(.+)$")
_PLACEHOLDER = re.compile(r":([a-z_]+)")
_INDEX_STEMS = frozenset({"index", "_index", "readme"})
_MARKDOWN_LIMIT = 2000  # files looked at when telling a plain folder of notes from an empty one


# -- kb init: what kind of folder is this ----------------------------------------------


@dataclass(frozen=True, slots=True)
class FolderLayout:
    """What ``kb init`` found in a folder: the kind of site, the notes roots it chose (relative
    to the folder) and one line saying so."""

    kind: str  # hugo | jekyll | obsidian | docs | notes | plain | empty
    roots: tuple[str, ...]
    description: str
    exclude: tuple[str, ...] = ()  # folders of the generator's that hold no notes

    @property
    def is_site(self) -> bool:
        """A generator's site, whose pages have URLs links can name."""
        return self.kind in ("hugo", "jekyll", "docs")


def detect_layout(folder: Path) -> FolderLayout:
    """The notes roots of a folder, by the generator whose files are in it."""
    hugo = _hugo_config(folder)
    if hugo is not None and (folder / "content").is_dir():
        return FolderLayout("hugo", ("content",), f"a Hugo site ({hugo.name}): notes in content/")
    jekyll = _first_file(folder, JEKYLL_CONFIGS)
    if jekyll is not None and (folder / "_posts").is_dir():
        # Jekyll's build output and bundled gems (whose READMEs are Markdown) are no notes.
        return FolderLayout(
            "jekyll",
            (".",),
            "a Jekyll site (_config.yml, _posts/): notes in .",
            ("_site", "vendor"),
        )
    if (folder / ".obsidian").is_dir():
        return FolderLayout("obsidian", (".",), "an Obsidian vault (.obsidian/): notes in .")
    docs = _docs_folder(folder)
    if docs is not None:
        docs_dir, tool = docs
        rel = docs_dir.relative_to(folder).as_posix()
        return FolderLayout("docs", (rel,), f"a {tool} docs folder: notes in {rel}/")
    if (folder / "notes").is_dir():
        return FolderLayout("notes", ("notes",), "a notes folder: notes in notes/")
    found = markdown_folders(folder)
    if found:
        return FolderLayout("plain", (".",), f"a folder of Markdown ({_count(found)}): notes in .")
    return FolderLayout("empty", ("notes",), "no notes yet: new notes go in notes/")


def markdown_folders(folder: Path, limit: int = _MARKDOWN_LIMIT) -> dict[str, int]:
    """Markdown files under ``folder`` (hidden folders and node_modules skipped), counted by
    the top-level folder that holds them ('.' for the folder itself); stops at ``limit``."""
    counts: dict[str, int] = {}
    seen = 0
    for here, dirs, files in _walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
        top = here.relative_to(folder).parts[:1]
        for name in files:
            if name.lower().endswith(NOTE_SUFFIXES):
                key = top[0] if top else "."
                counts[key] = counts.get(key, 0) + 1
                seen += 1
        if seen >= limit:
            break
    return counts


# A host is the site's own when at least this many of the distinct paths linked on it, and
# at least half of them, are pages of the site (servicecomb.apache.org: 12 of 18; a site
# the notes merely cite, www.apache.org: 1 of 70).
HOST_MIN_PAGES = 3
HOST_MIN_SHARE = 0.5
_HOSTS_AT_MOST_FILES = 10_000  # past this (~6 s of reading) kb init leaves the hosts to you
_HOST_HEAD_CHARS = 200  # of the body after the front matter: a first heading, for a title
_ABSOLUTE_URL = re.compile(r"https?://[^\s<>()\[\]\"'`]+", re.IGNORECASE)


def inferred_site_hosts(folder: Path, exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """The hosts a site in ``folder`` was served at, read from its own notes: hosts most of
    whose linked paths are the site's pages. A Jekyll site often has no ``url`` in its
    config, and old domains are in no config at all; ``kb init`` writes what this finds into
    kb.yaml's ``site_hosts``, where a user sees and edits it."""
    from collections import defaultdict

    from kb.links.resolve import site_path
    from kb.parse.decode import decode_note
    from kb.parse.frontmatter import split_front_matter
    from kb.parse.note import parse_note

    site = read_site(folder)
    if site is None:
        return ()
    skipped = set(exclude)
    base = site.base_path.strip("/").lower()
    pages: set[str] = set()
    linked: dict[str, set[str]] = defaultdict(set)
    files = 0
    for here, dirs, names in _walk(site.content):
        dirs[:] = sorted(
            d for d in dirs if not d.startswith(".") and d != "node_modules" and d not in skipped
        )
        for name in names:
            if not name.lower().endswith(NOTE_SUFFIXES):
                continue
            files += 1
            if files > _HOSTS_AT_MOST_FILES:
                return ()
            file = here / name
            try:
                text = decode_note(file.read_bytes()).text
            except (OSError, ValueError):
                continue
            front = split_front_matter(text)
            head = text[: len(text) - len(front.body)] + front.body[:_HOST_HEAD_CHARS]
            parsed = parse_note(file.relative_to(site.content).as_posix(), head)
            for url in (*site.urls(file, parsed), *parsed.url_aliases):
                pages.add(site_path(url))
            for url in _ABSOLUTE_URL.findall(text):
                host = host_of(url)
                if host and host not in site.hosts:
                    linked[host].add(_under_base(site_path(url), base))
    found = []
    for host, paths in linked.items():
        landed = len(paths & pages)
        if landed >= HOST_MIN_PAGES and landed >= HOST_MIN_SHARE * len(paths):
            found.append(host)
    return tuple(sorted(found))


def _under_base(path: str, base: str) -> str:
    """``blog/posts/a`` → ``posts/a`` for a site served under /blog."""
    return path[len(base) + 1 :] if base and path.startswith(base + "/") else path


def _walk(folder: Path) -> Iterable[tuple[Path, list[str], list[str]]]:
    import os

    for here, dirs, files in os.walk(folder):
        yield Path(here), dirs, files


def _count(found: dict[str, int]) -> str:
    total = sum(found.values())
    return f"{total}{'+' if total >= _MARKDOWN_LIMIT else ''} Markdown files"


def describe_markdown_elsewhere(found: dict[str, int]) -> str:
    """``content/ (117), README.md`` — where Markdown files are, most first."""
    parts = [
        f"{name}/ ({count})" if name != "." else f"./ ({count})"
        for name, count in sorted(found.items(), key=lambda item: (-item[1], item[0]))
    ]
    return ", ".join(parts[:5]) + (", …" if len(parts) > 5 else "")


def _first_file(folder: Path, names: Iterable[str]) -> Path | None:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    return None


def _hugo_config(folder: Path) -> Path | None:
    found = _first_file(folder, HUGO_CONFIGS)
    if found is None:
        found = _first_file(folder / "config" / "_default", HUGO_CONFIGS)
    return found


def _docs_folder(folder: Path) -> tuple[Path, str] | None:
    """The docs folder of a VuePress, Docusaurus or MkDocs project, with the tool's name."""
    docs = folder / "docs"
    mkdocs = _first_file(folder, MKDOCS_CONFIGS)
    if mkdocs is not None:
        docs_dir = _mkdocs_docs_dir(mkdocs)
        if (folder / docs_dir).is_dir():
            return (folder / docs_dir, "MkDocs")
    if _first_file(folder, DOCUSAURUS_CONFIGS) is not None and docs.is_dir():
        return (docs, "Docusaurus")
    if docs.is_dir() and _first_file(docs, VUEPRESS_CONFIGS) is not None:
        return (docs, "VuePress")
    return None


def _mkdocs_docs_dir(config: Path) -> str:
    # mkdocs.yml uses !!python tags that safe_load refuses: read the one key by its line.
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "docs"
    match = re.search(r"^docs_dir\s*:\s*['\"]?([^'\"#\n]+?)['\"]?\s*(?:#.*)?$", text, re.M)
    return match.group(1).strip().strip("/") if match else "docs"


# -- a site's URL rules ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Site:
    """A Hugo, Jekyll or docs site whose notes kb reads: where its pages are, and the rules
    that make a page's URL."""

    kind: str  # hugo | jekyll | docs
    source: Path  # the site's folder (where its config file is)
    content: Path  # where its pages are: content/ (Hugo), the source (Jekyll), docs/
    base_path: str = ""  # the path the site is served under: '/blog' from baseURL or baseurl
    hosts: tuple[str, ...] = ()  # host names from baseURL or url
    permalinks: dict[str, str] = field(default_factory=dict)  # section/collection -> pattern
    collections: frozenset[str] = frozenset()  # Jekyll collections with output: true
    lower_case: bool = True  # Hugo lower-cases URLs unless disablePathToLower
    config_digest: str = ""  # of the config file, so a change to it re-reads every note

    def signature(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": str(self.source),
            "content": str(self.content),
            "config": self.config_digest,
        }

    def urls(self, file: Path, parsed: ParsedNote) -> list[str]:
        """The URL paths (without host and base path) the site publishes this note at."""
        try:
            rel = PurePosixPath(file.relative_to(self.content).as_posix())
        except ValueError:
            return []
        front = parsed.front_matter
        if self.kind == "hugo":
            found = _hugo_urls(self, rel, parsed, front)
        elif self.kind == "jekyll":
            found = _jekyll_urls(self, rel, parsed, front)
        else:
            found = _docs_urls(rel, front)
        return list(dict.fromkeys(url for url in found if url))


def find_site(config: Config) -> Site | None:
    """The site the knowledge base's notes belong to: found in its folder, in a notes root
    or in the folder above a notes root (``roots: [content]``)."""
    folders = [config.home]
    for root in config.roots:
        folders.append(root.path)
        if root.path.name in ("content", "docs"):
            folders.append(root.path.parent)
    for folder in dict.fromkeys(folders):
        site = read_site(folder)
        if site is not None:
            return site
    return None


def read_site(folder: Path) -> Site | None:
    """The site whose config is in ``folder``, or None when it holds none kb knows."""
    hugo = _hugo_config(folder)
    if hugo is not None and (folder / "content").is_dir():
        return _hugo_site(folder, hugo)
    jekyll = _first_file(folder, JEKYLL_CONFIGS)
    if jekyll is not None:
        return _jekyll_site(folder, jekyll)
    docs = _docs_folder(folder)
    if docs is not None:
        config = _first_file(folder, (*MKDOCS_CONFIGS, *DOCUSAURUS_CONFIGS))
        return Site("docs", folder, docs[0], config_digest=_digest(config) if config else "")
    return None


def site_hosts(site: Site | None, config: Config) -> tuple[str, ...]:
    """Every host a link to this site can name: ``site_url``, ``site_hosts`` in kb.yaml, and
    the host in the site's own config."""
    hosts = [host_of(config.site_url)] if config.site_url else []
    hosts += [host_of(h) for h in config.site_hosts]
    hosts += list(site.hosts if site else ())
    return tuple(dict.fromkeys(h for h in hosts if h))


def site_base_path(site: Site | None, config: Config) -> str:
    if config.site_url:
        return _base_path(config.site_url)
    return site.base_path if site else ""


def host_of(url: str) -> str:
    parts = urlsplit(url if "://" in url else f"https://{url}")
    return parts.netloc.lower()


def _base_path(url: str) -> str:
    path = urlsplit(url if "://" in url else f"https://{url}").path if url else ""
    return "/" + path.strip("/") if path.strip("/") else ""


def _digest(path: Path) -> str:
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
    except OSError:
        return ""


# -- Hugo ---------------------------------------------------------------------------


def _hugo_site(folder: Path, config_file: Path) -> Site:
    data = {str(k).lower(): v for k, v in _read_config(config_file).items()}
    base_url = str(data.get("baseurl") or "")
    permalinks = data.get("permalinks") or {}
    if isinstance(permalinks.get("page"), dict):  # Hugo 0.120+: permalinks.page.<section>
        permalinks = permalinks["page"]
    content_dir = str(data.get("contentdir") or "content")
    return Site(
        "hugo",
        folder,
        folder / content_dir,
        base_path=_base_path(base_url),
        hosts=(host_of(base_url),) if "://" in base_url else (),
        permalinks={str(k): str(v) for k, v in permalinks.items() if isinstance(v, str)},
        lower_case=not bool(data.get("disablepathtolower")),
        config_digest=_digest(config_file),
    )


def urlize(text: str) -> str:
    """Hugo's ``urlize`` of a path, before lower-casing: letters, digits and marks of every
    script and ``. / _ # + ~ - @`` kept, spaces to ``-``, everything else dropped
    (``后缀自动机（SAM）学习笔记`` → ``后缀自动机SAM学习笔记``)."""
    out: list[str] = []
    pending_hyphen = False
    for char in text:
        category = unicodedata.category(char)
        if char in "./\\_#+~-@" or category[0] in "LNM":
            if char == "-" and out and out[-1] == "-":
                continue
            if pending_hyphen and char != "-" and (not out or out[-1] != "-"):
                out.append("-")
            pending_hyphen = False
            out.append(char)
        elif char.isspace() and out:
            pending_hyphen = True
    return "".join(out)


def _hugo_urls(site: Site, rel: PurePosixPath, parsed: ParsedNote, front: dict) -> list[str]:
    explicit = front.get("url")
    if isinstance(explicit, str) and explicit.strip():
        return [_finish(explicit.strip(), site.lower_case)]
    folders = list(rel.parent.parts)
    is_index = rel.stem.lower() in ("index", "_index")
    section = folders[0] if folders else ""
    slug = str(parsed.slug or "").strip()
    if is_index:
        if not folders:
            return []
        if slug and rel.stem.lower() == "index":  # a leaf bundle's slug names its folder
            folders[-1] = slug
        return [_finish("/".join(folders), site.lower_case)]
    pattern = site.permalinks.get(section) if section else None
    if pattern:
        values = _hugo_values(rel, parsed, slug)
        return [_finish(_expand(pattern, values), site.lower_case)]
    leaf = slug or rel.stem
    return [_finish("/".join([*folders, leaf]), site.lower_case)]


def _hugo_values(rel: PurePosixPath, parsed: ParsedNote, slug: str) -> dict[str, str]:
    date = _date(parsed.date)
    title = urlize(parsed.title)
    values = {
        "section": rel.parts[0] if len(rel.parts) > 1 else "",
        "sections": "/".join(rel.parent.parts),
        "title": title,
        "slug": slug or title,
        "filename": rel.stem,
        "slugorfilename": slug or rel.stem,
        "contentbasename": rel.stem,
        "slugorcontentbasename": slug or rel.stem,
    }
    if date is not None:
        values |= {
            "year": f"{date.year:04d}",
            "month": f"{date.month:02d}",
            "monthname": date.strftime("%B").lower(),
            "day": f"{date.day:02d}",
            "weekday": str(date.isoweekday() % 7),
            "weekdayname": date.strftime("%A").lower(),
            "yearday": str(date.timetuple().tm_yday),
        }
    return values


def _finish(path: str, lower_case: bool) -> str:
    """A URL path as kb compares them: urlized, lower case, ``/`` at both ends."""
    path = urlize(path.strip())
    path = path.lower() if lower_case else path
    return re.sub(r"/{2,}", "/", f"/{path.strip('/')}/")


# -- Jekyll -------------------------------------------------------------------------


def _jekyll_site(folder: Path, config_file: Path) -> Site:
    data = _read_config(config_file)
    url = str(data.get("url") or "").strip()
    permalinks: dict[str, str] = {}
    collections: set[str] = set()
    style = str(data.get("permalink") or "date").strip()
    permalinks[""] = JEKYLL_STYLES.get(style, style)
    declared = data.get("collections") or {}
    if isinstance(declared, list):
        declared = {str(name): {} for name in declared}
    if isinstance(declared, dict):
        for name, given in declared.items():
            settings = given if isinstance(given, dict) else {}
            if settings.get("output") is True:
                collections.add(str(name))
            if settings.get("permalink"):
                link = str(settings["permalink"]).strip()
                permalinks[str(name)] = JEKYLL_STYLES.get(link, link)
    for default in data.get("defaults") or []:
        # defaults: - scope: {path: _docs, type: docs}  values: {permalink: ...}
        if not isinstance(default, dict):
            continue
        scope, values = default.get("scope") or {}, default.get("values") or {}
        if isinstance(scope, dict) and isinstance(values, dict) and values.get("permalink"):
            where = str(scope.get("path") or scope.get("type") or "").strip("/")
            permalinks.setdefault(f"scope:{where}", str(values["permalink"]).strip())
    return Site(
        "jekyll",
        folder,
        folder,
        base_path=_base_path(str(data.get("baseurl") or "")),
        hosts=(host_of(url),) if url else (),
        permalinks=permalinks,
        collections=frozenset(collections),
        lower_case=False,
        config_digest=_digest(config_file),
    )


def _jekyll_urls(site: Site, rel: PurePosixPath, parsed: ParsedNote, front: dict) -> list[str]:
    top = rel.parts[0] if len(rel.parts) > 1 else ""
    collection = top[1:] if top.startswith("_") else ""
    own = front.get("permalink")
    pattern = str(own).strip() if isinstance(own, str) and own.strip() else ""
    if not pattern:
        for scope_path in _scopes(rel):
            pattern = site.permalinks.get(f"scope:{scope_path}", "")
            if pattern:
                break
    if collection == "posts" or "_posts" in rel.parts:
        values = _jekyll_post_values(rel, parsed, front)
        if values is None:
            return []
        pattern = pattern or site.permalinks.get("posts") or site.permalinks[""]
    elif collection:
        if not pattern and collection not in site.collections:
            return []  # a collection Jekyll does not write out
        values = _jekyll_page_values(rel, parsed, front, collection)
        pattern = pattern or site.permalinks.get(collection) or "/:collection/:path:output_ext"
    else:
        values = _jekyll_page_values(rel, parsed, front, "")
        pattern = pattern or "/:path:output_ext"
    pattern = JEKYLL_STYLES.get(pattern, pattern)
    path = _expand(pattern, values)
    return ["/" + re.sub(r"/{2,}", "/", path).strip("/") + ("/" if path.endswith("/") else "")]


def _scopes(rel: PurePosixPath) -> list[str]:
    """``_docs/cn/a.md`` → ``_docs/cn``, ``_docs``: the defaults scopes a file falls in."""
    parents = list(rel.parents)[:-1]
    return [p.as_posix() for p in parents]


def _jekyll_post_values(rel: PurePosixPath, parsed: ParsedNote, front: dict) -> dict | None:
    match = _JEKYLL_POST_NAME.match(rel.stem)
    if match is None:
        return None  # Jekyll skips a post whose name has no date
    year, month, day, name = match.groups()
    try:
        date = dt.date(int(year), int(month), int(day))
    except ValueError:
        return None
    given = _date(str(front.get("date") or "")) if front.get("date") else None
    above_posts = rel.parts[: rel.parts.index("_posts")] if "_posts" in rel.parts else ()
    categories = [*above_posts, *_categories(front)]
    values = _date_values(given or date)
    slug = str(front.get("slug") or "").strip()
    values |= {
        "title": _jekyll_slug(slug or name),
        "slug": _jekyll_slug(slug or name),
        "name": _jekyll_slug(name),
        "categories": "/".join(dict.fromkeys(c.lower() for c in categories)),
        "slugified_categories": "/".join(dict.fromkeys(_jekyll_slug(c) for c in categories)),
        "collection": "posts",
        "path": rel.with_suffix("").as_posix(),
        "basename": rel.stem,
        "output_ext": ".html",
    }
    return values


def _jekyll_page_values(
    rel: PurePosixPath, parsed: ParsedNote, front: dict, collection: str
) -> dict[str, str]:
    inside = PurePosixPath(*rel.parts[1:]) if collection else rel
    path = inside.with_suffix("").as_posix()
    date = _date(parsed.date)
    values = _date_values(date) if date else {}
    values |= {
        "title": _jekyll_slug(str(front.get("slug") or rel.stem)),
        "slug": _jekyll_slug(str(front.get("slug") or rel.stem)),
        "name": _jekyll_slug(rel.stem),
        "basename": rel.stem,
        "path": path,
        "collection": collection,
        "categories": "/".join(c.lower() for c in _categories(front)),
        "output_ext": ".html",
    }
    return values


def _categories(front: dict) -> list[str]:
    value = front.get("categories", front.get("category"))
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    return []


def _jekyll_slug(text: str) -> str:
    """Jekyll's ``slugify`` in its ``pretty`` mode, case kept: runs of characters other
    than letters, digits and ``._~!$&'()+,;=@`` become ``-``."""
    return re.sub(r"[^\w.~!$&'()+,;=@]+", "-", text).strip("-")


def _date_values(date: dt.date) -> dict[str, str]:
    iso_year, iso_week, iso_day = date.isocalendar()
    values = {
        "year": f"{date.year:04d}",
        "short_year": f"{date.year % 100:02d}",
        "month": f"{date.month:02d}",
        "i_month": str(date.month),
        "short_month": date.strftime("%b"),
        "long_month": date.strftime("%B"),
        "day": f"{date.day:02d}",
        "i_day": str(date.day),
        "y_day": f"{date.timetuple().tm_yday:03d}",
        "w_year": str(iso_year),
        "week": f"{iso_week:02d}",
        "w_day": str(iso_day),
        "short_day": date.strftime("%a"),
        "long_day": date.strftime("%A"),
    }
    if isinstance(date, dt.datetime):
        values |= {
            "hour": f"{date.hour:02d}",
            "minute": f"{date.minute:02d}",
            "second": f"{date.second:02d}",
        }
    else:
        values |= {"hour": "00", "minute": "00", "second": "00"}
    return values


# -- docs folders ---------------------------------------------------------------------


def _docs_urls(rel: PurePosixPath, front: dict) -> list[str]:
    folder = rel.parent.as_posix().strip(".")
    slug = front.get("slug")
    if isinstance(slug, str) and slug.strip():  # Docusaurus: absolute, or in the folder
        slug = slug.strip()
        path = slug if slug.startswith("/") else posixpath.join(folder, slug)
        return ["/" + path.strip("/") + "/"]
    stem = rel.stem
    path = folder if stem.lower() in _INDEX_STEMS else posixpath.join(folder, stem)
    return ["/" + path.strip("/") + "/" if path.strip("/") else "/"]


# -- shared helpers -------------------------------------------------------------------


def _expand(pattern: str, values: dict[str, str]) -> str:
    """A permalink with ``:placeholders`` filled in; unknown ones are kept as written."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        # The longest known name that starts the word (``:title.html`` → ``title``).
        for end in range(len(name), 0, -1):
            if name[:end] in values:
                return values[name[:end]] + name[end:]
        return match.group(0)

    return _PLACEHOLDER.sub(fill, pattern)


def _date(value: str | None) -> dt.date | None:
    if not value:
        return None
    text = str(value).strip()
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def _read_config(path: Path) -> dict[str, Any]:
    """A site's config as a mapping; a file that does not parse is read leniently, key by
    top-level key, so one odd line never hides the site's URL rules."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    data: Any = None
    try:
        if path.suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
        elif path.suffix == ".json":
            import json

            data = json.loads(text)
        else:
            data = _load_yaml(text)
    except Exception:  # any parser error: fall back to the lenient reading
        data = None
    if isinstance(data, dict):
        return data
    return _top_level_scalars(text)


def _load_yaml(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        # An alias whose anchor is only in a comment (``name: *name``) sinks the whole
        # file: read it again with such aliases as empty values.
        return yaml.safe_load(re.sub(r"(:\s*)\*[\w-]+", r"\1", text))


def _top_level_scalars(text: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z_][\w-]*)\s*[:=]\s*(.*?)\s*(?:#.*)?$", line)
        if match:
            found.setdefault(match.group(1), match.group(2).strip("'\""))
    return found


def site_links(config: Config, site: Site | None = None) -> SiteLinks:
    """What link resolution needs to know of the folders behind the notes: the roots (a
    link to a file that exists there is valid) and, for a site, its hosts and sections."""
    from kb.links.resolve import SiteLinks

    roots = {root.name: root.path for root in config.roots}
    hosts = site_hosts(site, config)
    if site is None:
        return SiteLinks(roots, hosts, site_base_path(None, config))
    files: tuple[Path, ...] = ()
    sections: frozenset[str] | None = None
    if site.kind == "hugo":
        files = tuple(p for p in (site.source / "static",) if p.is_dir())
        if not any(p.lstrip("/").startswith(":") for p in site.permalinks.values()):
            sections = _top_level_names(site.content)
            sections |= {p.strip("/").split("/", 1)[0].lower() for p in site.permalinks.values()}
    elif site.kind == "docs":
        sections = _top_level_names(site.content)
        files = tuple(p for p in (site.content / "public", site.source / "static") if p.is_dir())
    else:
        files = (site.source,)
    return SiteLinks(roots, hosts, site_base_path(site, config), True, files, sections)


def _top_level_names(folder: Path) -> frozenset[str]:
    """``post`` and ``about`` for content/post/ and content/about.md: the first segments
    of the URLs of a site's pages."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return frozenset()
    names = {e.name if e.is_dir() else e.stem for e in entries if not e.name.startswith(".")}
    return frozenset(urlize(n).lower() for n in names)
