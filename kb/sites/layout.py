"""What kind of folder kb init is in: a Hugo or Jekyll site, a docs folder, a vault or a folder
of Markdown; where its notes are, and the hosts its links name.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kb.models import NOTE_SUFFIXES
from kb.sites import read_site, site_urls
from kb.sites.common import (
    JEKYLL_CONFIGS,
    docs_folder,
    first_file,
    host_of,
    hugo_config_file,
    is_hugo_site,
    is_jekyll_site,
)

_MARKDOWN_LIMIT = 2000  # files looked at when telling a plain folder of notes from an empty one


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
    if is_hugo_site(folder):
        hugo = hugo_config_file(folder)
        sign = hugo.name if hugo is not None else "archetypes/"
        return FolderLayout("hugo", ("content",), f"a Hugo site ({sign}): notes in content/")
    if is_jekyll_site(folder):
        jekyll = first_file(folder, JEKYLL_CONFIGS)
        sign = f"{jekyll.name}, _posts/" if jekyll is not None else "_posts/"
        # Jekyll's build output and bundled gems (whose READMEs are Markdown) are no notes.
        return FolderLayout(
            "jekyll", (".",), f"a Jekyll site ({sign}): notes in .", ("_site", "vendor")
        )
    if (folder / ".obsidian").is_dir():
        return FolderLayout("obsidian", (".",), "an Obsidian vault (.obsidian/): notes in .")
    docs = docs_folder(folder)
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


def markdown_elsewhere(home: Path, roots: list[Path]) -> str:
    """When the notes roots hold no notes: where under ``home`` Markdown files are, and
    how to read them; '' when there are none (or a root is ``home`` itself)."""
    if any(root == home for root in roots):
        return ""
    found = markdown_folders(home)
    if not found:
        return ""
    named = ", ".join(f"{root.name}/" for root in roots)
    return (
        f"no notes in {named}, but Markdown files are elsewhere in {home}: "
        f"{describe_markdown_elsewhere(found)}; name their folder in 'roots' in "
        f"{home / 'kb.yaml'}"
    )


def inferred_site_hosts(folder: Path, exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """The hosts a site in ``folder`` was served at, read from its own notes: hosts most of
    whose linked paths are the site's pages. A Jekyll site often has no ``url`` in its
    config, and old domains are in no config at all; ``kb init`` writes what this finds into
    kb.yaml's ``site_hosts``, where a user sees and edits it."""

    from kb.names.resolve import site_path  # deferred: 3 modules more
    from kb.parse.decode import decode_note  # deferred: 2 modules more
    from kb.parse.frontmatter import split_front_matter  # deferred: loads yaml
    from kb.parse.note import parse_note  # deferred: loads linkify_it, markdown_it, yaml

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
            for url in (*site_urls(site, file, parsed), *parsed.url_aliases):
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
