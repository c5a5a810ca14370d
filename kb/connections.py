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


def related(
    store: Store, engine: SearchEngine, note_id: int, limit: int = RELATED_LIMIT
) -> list[Related]:
    """Notes ranked by explicit links, shared tags and series, distinctive terms in common
    and links in common, each with a one-line reason."""
    scores: dict[int, float] = {}
    reasons: dict[int, dict[str, list[str]]] = {}

    def add(other: int, weight: float, kind: str, detail: str) -> None:
        scores[other] = scores.get(other, 0.0) + weight
        reasons.setdefault(other, {}).setdefault(kind, []).append(detail)

    total = max(store.notes.count(), 2)
    for link in store.links.outgoing(note_id):
        if link.target_id and link.target_id != note_id:
            add(link.target_id, 3.0, "links-out", link.rel)
    for backlink in store.links.backlinks(note_id):
        add(backlink.source_id, 3.0, "links-in", backlink.rel)
    for kind, label, weight in (("tags", "tags", 1.0), ("series", "series", 1.5)):
        for shared in store.terms.shared(kind, note_id, max(50, total // 5)):
            add(shared.note_id, weight * math.log(total / shared.notes_with_it), label, shared.name)
    # Links in common count less through notes that link everywhere (Adamic-Adar).
    for co in store.links.co_linked(note_id):
        add(co.note_id, 0.3 / math.log(2 + co.shared_degree), "co-linked", "1")
    document = store.notes.search_documents([note_id])
    if document:
        for other, weight, terms in engine.more_like_this(note_id, document[0][1]):
            add(other, 2.0 * weight, "terms", ", ".join(terms))
    scores.pop(note_id, None)
    best = sorted(scores.items(), key=lambda item: item[1], reverse=True)[:limit]
    ranked = [(o, score) for o, score in best if score >= RELATED_MIN_SCORE]
    out = []
    for other, score in ranked:
        note = store.notes.by_id(other)
        if note is None:
            continue
        out.append(
            Related(
                other,
                note.path,
                clean_line(note.title),
                round(score, 3),
                _reason(reasons[other]),
            )
        )
    return out


def _reason(parts: dict[str, list[str]]) -> str:
    pieces = []
    out, into = "links-out" in parts, "links-in" in parts
    if out or into:
        direction = "links both ways" if out and into else "links to it" if out else "links here"
        rels = [
            r for r in dict.fromkeys(parts.get("links-out", []) + parts.get("links-in", [])) if r
        ]
        pieces.append(direction + (f" ({', '.join(rels)})" if rels else ""))
    for kind in ("series", "tags", "terms", "co-linked"):
        values = list(dict.fromkeys(parts.get(kind, [])))
        if not values:
            continue
        if kind == "co-linked":
            pieces.append(f"links in common: {len(parts[kind])}")
        else:
            pieces.append(f"{kind}: {', '.join(values[:4])}")
    return " · ".join(pieces)
