"""How a note connects to the others: outgoing links, backlinks, unlinked mentions and
related notes.

Everything the CLI's ``kb links``/``kb graph`` and the TUI's connection panes show comes
from here, tested without either front end.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kb.fences import code_lines
from kb.links import NoteName
from kb.text import CJK_CHAR, clean_line

FileOf = Callable[[str, str], Path]  # (root name, path inside the root) -> the note's file

if TYPE_CHECKING:
    from kb.engines import SearchEngine
    from kb.naming import NoteRef
    from kb.store import Store

# A title or alias counts for mentions when it is long enough not to match by accident:
# each CJK character counts 2, anything else 1, spaces 0; at least this much in all.
MENTION_MIN_WEIGHT = 6
# ... and when it is not so common that it would be a mention everywhere.
MENTION_MAX_SHARE = 0.10
MENTION_COMMON_FLOOR = 10
RELATED_LIMIT = 10
RELATED_MIN_SCORE = 0.25  # below this, a note shares too little to be called related


@dataclass(slots=True)
class OutgoingLink:
    target: str  # as written
    anchor: str
    kind: str
    rel: str
    line: int
    status: str
    resolved: bool
    path: str | None  # the target note's path when resolved
    title: str | None


@dataclass(slots=True)
class Backlink:
    id: int  # the other note
    path: str
    title: str
    kind: str
    rel: str
    line: int


@dataclass(slots=True)
class Mention:
    id: int  # the other note
    path: str
    title: str
    name: str  # the title or alias that was named
    line: int | None
    context: str


@dataclass(slots=True)
class Related:
    id: int  # the other note
    path: str
    title: str
    score: float
    reason: str


@dataclass(slots=True)
class Connections:
    note: NoteRef
    outgoing: list[OutgoingLink] = field(default_factory=list)
    backlinks: list[Backlink] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    related: list[Related] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "note": asdict(self.note),
            "outgoing": [asdict(x) for x in self.outgoing],
            "backlinks": [asdict(x) for x in self.backlinks],
            "mentions": [asdict(x) for x in self.mentions],
            "related": [asdict(x) for x in self.related],
        }


# -- links and backlinks ------------------------------------------------------------------


def outgoing(store: Store, note_id: int) -> list[OutgoingLink]:
    return [
        OutgoingLink(
            target=row.target,
            anchor=row.anchor,
            kind=row.kind,
            rel=row.rel,
            line=row.line,
            status=row.status,
            resolved=row.target_id is not None and row.status != "broken",
            path=row.target_path,
            title=clean_line(row.target_title) if row.target_title else None,
        )
        for row in store.links.outgoing(note_id)
        if row.kind != "anchor"
    ]


def backlinks(store: Store, note_id: int) -> list[Backlink]:
    return [
        Backlink(
            row.source_id,
            row.source_path,
            clean_line(row.source_title),
            row.kind,
            row.rel,
            row.line,
        )
        for row in store.links.backlinks(note_id)
    ]


# -- mentions -------------------------------------------------------------------------------


def name_weight(name: str) -> int:
    cjk = len(re.findall(f"[{CJK_CHAR}]", name))
    other = len(re.sub(rf"[\s{CJK_CHAR}]", "", name))
    return 2 * cjk + other


def mention_names(note: NoteName, extra_terms: list[str]) -> list[str]:
    """The names of a note that count for mentions (see MENTION_MIN_WEIGHT)."""
    names = [n for n in (note.title, *note.aliases) if name_weight(n) >= MENTION_MIN_WEIGHT]
    return list(dict.fromkeys([*names, *extra_terms]))


def mention_pattern(name: str) -> re.Pattern[str]:
    """The name anywhere, except inside a longer Latin word: ``Redis`` is not in ``Redisson``."""
    body = r"\s*".join(re.escape(part) for part in name.split())
    left = r"(?<![A-Za-z0-9_])" if re.match(r"[A-Za-z0-9_]", name) else ""
    right = r"(?![A-Za-z0-9_])" if re.search(r"[A-Za-z0-9_]$", name) else ""
    return re.compile(left + body + right, re.IGNORECASE)


def mentions(
    store: Store,
    engine: SearchEngine,
    note_id: int,
    file_of: FileOf,
    extra_terms: list[str] | None = None,
) -> list[Mention]:
    """Notes whose text names this note's title or alias without linking to it."""
    from kb.query import Phrase, Query

    names = store.notes.names([note_id])
    if not names:
        return []
    total = max(store.notes.count(), 1)
    linking = store.links.neighbours(note_id)[1]
    found: dict[int, Mention] = {}
    for name in mention_names(names[0], extra_terms or []):
        hits = engine.search(Query(Phrase(name), f'"{name}"'), limit=total)
        configured = name in (extra_terms or [])
        too_common = len(hits) > max(MENTION_COMMON_FLOOR, total * MENTION_MAX_SHARE)
        if too_common and not configured:
            continue
        pattern = mention_pattern(name)
        for hit in hits:
            if hit.note_id in (note_id, *linking) or hit.note_id in found:
                continue
            row = store.notes.by_id(hit.note_id)
            if row is None or not pattern.search(row.text):
                continue  # only in code, or across a line: not a mention
            line, context = _locate(file_of(row.root, row.rel), pattern)
            found[hit.note_id] = Mention(
                hit.note_id, row.path, clean_line(row.title), name, line, context
            )
    return sorted(found.values(), key=lambda m: m.path)


def _locate(path: Path, pattern: re.Pattern[str]) -> tuple[int | None, str]:
    """The first line outside code where the pattern occurs, with a little context."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None, ""
    for number, (line, is_code) in enumerate(code_lines(lines), start=1):
        if is_code:
            continue
        match = pattern.search(line)
        if match:
            start = max(0, match.start() - 30)
            return number, clean_line(line[start : match.end() + 30])
    return None, ""


# -- related notes ------------------------------------------------------------------------

# Evidence, in score points. A link counts once for the pair, a little more both ways.
LINK_WEIGHT = 3.0
BOTH_WAYS_BONUS = 0.5
# Distinctive words in common: this times the share (0..1) of the note's distinctive words
# the other note holds, each word weighed by its idf ...
TERMS_WEIGHT = 6.0
# ... and a distinctive word in both titles, this much more (Redis in 'Redis 学习笔记' and
# in '用 Redis ZSET 做全局时间窗口限流').
TITLE_WORD_WEIGHT = 1.5
# Shared series and tags weigh by rarity, but together never more than this: a sibling in
# a series that shares nothing else ranks below a note that shares the subject's words.
METADATA_CAP = 1.5
# ... and at most this many entries of a list may rest on series and tags alone (the
# series tab lists the siblings anyway).
METADATA_ONLY_ENTRIES = 3
_METADATA = frozenset({"series", "tags"})
_DIRECTIONS = {"both": "links both ways", "out": "links to it", "in": "links here"}


@dataclass(slots=True)
class _Evidence:
    weights: dict[str, float] = field(default_factory=dict)  # kind -> points
    details: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, weight: float, detail: str) -> None:
        self.weights[kind] = self.weights.get(kind, 0.0) + weight
        self.details.setdefault(kind, []).append(detail)

    def score(self) -> float:
        metadata = sum(w for kind, w in self.weights.items() if kind in _METADATA)
        rest = sum(w for kind, w in self.weights.items() if kind not in _METADATA)
        return rest + min(metadata, METADATA_CAP)

    def metadata_only(self) -> bool:
        return self.weights.keys() <= _METADATA


def related(
    store: Store, engine: SearchEngine, note_id: int, limit: int = RELATED_LIMIT
) -> list[Related]:
    """Notes ranked by evidence: explicit links, distinctive words in common, links in
    common, and (capped) shared series and tags; each with a one-line reason that names
    the strongest evidence first."""
    evidence: dict[int, _Evidence] = {}

    def add(other: int, kind: str, weight: float, detail: str) -> None:
        if other != note_id:
            evidence.setdefault(other, _Evidence()).add(kind, weight, detail)

    total = max(store.notes.count(), 2)
    targets, sources = store.links.neighbours(note_id)
    rels: dict[int, list[str]] = {}
    for link in store.links.outgoing(note_id):
        if link.target_id is not None:
            rels.setdefault(link.target_id, []).append(link.rel)
    for backlink in store.links.backlinks(note_id):
        rels.setdefault(backlink.source_id, []).append(backlink.rel)
    for other in targets | sources:
        both = other in targets and other in sources
        direction = "both" if both else "out" if other in targets else "in"
        add(other, "links", LINK_WEIGHT + (BOTH_WAYS_BONUS if both else 0.0), direction)
    for kind, weight in (("tags", 1.0), ("series", 1.5)):
        for shared in store.terms.shared(kind, note_id, max(50, total // 5)):
            rarity = math.log(total / shared.notes_with_it) / math.log(total)
            add(shared.note_id, kind, weight * rarity, shared.name)
    # Links in common count less through notes that link everywhere (Adamic-Adar).
    for co in store.links.co_linked(note_id):
        add(co.note_id, "co-linked", 0.3 / math.log(2 + co.shared_degree), "1")
    document = store.notes.search_documents([note_id])
    if document:
        similar = engine.more_like_this(note_id, document[0][1])
        titles = store.notes.titles([note_id, *(other for other, _, _ in similar)])
        mine = _title_words(titles.get(note_id, ""))
        for other, share, words in similar:
            add(other, "terms", TERMS_WEIGHT * share, ", ".join(words[:3]))
            in_titles = mine & _title_words(titles.get(other, "")) & set(words)
            if in_titles:
                add(other, "title", TITLE_WORD_WEIGHT * len(in_titles), ", ".join(in_titles))
    ranked = sorted(evidence.items(), key=lambda item: (-item[1].score(), item[0]))
    out: list[Related] = []
    metadata_only = 0
    for other, found in ranked:
        if len(out) >= limit or found.score() < RELATED_MIN_SCORE:
            break
        if found.metadata_only():
            metadata_only += 1
            if metadata_only > METADATA_ONLY_ENTRIES:
                continue
        note = store.notes.by_id(other)
        if note is None:
            continue
        reason = _reason(found, [r for r in dict.fromkeys(rels.get(other, [])) if r])
        out.append(
            Related(other, note.path, clean_line(note.title), round(found.score(), 3), reason)
        )
    return out


def _title_words(title: str) -> set[str]:
    from kb.documents import SearchDocument
    from kb.engines import document_terms

    return set(document_terms(SearchDocument(title, "", "", "", "")))


def _reason(found: _Evidence, rels: list[str]) -> str:
    """One line, strongest evidence first: ``terms: roofline, 算术强度 · series: CS336``."""
    pieces = []
    # An explicit link is the surest evidence; the rest by the points it brought.
    for kind in sorted(found.weights, key=lambda k: (k != "links", -found.weights[k])):
        if kind == "links":
            direction = _DIRECTIONS[found.details["links"][0]]
            pieces.append(direction + (f" ({', '.join(rels)})" if rels else ""))
        elif kind == "title":
            pieces.append(f"in both titles: {found.details[kind][0]}")
        elif kind == "co-linked":
            pieces.append(f"links in common: {len(found.details[kind])}")
        else:
            values = list(dict.fromkeys(found.details[kind]))
            pieces.append(f"{kind}: {', '.join(values[:4])}")
    return " · ".join(pieces)
