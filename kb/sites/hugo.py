"""Hugo: a site's settings from its config, and the URLs it publishes a page at (permalinks,
urlize, sections, aliases).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from kb.sites.common import (
    Site,
    base_path_of,
    expand_placeholders,
    file_digest,
    host_of,
    parse_date,
    read_config,
)

if TYPE_CHECKING:
    from kb.models import ParsedNote


def hugo_site(folder: Path, config_file: Path | None) -> Site:
    """A Hugo site's rules from its config, or Hugo's defaults for a site without one
    (``content/`` beside ``archetypes/``)."""
    given = read_config(config_file) if config_file is not None else {}
    data = {str(k).lower(): v for k, v in given.items()}
    base_url = str(data.get("baseurl") or "")
    permalinks = data.get("permalinks") or {}
    if isinstance(permalinks.get("page"), dict):  # Hugo 0.120+: permalinks.page.<section>
        permalinks = permalinks["page"]
    content_dir = str(data.get("contentdir") or "content")
    return Site(
        "hugo",
        folder,
        folder / content_dir,
        base_path=base_path_of(base_url),
        hosts=(host_of(base_url),) if "://" in base_url else (),
        permalinks={str(k): str(v) for k, v in permalinks.items() if isinstance(v, str)},
        lower_case=not bool(data.get("disablepathtolower")),
        config_digest=file_digest(config_file) if config_file is not None else "",
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


def hugo_urls(site: Site, rel: PurePosixPath, parsed: ParsedNote, front: dict) -> list[str]:
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
        return [_finish(expand_placeholders(pattern, values), site.lower_case)]
    leaf = slug or rel.stem
    return [_finish("/".join([*folders, leaf]), site.lower_case)]


def _hugo_values(rel: PurePosixPath, parsed: ParsedNote, slug: str) -> dict[str, str]:
    date = parse_date(parsed.date)
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
