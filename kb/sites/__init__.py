"""Static-site generators read as they are: which kind of folder ``kb init`` is in, and
the URLs a Hugo, Jekyll or docs site publishes each note at, by the generator's own rules.

Pure rules over a folder's config files and a note's front matter: ingest stores the URLs
as the note's site addresses, and link resolution (``kb.names.resolve``) looks links up in
them.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from kb.sites.common import (
    DOCUSAURUS_CONFIGS,
    JEKYLL_CONFIGS,
    MKDOCS_CONFIGS,
    Site,
    base_path_of,
    docs_folder,
    file_digest,
    first_file,
    host_of,
    hugo_config_file,
    is_hugo_site,
    is_jekyll_site,
)
from kb.sites.docs import docs_urls
from kb.sites.hugo import hugo_site, hugo_urls, urlize
from kb.sites.jekyll import jekyll_site, jekyll_urls

if TYPE_CHECKING:
    from kb.config import Config
    from kb.models import ParsedNote
    from kb.names.resolve import SiteLinks


# -- kb init: what kind of folder is this ----------------------------------------------


# -- a site's URL rules ------------------------------------------------------------------


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
    if is_hugo_site(folder):
        return hugo_site(folder, hugo_config_file(folder))
    jekyll = first_file(folder, JEKYLL_CONFIGS)
    if jekyll is not None or is_jekyll_site(folder):
        return jekyll_site(folder, jekyll)
    docs = docs_folder(folder)
    if docs is not None:
        config = first_file(folder, (*MKDOCS_CONFIGS, *DOCUSAURUS_CONFIGS))
        return Site("docs", folder, docs[0], config_digest=file_digest(config) if config else "")
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
        return base_path_of(config.site_url)
    return site.base_path if site else ""


# -- Hugo ---------------------------------------------------------------------------


# -- Jekyll -------------------------------------------------------------------------


# -- docs folders ---------------------------------------------------------------------


# -- shared helpers -------------------------------------------------------------------


def site_links(config: Config, site: Site | None = None) -> SiteLinks:
    """What link resolution needs to know of the folders behind the notes: the roots (a
    link to a file that exists there is valid) and, for a site, its hosts and sections."""
    from kb.names.resolve import SiteLinks  # deferred: 4 modules more

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


def site_urls(site: Site, file: Path, parsed: ParsedNote) -> list[str]:
    """The URL paths (without host and base path) the site publishes this note at."""
    try:
        rel = PurePosixPath(file.relative_to(site.content).as_posix())
    except ValueError:
        return []
    front = parsed.front_matter
    if site.kind == "hugo":
        found = hugo_urls(site, rel, parsed, front)
    elif site.kind == "jekyll":
        found = jekyll_urls(site, rel, parsed, front)
    else:
        found = docs_urls(rel, front)
    return list(dict.fromkeys(url for url in found if url))
