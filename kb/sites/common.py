"""What the site generators share: their config files' names, reading a config (YAML, TOML,
JSON), placeholders, dates, hosts and base paths.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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


PLACEHOLDER = re.compile(r":([a-z_]+)")


INDEX_STEMS = frozenset({"index", "_index", "readme"})


def first_file(folder: Path, names: Iterable[str]) -> Path | None:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    return None


def is_hugo_site(folder: Path) -> bool:
    """Hugo's own layout: ``content/`` beside a config file or beside ``archetypes/`` (the
    folder ``hugo new site`` makes; a site may keep its config elsewhere)."""
    if not (folder / "content").is_dir():
        return False
    return hugo_config_file(folder) is not None or (folder / "archetypes").is_dir()


def is_jekyll_site(folder: Path) -> bool:
    """Jekyll's own layout: ``_posts/`` (with or without ``_config.yml``, which a site may
    leave out and Jekyll does not need)."""
    return (folder / "_posts").is_dir()


def hugo_config_file(folder: Path) -> Path | None:
    found = first_file(folder, HUGO_CONFIGS)
    if found is None:
        found = first_file(folder / "config" / "_default", HUGO_CONFIGS)
    return found


def docs_folder(folder: Path) -> tuple[Path, str] | None:
    """The docs folder of a VuePress, Docusaurus or MkDocs project, with the tool's name."""
    docs = folder / "docs"
    mkdocs = first_file(folder, MKDOCS_CONFIGS)
    if mkdocs is not None:
        docs_dir = _mkdocs_docs_dir(mkdocs)
        if (folder / docs_dir).is_dir():
            return (folder / docs_dir, "MkDocs")
    if first_file(folder, DOCUSAURUS_CONFIGS) is not None and docs.is_dir():
        return (docs, "Docusaurus")
    if docs.is_dir() and first_file(docs, VUEPRESS_CONFIGS) is not None:
        return (docs, "VuePress")
    return None


def host_of(url: str) -> str:
    parts = urlsplit(url if "://" in url else f"https://{url}")
    return parts.netloc.lower()


def base_path_of(url: str) -> str:
    path = urlsplit(url if "://" in url else f"https://{url}").path if url else ""
    return "/" + path.strip("/") if path.strip("/") else ""


def file_digest(path: Path) -> str:
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
    except OSError:
        return ""


def expand_placeholders(pattern: str, values: dict[str, str]) -> str:
    """A permalink with ``:placeholders`` filled in; unknown ones are kept as written."""

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        # The longest known name that starts the word (``:title.html`` → ``title``).
        for end in range(len(name), 0, -1):
            if name[:end] in values:
                return values[name[:end]] + name[end:]
        return match.group(0)

    return PLACEHOLDER.sub(fill, pattern)


def parse_date(value: str | None) -> dt.date | None:
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


def read_config(path: Path) -> dict[str, Any]:
    """A site's config as a mapping; a file that does not parse is read leniently, key by
    top-level key, so one odd line never hides the site's URL rules."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    data: Any = None
    try:
        if path.suffix == ".toml":
            import tomllib  # deferred: 6 modules more

            data = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            data = load_yaml(text)
    except Exception:  # any parser error: fall back to the lenient reading
        data = None
    if isinstance(data, dict):
        return data
    return _top_level_scalars(text)


def load_yaml(text: str) -> Any:
    import yaml  # deferred: loads yaml

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


def _mkdocs_docs_dir(config: Path) -> str:
    # mkdocs.yml uses !!python tags that safe_load refuses: read the one key by its line.
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "docs"
    match = re.search(r"^docs_dir\s*:\s*['\"]?([^'\"#\n]+?)['\"]?\s*(?:#.*)?$", text, re.M)
    return match.group(1).strip().strip("/") if match else "docs"


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
