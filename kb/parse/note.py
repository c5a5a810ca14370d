"""One note file's text → a ParsedNote. Pure: no file system, no database."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from kb.models import DEFAULT_TYPED_LINK_KEYS, Link, ParsedNote, Problem
from kb.parse.frontmatter import split_front_matter
from kb.parse.limits import body_over_limit
from kb.parse.markdown import TooDeep, parse_markdown, plain_parts
from kb.text import clean_line, split_list, word_count

_INDEX_STEMS = frozenset({"index", "_index", "readme"})
_DATED_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[-_ .]|$)")
_LOOSE_DATE = re.compile(
    r"^(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?"
)
_TRUE = frozenset({"true", "yes", "on", "1"})


def parse_note(
    rel_path: str, text: str, typed_link_keys: Iterable[str] = DEFAULT_TYPED_LINK_KEYS
) -> ParsedNote:
    """Parse a note's decoded text; ``rel_path`` (POSIX, relative to its root) names it."""
    front = split_front_matter(text)
    meta = front.data
    problems: list[Problem] = list(front.problems)
    over_limit = body_over_limit(front.body)
    if over_limit is None:
        try:
            body = parse_markdown(front.body, front.body_start_line)
        except TooDeep as exc:
            over_limit = str(exc)
    if over_limit is not None:
        message = f"Markdown body has {over_limit}; kept as plain text"
        problems.append(Problem("too-complex", message))
        body = plain_parts(front.body)
    path = PurePosixPath(rel_path)

    date, date_problem = _note_date(meta.get("date"), path.name)
    if date_problem:
        problems.append(date_problem)
    aliases = _string_list(meta.get("aliases", meta.get("alias")), split=False)
    tags = _dedupe([t.lstrip("#") for t in _string_list(_first(meta, "tags", "tag"))] + body.tags)

    return ParsedNote(
        title=_title(meta.get("title"), body.first_h1, path),
        date=date,
        draft=str(meta.get("draft", "")).strip().lower() in _TRUE,
        slug=clean_line(str(meta["slug"])) if meta.get("slug") else None,
        tags=tags,
        categories=_string_list(_first(meta, "categories", "category")),
        series=_string_list(meta.get("series"), split=False),
        keywords=_string_list(meta.get("keywords")),
        name_aliases=[a for a in aliases if not is_url_alias(a)],
        url_aliases=[a for a in aliases if is_url_alias(a)],
        headings=body.headings,
        links=_typed_links(meta, text, front.body_start_line, typed_link_keys) + body.links,
        text=body.text,
        code=body.code,
        summary=body.summary,
        word_count=word_count(body.text),
        front_matter=meta,
        problems=problems,
    )


def is_url_alias(alias: str) -> bool:
    """Hugo aliases that are old URLs of the note rather than other names for it."""
    return alias.startswith("/") or "://" in alias or alias.endswith(".html")


def fallback_note(rel_path: str, text: str, error: str) -> ParsedNote:
    """A note kb could not parse: kept, with its text searchable, and the error as a
    warning, so one odd file never loses a note."""
    plain = plain_parts(text)
    return ParsedNote(
        title=_title(None, "", PurePosixPath(rel_path)),
        date=None,
        draft=False,
        slug=None,
        tags=[],
        categories=[],
        series=[],
        keywords=[],
        name_aliases=[],
        url_aliases=[],
        headings=[],
        links=[],
        text=plain.text,
        code="",
        summary=plain.summary,
        word_count=word_count(text),
        front_matter={},
        problems=[Problem("parse-error", f"cannot parse, kept as plain text: {error}")],
    )


def _title(value: Any, first_h1: str, path: PurePosixPath) -> str:
    if isinstance(value, str | int | float) and clean_line(str(value)):
        return clean_line(str(value))
    if first_h1:
        return clean_line(first_h1)
    if path.stem.lower() in _INDEX_STEMS and path.parent.name:
        return path.parent.name
    return path.stem


def _note_date(value: Any, file_name: str) -> tuple[str | None, Problem | None]:
    if value not in (None, ""):
        date = normalise_date(value)
        if date:
            return date, None
        problem = Problem("front-matter", f"unrecognised date {clean_line(str(value))[:40]!r}")
    else:
        problem = None
    match = _DATED_NAME.match(file_name)
    if match and _valid_date(*map(int, match.groups())):
        return "-".join(match.groups()), problem
    return None, problem


def normalise_date(value: Any) -> str | None:
    """ISO 8601 for a front-matter date: ``YYYY-MM-DD``, or with time and offset when given."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    text = str(value).strip()
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        pass
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).isoformat()
    except ValueError:
        pass
    match = _LOOSE_DATE.match(text)
    if not match:
        return None
    year, month, day = (int(g) for g in match.groups()[:3])  # the pattern requires all three
    hour, minute, second = (int(g) if g else None for g in match.groups()[3:])
    if not _valid_date(year, month, day):
        return None
    if hour is None:
        return f"{year:04d}-{month:02d}-{day:02d}"
    try:
        return dt.datetime(year, month, day, hour, minute or 0, second or 0).isoformat()
    except ValueError:
        return f"{year:04d}-{month:02d}-{day:02d}"


def _valid_date(year: Any, month: Any, day: Any) -> bool:
    try:
        dt.date(year, month, day)
    except (TypeError, ValueError):
        return False
    return True


def _first(meta: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if meta.get(key) not in (None, ""):
            return meta[key]
    return None


def _string_list(value: Any, split: bool = True) -> list[str]:
    """A front-matter list: YAML/TOML lists, or a string separated by commas or spaces."""
    if value is None:
        return []
    if isinstance(value, list):
        items = [clean_line(str(v)) for v in value if v is not None and not isinstance(v, dict)]
    elif isinstance(value, dict):
        return []
    elif isinstance(value, str) and split:
        items = [clean_line(v) for v in split_list(value)]
    else:
        items = [clean_line(str(value))]
    return _dedupe(i for i in items if i)


def _dedupe(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item and item.lower() not in seen:
            seen.add(item.lower())
            out.append(item)
    return out


def typed_link_values(meta: dict[str, Any], key: str) -> list[str]:
    """The targets a typed front-matter link key holds, as written (``name#anchor``)."""
    return _string_list(meta.get(key), split=False)


def _typed_links(
    meta: dict[str, Any], text: str, body_start_line: int, keys: Iterable[str]
) -> list[Link]:
    links: list[Link] = []
    header_lines = text.split("\n", body_start_line)[: body_start_line - 1]
    for key in keys:
        targets = typed_link_values(meta, key)
        if not targets:
            continue
        line = _key_line(header_lines, key)
        for target in targets:
            name, _, anchor = target.partition("#")
            links.append(Link(name.strip(), "front-matter", line, anchor.strip(), "", key))
    return links


def _key_line(header_lines: list[str], key: str) -> int:
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*[:=]")
    for index, line in enumerate(header_lines):
        if pattern.match(line):
            return index + 1
    return 1
