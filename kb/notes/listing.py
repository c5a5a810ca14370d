"""What ``kb list``, ``kb recent``, ``kb tags``, ``kb stats`` and ``kb show`` return,
built from the store's rows: filters, sort orders, ``--format`` templates and totals.

Pure over the store: the facade opens the reader and calls these; the CLI prints them.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from kb.errors import KbError, UsageError
from kb.notes.facts import NoteFacts, read_facts
from kb.text import clean_line

if TYPE_CHECKING:
    from kb.store import ListedRow, Store

# date, modified and words list the newest or longest first; --reverse turns any order round.
SORT_KEYS = ("path", "title", "date", "modified", "words")
_DESCENDING = frozenset({"date", "modified", "words"})
FIELDS = ("path", "file", "title", "date", "tags", "series", "draft", "words", "modified", "id")


class ListFilters(NamedTuple):
    """What ``kb list`` keeps; every given filter must hold (repeated ones too)."""

    tags: tuple[str, ...] = ()
    series: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    since: str | None = None  # front-matter date, ISO prefix (2024, 2024-03, 2024-03-10)
    until: str | None = None
    modified_since: datetime | None = None  # the file's modification time
    modified_until: datetime | None = None
    draft: bool | None = None
    orphan: bool = False  # no resolved link in or out
    linked_from: int | None = None  # notes this note links to
    linking_to: int | None = None  # notes that link to this note


class ListedNote(NamedTuple):
    id: int
    path: str  # relative to the notes root (prefixed with the root when there are several)
    root: str
    rel: str
    title: str
    date: str | None
    draft: bool
    words: int
    modified: str  # the file's modification time, ISO 8601 in UTC
    tags: tuple[str, ...]
    series: tuple[str, ...]

    def fields(self, file: str) -> dict[str, Any]:
        """The note's fields for --json and --format; ``file`` is its path from the
        current folder."""
        return {
            "path": self.path,
            "file": file,
            "title": self.title,
            "date": self.date,
            "tags": list(self.tags),
            "series": list(self.series),
            "draft": self.draft,
            "words": self.words,
            "modified": self.modified,
            "id": self.id,
        }


def list_notes(
    store: Store,
    filters: ListFilters,
    sort: str | None = None,
    reverse: bool = False,
    limit: int | None = None,
    among: list[int] | None = None,
) -> list[ListedNote]:
    """The notes that pass ``filters``, in ``sort`` order (by path; with ``among``, the
    ids of a search, in its ranked order), at most ``limit`` of them."""
    keep = _kept_ids(store, filters)
    if _sql_can_list(filters, keep, among, sort, reverse, limit):
        # kb list -n 20, kb recent: the store sorts and stops, no pass over every note.
        rows = store.notes.listed(sort or "path", limit if limit is not None else -1)
        return _listed_notes(store, rows)
    rows = store.notes.listed()
    if among is not None:
        rank = {note_id: i for i, note_id in enumerate(among)}
        rows = sorted((r for r in rows if r.id in rank), key=lambda r: rank[r.id])
    if keep is not None:
        rows = [r for r in rows if r.id in keep]
    rows = [r for r in rows if _modified_in(r, filters)]
    if sort is not None:
        rows = sorted(rows, key=_sort_key(sort), reverse=sort in _DESCENDING)
        if sort == "date":  # undated notes last, whichever way
            rows = [r for r in rows if r.date] + [r for r in rows if not r.date]
    if reverse:
        rows.reverse()
    if limit is not None:
        rows = rows[:limit]
    return _listed_notes(store, rows)


def _sql_can_list(
    filters: ListFilters,
    keep: set[int] | None,
    among: list[int] | None,
    sort: str | None,
    reverse: bool,
    limit: int | None,
) -> bool:
    return (
        limit is not None
        and keep is None
        and among is None
        and not reverse
        and filters.modified_since is None
        and filters.modified_until is None
        and (sort or "path") in ("path", "date", "modified", "words")
    )


def _listed_notes(store: Store, rows: list[ListedRow]) -> list[ListedNote]:
    tags = _terms_of(store, "tags", rows)
    series = _terms_of(store, "series", rows)
    return [
        ListedNote(
            r.id,
            r.path,
            r.root,
            r.rel,
            clean_line(r.title),
            r.date,
            r.draft,
            r.word_count,
            _iso(r.mtime_ns),
            tuple(clean_line(t) for t in tags.get(r.id, ())),
            tuple(clean_line(s) for s in series.get(r.id, ())),
        )
        for r in rows
    ]


def _terms_of(store: Store, kind: str, rows: list[ListedRow]) -> dict[int, list[str]]:
    """The tags (or series) of the listed notes: note by note for a short list (kb list
    -n 20 on 10,000 notes), all in one query for a long one."""
    if len(rows) > 100:
        return store.terms.by_note(kind)
    return {row.id: store.terms.of_note(kind, row.id) for row in rows}


def _kept_ids(store: Store, filters: ListFilters) -> set[int] | None:
    """The notes the store-side filters keep; None when none is given."""
    kept: set[int] | None = None

    def narrow(ids: set[int]) -> None:
        nonlocal kept
        kept = ids if kept is None else kept & ids

    for name, values in (
        ("tag", filters.tags),
        ("series", filters.series),
        ("category", filters.categories),
        ("path", filters.paths),
    ):
        for value in values:
            narrow(store.notes.filter_ids(name, value))
    if filters.since or filters.until:
        narrow(store.notes.filter_ids("date", f"{filters.since or ''}..{filters.until or '~'}"))
    if filters.draft is not None:
        narrow(store.notes.filter_ids("draft", "true" if filters.draft else "false"))
    if filters.orphan:
        linked = store.links.linked_ids()
        narrow(set(store.notes.all_ids()) - linked)
    if filters.linked_from is not None:
        narrow(store.links.neighbours(filters.linked_from)[0])
    if filters.linking_to is not None:
        narrow(store.links.neighbours(filters.linking_to)[1])
    return kept


def _modified_in(row: ListedRow, filters: ListFilters) -> bool:
    seconds = row.mtime_ns / 1e9
    if filters.modified_since and seconds < filters.modified_since.timestamp():
        return False
    return not (filters.modified_until and seconds >= filters.modified_until.timestamp())


def _sort_key(sort: str) -> Any:
    if sort not in SORT_KEYS:
        raise UsageError(f"unknown sort {sort!r}; use one of {', '.join(SORT_KEYS)}")
    return {
        "path": lambda r: r.path,
        "title": lambda r: (r.title.casefold(), r.path),
        "date": lambda r: (r.date or "", r.path),
        "modified": lambda r: r.mtime_ns,
        "words": lambda r: r.word_count,
    }[sort]


def _iso(mtime_ns: int) -> str:
    return datetime.fromtimestamp(mtime_ns / 1e9, UTC).isoformat(timespec="seconds")


def parse_filters(
    note_id: Callable[[str], int],
    named: Callable[[str], str] = str,
    *,
    tags: Iterable[str] = (),
    series: Iterable[str] = (),
    categories: Iterable[str] = (),
    paths: Iterable[str] = (),
    since: str | None = None,
    until: str | None = None,
    modified_since: str | None = None,
    modified_until: str | None = None,
    draft: bool | None = None,
    orphan: bool = False,
    linked_from: str | None = None,
    linking_to: str | None = None,
) -> ListFilters:
    """``kb list``'s filters as a face receives them (``kb list``'s options, ``kb mcp``'s
    list_notes arguments) read into ``ListFilters``: the dates checked, the two notes found
    by ``note_id``. ``named`` spells a filter in an error as the face does (``since`` →
    ``--since`` for the CLI); an empty string is no filter."""
    return ListFilters(
        tags=tuple(tags),
        series=tuple(series),
        categories=tuple(categories),
        paths=tuple(paths),
        since=parse_date(since, named("since")) if since else None,
        until=parse_date(until, named("until")) if until else None,
        modified_since=(
            parse_moment(modified_since, named("modified_since"), end=False)
            if modified_since
            else None
        ),
        modified_until=(
            parse_moment(modified_until, named("modified_until"), end=True)
            if modified_until
            else None
        ),
        draft=draft,
        orphan=orphan,
        linked_from=note_id(linked_from) if linked_from else None,
        linking_to=note_id(linking_to) if linking_to else None,
    )


def parse_date(value: str, option: str) -> str:
    """A front-matter date bound: ``2024``, ``2024-03`` or ``2024-03-10``."""
    parts = value.split("-")
    if not (
        1 <= len(parts) <= 3
        and all(p.isdigit() for p in parts)
        and len(parts[0]) == 4
        and all(len(p) == 2 for p in parts[1:])
    ):
        raise UsageError(
            f"{option} takes a date such as 2024, 2024-03 or 2024-03-10, not {value!r}"
        )
    return value


def parse_moment(value: str, option: str, end: bool) -> datetime:
    """A file-time bound in local time: a date (the whole day, when it ends a range) or a
    date and time."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise UsageError(
            f"{option} takes a date or a time such as 2024-03-10 or 2024-03-10T09:30, not {value!r}"
        ) from None
    if end and len(value) <= 10:
        moment = moment.replace(hour=23, minute=59, second=59, microsecond=999999)
    return moment if moment.tzinfo else moment.astimezone()


def format_note(template: str, fields: dict[str, Any]) -> str:
    """``--format '{date} {title}'``: the template with the note's fields; lists are
    joined by spaces, a missing date is empty. An unknown field is a usage error."""
    values = {
        key: " ".join(value) if isinstance(value, list) else "" if value is None else value
        for key, value in fields.items()
    }
    try:
        return string.Formatter().vformat(template, (), values)
    except KeyError as exc:
        raise UsageError(
            f"--format has no field {exc.args[0]!r}; the fields are {', '.join(FIELDS)}"
        ) from None
    except (ValueError, IndexError) as exc:
        raise UsageError(f"--format {template!r}: {exc}") from None


# -- kb tags, kb stats, kb show -------------------------------------------------------


def tag_counts(store: Store, sort: str = "count") -> list[tuple[str, int]]:
    """Every tag with its number of notes: most used first, or by name."""
    counts = [(clean_line(tag), count) for tag, count in store.terms.counts("tags")]
    if sort == "name":
        return sorted(counts, key=lambda item: item[0].casefold())
    return sorted(counts, key=lambda item: (-item[1], item[0].casefold()))


class KbStats(NamedTuple):
    notes: int
    words: int
    tags: int
    series: int
    links: dict[str, int]  # LINK_TOTALS, each present (0 too): what text and JSON both show
    by_year: dict[str, int]  # "undated" for notes without a date
    store_bytes: int
    index_bytes: int  # the whole index folder, store included
    engine: str
    last_ingest: str | None  # when the last ingest ran (its own record), ISO 8601 in UTC


# What kb stats counts of the links, from the store's statuses: an ambiguous link still
# leads to a note, a missing heading is as broken as a missing note.
LINK_TOTALS = {
    "resolved": ("resolved", "ambiguous"),
    "broken": ("broken", "missing-heading"),
    "external": ("external",),
    "attachments": ("attachment",),
    "missing_files": ("missing-file",),
}


def link_totals(by_status: dict[str, int]) -> dict[str, int]:
    """The links counted as kb stats shows them, every total present, zeros included."""
    return {
        name: sum(by_status.get(status, 0) for status in statuses)
        for name, statuses in LINK_TOTALS.items()
    }


def kb_stats(store: Store, store_path: Path, index_dir: Path, engine: str) -> KbStats:
    """Totals from stored counts, never a pass over the notes' text."""
    notes, words = store.notes.totals()
    store_files = [p for p in store_path.parent.glob(store_path.name + "*") if p.is_file()]
    # The ingest records its time; a store from a kb before that has only the store file's
    # own time (never -shm's, which every reader touches).
    last = store.meta.get("last_ingest")
    if last is None and store_path.is_file():
        last = _iso(store_path.stat().st_mtime_ns)
    return KbStats(
        notes=notes,
        words=words,
        tags=len(store.terms.counts("tags")),
        series=len(store.terms.counts("series")),
        links=link_totals(store.links.status_counts()),
        by_year={year or "undated": count for year, count in store.notes.by_year()},
        store_bytes=sum(p.stat().st_size for p in store_files),
        index_bytes=sum(p.stat().st_size for p in index_dir.rglob("*") if p.is_file()),
        engine=engine,
        last_ingest=last,
    )


@dataclass(frozen=True, slots=True)
class NoteDetails(NoteFacts):
    """A note as ``kb show`` gives it: its facts as stored (not yet cleaned for a screen),
    its categories and aliases, its plain text and its file's Markdown."""

    categories: list[str]
    aliases: list[str]
    text: str  # the stored plain text
    markdown: str  # the file as it is on disk (the stored text if the file is gone)

    def as_json(self, file: str) -> dict[str, Any]:
        return {
            "path": self.path,
            "file": file,
            "title": self.title,
            "date": self.date,
            "tags": self.tags,
            "series": self.series,
            "categories": self.categories,
            "aliases": self.aliases,
            "headings": [
                {"level": level, "text": text, "anchor": anchor}
                for level, text, anchor in self.headings
            ],
            "text": self.text,
            "markdown": self.markdown,
        }


def note_details(store: Store, note_id: int, file: Path) -> NoteDetails:
    from kb.parse.decode import BinaryFile, decode_note  # deferred: 2 modules more

    row = store.notes.by_id(note_id)
    if row is None:
        raise KbError(f"note {note_id} is no longer in the store")
    try:
        markdown = decode_note(file.read_bytes()).text
    except (OSError, BinaryFile):
        markdown = row.text
    facts = read_facts(store, row, file, clean=False)
    return NoteDetails(
        **{name: getattr(facts, name) for name in NoteFacts.__slots__},
        categories=store.terms.of_note("categories", note_id),
        aliases=[a.alias for a in store.notes.aliases(note_id) if a.kind == "name"],
        text=row.text,
        markdown=markdown,
    )


def markdown_body(markdown: str) -> str:
    """A note's Markdown without its front matter."""
    from kb.parse.frontmatter import split_front_matter  # deferred: loads yaml

    return split_front_matter(markdown).body
