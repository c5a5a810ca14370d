"""Jekyll: a site's settings from _config.yml, and the URLs it publishes a post or page at
(permalink styles and placeholders, collections, defaults).
"""

from __future__ import annotations

import datetime as dt
import re
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


# Jekyll's named permalink styles (https://jekyllrb.com/docs/permalinks/#built-in-formats).
JEKYLL_STYLES = {
    "date": "/:categories/:year/:month/:day/:title:output_ext",
    "pretty": "/:categories/:year/:month/:day/:title/",
    "ordinal": "/:categories/:year/:y_day/:title:output_ext",
    "weekdate": "/:categories/:year/W:week/:short_day/:title:output_ext",
    "none": "/:categories/:title:output_ext",
}


_JEKYLL_POST_NAME = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})-(.+)$")


def jekyll_site(folder: Path, config_file: Path | None) -> Site:
    """A Jekyll site's rules from _config.yml, or Jekyll's defaults for a site without one
    (a ``_posts/`` folder: the permalink style ``date``, no host)."""
    data = read_config(config_file) if config_file is not None else {}
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
        base_path=base_path_of(str(data.get("baseurl") or "")),
        hosts=(host_of(url),) if url else (),
        permalinks=permalinks,
        collections=frozenset(collections),
        lower_case=False,
        config_digest=file_digest(config_file) if config_file is not None else "",
    )


def jekyll_urls(site: Site, rel: PurePosixPath, parsed: ParsedNote, front: dict) -> list[str]:
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
    path = expand_placeholders(pattern, values)
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
    given = parse_date(str(front.get("date") or "")) if front.get("date") else None
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
    date = parse_date(parsed.date)
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
