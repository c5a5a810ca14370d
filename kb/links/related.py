"""Related notes: the notes that share the most with one note, each with the reasons a reader
can check (links, typed links, distinctive words, title words, tags and series).
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kb.links.connections import RELATED_LIMIT, Related
from kb.text import clean_line

FileOf = Callable[[str, str], Path]  # (root name, path inside the root) -> the note's file

if TYPE_CHECKING:
    from kb.engines.contract import SearchEngine
    from kb.store import Store


RELATED_MIN_SCORE = 0.25  # below this, a note shares too little to be called related


# Evidence, in score points. A link counts once for the pair, a little more both ways,
# and more when it is typed (``lecture:``, ``uses:``): the writer said how the notes relate.
LINK_WEIGHT = 3.0


BOTH_WAYS_BONUS = 0.5


TYPED_LINK_BONUS = 1.0


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


# A tag or series on more notes than the word ceiling (kb.engines.contract.frequency_ceiling) says
# little, but a small folder's one series (20 of 45 bundled notes) still counts.
METADATA_MIN_CEILING = 50


_METADATA = frozenset({"series", "tags"})


_CHINESE_WORD = re.compile("[\u3400-\u9fff]+")


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
    from kb.engines.contract import frequency_ceiling  # deferred: 2 modules more

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
        weight = LINK_WEIGHT + (BOTH_WAYS_BONUS if both else 0.0)
        weight += TYPED_LINK_BONUS if any(rels.get(other, [])) else 0.0
        add(other, "links", weight, direction)
    # Series and tags: kept aside, as most notes sharing them share nothing else; they join
    # the notes with other evidence, and at most METADATA_ONLY_ENTRIES others, the best.
    metadata: dict[int, _Evidence] = {}
    common = max(METADATA_MIN_CEILING, frequency_ceiling(total))
    for kind, weight in (("tags", 1.0), ("series", 1.5)):
        for shared in store.terms.shared(kind, note_id, common):
            if shared.note_id != note_id:
                rarity = math.log(total / shared.notes_with_it) / math.log(total)
                found = metadata.setdefault(shared.note_id, _Evidence())
                found.add(kind, weight * rarity, shared.name)
    # Links in common count less through notes that link everywhere (Adamic-Adar).
    for co in store.links.co_linked(note_id):
        add(co.note_id, "co-linked", 0.3 / math.log(2 + co.shared_degree), "1")
    document = store.notes.search_documents([note_id])
    from kb.query.stopwords import is_general_word  # deferred: 2 modules more

    def is_distinctive(word: str) -> bool:
        return not (_CHINESE_WORD.fullmatch(word) and is_general_word(word))

    if document:
        similar = engine.more_like_this(note_id, document[0][1])
        titles = store.notes.titles([note_id, *(other for other, _, _ in similar)])
        mine = _title_words(titles.get(note_id, ""))
        for other, share, shared_words in similar:
            # No evidence rests on a general word (作为, 时间) or on a word nearly every
            # note holds: the words a reader is shown are the distinctive ones, and a
            # note that shares only general words shares no subject.
            words = [w for w in shared_words if is_distinctive(w)]
            if not words:
                continue
            add(other, "terms", TERMS_WEIGHT * share, ", ".join(words[:3]))
            in_titles = mine & set(words)
            if in_titles:  # only then is the other title worth cutting into words
                in_titles &= _title_words(titles.get(other, ""))
            if in_titles:
                add(other, "title", TITLE_WORD_WEIGHT * len(in_titles), ", ".join(in_titles))
    for other, found in metadata.items():
        if other in evidence:
            for kind, details in found.details.items():
                evidence[other].weights[kind] = found.weights[kind]
                evidence[other].details[kind] = details
    alone = [(other, found) for other, found in metadata.items() if other not in evidence]
    best_alone = heapq.nlargest(
        METADATA_ONLY_ENTRIES, alone, key=lambda item: (item[1].score(), -item[0])
    )
    evidence.update(best_alone)
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
    from kb.engines.contract import document_terms  # deferred: 2 modules more
    from kb.ingest.documents import SearchDocument  # deferred: 5 modules more

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
