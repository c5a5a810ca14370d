"""Related notes: the notes that share the most with one note, each with the reasons a reader
can check (links, typed links, distinctive words, title words, tags and series, and, when
the notes are embedded, closeness in meaning with the two passages that are closest).
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from kb.links.connections import RELATED_LIMIT, Related
from kb.text import clean_line

FileOf = Callable[[str, str], Path]  # (root name, path inside the root) -> the note's file
_T = TypeVar("_T")

if TYPE_CHECKING:
    from kb.engines.contract import SearchEngine
    from kb.meaning.neighbours import Neighbourhood
    from kb.store import NoteText, Store

# (note, how many, hubness) -> the notes near it in meaning, or None (not embedded)
NearInMeaning = Callable[[int, int, float], "Neighbourhood | None"]


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


# A tag or series on more notes than the word ceiling (kb.engines.similar.frequency_ceiling) says
# little, but a small folder's one series (20 of 45 bundled notes) still counts.
METADATA_MIN_CEILING = 50


_METADATA = frozenset({"series", "tags"})


# Meaning: how near two notes are, in spreads (standard deviations) above how near this
# note is to the others on average, counts from MEANING_FROM spreads up, this many points a
# spread, for the whole notes and for their nearest pair of passages (weighed by
# MEANING_PAIR_SHARE), together at most MEANING_CAP points. Fitted on the judged pairs of
# benchmarks/links_quality/related.json, reported on held-out folds (docs/meaning.md).
MEANING_WEIGHT = 1.0
MEANING_FROM = 1.5
MEANING_PAIR_SHARE = 0.5
MEANING_CAP = 4.0
MEANING_NEAR = 20  # notes asked of the meaning index (by either similarity)
# A note near every note (a table of contents) is lowered by this share of how much nearer
# than usual it is to all of them (kb.meaning.neighbours).
MEANING_HUBNESS = 1.0


# Siblings (notes of this note's series under its top folder) take at most this many places of
# the first SERIES_TOP (the series tab lists them all).
SERIES_IN_TOP = 2
SERIES_TOP = 5


# A word in the titles (or a tag) of at least GENRE_MIN_NOTES notes, most pairs of which
# (GENRE_SHARE) share no other title word, tag or series, says what kind of note it is
# (笔记, notes, lecture, 学习), not what it is about: never evidence. Judged on at most
# GENRE_SAMPLE of its notes (the first by id).
GENRE_MIN_NOTES = 3
GENRE_SHARE = 0.5
GENRE_SAMPLE = 40


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
    store: Store,
    engine: SearchEngine,
    note_id: int,
    limit: int = RELATED_LIMIT,
    near: NearInMeaning | None = None,
    folder_names: Collection[str] = (),
) -> list[Related]:
    """Notes ranked by evidence: explicit links, distinctive words in common, links in
    common, closeness in meaning (when ``near`` reads the notes' vectors), and (capped)
    shared series and tags; each with a one-line reason that names the strongest evidence
    first. Genre words (``genre_words``; ``folder_names`` are the notes folders') are never
    evidence; notes of this note's series take at most SERIES_IN_TOP of the first
    SERIES_TOP places."""
    from kb.engines.similar import frequency_ceiling  # deferred: 2 modules more

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
    genre = _genre_words_of(store, note_id, folder_names)
    # Series and tags: kept aside, as most notes sharing them share nothing else; they join
    # the notes with other evidence, and at most METADATA_ONLY_ENTRIES others, the best.
    metadata: dict[int, _Evidence] = {}
    common = max(METADATA_MIN_CEILING, frequency_ceiling(total))
    for kind, weight in (("tags", 1.0), ("series", 1.5)):
        for shared in store.terms.shared(kind, note_id, common):
            if shared.note_id != note_id and (
                kind == "series" or shared.name.casefold() not in genre
            ):
                rarity = math.log(total / shared.notes_with_it) / math.log(total)
                found = metadata.setdefault(shared.note_id, _Evidence())
                found.add(kind, weight * rarity, shared.name)
    # Links in common count less through notes that link everywhere (Adamic-Adar).
    for co in store.links.co_linked(note_id):
        add(co.note_id, "co-linked", 0.3 / math.log(2 + co.shared_degree), "1")
    document = store.notes.search_documents([note_id])
    from kb.words.stopwords import is_general_word  # deferred: 2 modules more

    def is_distinctive(word: str) -> bool:
        if word.casefold() in genre:
            return False
        return not (_CHINESE_WORD.fullmatch(word) and is_general_word(word))

    if document:
        similar = engine.more_like_this(note_id, document[0][1])
        titles = store.notes.titles([note_id, *(other for other, _, _ in similar)])
        mine = _title_words(titles.get(note_id, ""))
        for other, share, shared_words in similar:
            # No evidence rests on a general word (作为, 时间), a genre word (笔记) or a
            # word nearly every note holds: the words a reader is shown are the
            # distinctive ones, and a note that shares only general words shares no
            # subject. A genre word's part of the share goes with it (counted as an
            # equal part: the engine gives the share, not each word's weight).
            words = [w for w in shared_words if is_distinctive(w)]
            if not words:
                continue
            kept = 1.0 if not genre else len(words) / max(len(shared_words), 1)
            add(other, "terms", TERMS_WEIGHT * share * kept, ", ".join(words[:3]))
            in_titles = mine & set(words)
            if in_titles:  # only then is the other title worth cutting into words
                in_titles &= _title_words(titles.get(other, ""))
            if in_titles:
                add(other, "title", TITLE_WORD_WEIGHT * len(in_titles), ", ".join(in_titles))
    passages: dict[int, tuple[int, int]] = {}  # other -> (my passage, theirs)
    around = near(note_id, MEANING_NEAR, MEANING_HUBNESS) if near is not None else None
    if around is not None:
        for candidate in around.near:
            points = meaning_points(
                candidate.note, around.note_mean, around.note_spread
            ) + MEANING_PAIR_SHARE * meaning_points(
                candidate.pair, around.pair_mean, around.pair_spread
            )
            if points > 0:
                add(candidate.note_id, "meaning", min(points, MEANING_CAP), "")
                passages[candidate.note_id] = (candidate.mine, candidate.theirs)
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
    kept_ranked = []
    metadata_only = 0
    for other, found in ranked:
        if found.score() < RELATED_MIN_SCORE:
            break
        if found.metadata_only():
            metadata_only += 1
            if metadata_only > METADATA_ONLY_ENTRIES:
                continue
        kept_ranked.append((other, found))
    # Siblings: notes of this note's series under its top folder (the other lectures and
    # the assignments of a course); a post of the series elsewhere, built on this
    # lecture, is not held back.
    in_series = [other for other, found in kept_ranked if "series" in found.weights]
    paths = store.notes.dates_and_paths([note_id, *in_series])
    folder = {other: _top_folder(path, folder_names) for other, (_, path) in paths.items()}

    def sibling(item: tuple[int, _Evidence]) -> bool:
        return item[0] in folder and folder[item[0]] == folder.get(note_id)

    order = cap_series(kept_ranked, sibling)
    out: list[Related] = []
    for other, found in order:
        if len(out) >= limit:
            break
        note = store.notes.by_id(other)
        if note is None:
            continue
        if other in passages:
            found.details["meaning"] = [_meaning_detail(store, note_id, note, passages[other])]
        reason = _reason(found, [r for r in dict.fromkeys(rels.get(other, [])) if r])
        out.append(
            Related(other, note.path, clean_line(note.title), round(found.score(), 3), reason)
        )
    return out


def _top_folder(path: str, root_names: Collection[str]) -> str:
    """The first folder of a note's path inside its root ('' at the root's top)."""
    parts = path.split("/")[:-1]
    if len(parts) > 1 and parts[0] in root_names:  # several roots: paths begin with one
        parts = parts[1:]
    return parts[0] if parts else ""


def meaning_points(similarity: float, mean: float, spread: float) -> float:
    """Points for one similarity: MEANING_WEIGHT a spread beyond MEANING_FROM spreads above
    the mean (0 below; a note whose neighbours are all alike, spread 0, gives none)."""
    if spread <= 0:
        return 0.0
    return MEANING_WEIGHT * max(0.0, (similarity - mean) / spread - MEANING_FROM)


def cap_series(ranked: list[_T], in_series: Callable[[_T], bool]) -> list[_T]:
    """``ranked`` with at most SERIES_IN_TOP entries of the series among the first
    SERIES_TOP: the others wait, in their order, until those places are filled."""
    top: list[_T] = []
    waiting: list[_T] = []
    rest = iter(ranked)
    for item in rest:
        if len(top) >= SERIES_TOP:
            return [*top, *waiting, item, *rest]
        if in_series(item) and sum(map(in_series, top)) >= SERIES_IN_TOP:
            waiting.append(item)
        else:
            top.append(item)
    return [*top, *waiting]


def genre_words(
    words: Collection[str],
    labels: Callable[[int], frozenset[str]],
    holders: Callable[[str], list[int]],
    speaks_of: Callable[[int, str], bool],
    folder_names: Collection[str] = (),
) -> frozenset[str]:
    """Of ``words`` (casefolded), those that say what kind of note it is: a folder's name,
    or a word held (in a title or as a tag) by at least GENRE_MIN_NOTES notes of which
    most pairs (GENRE_SHARE) share nothing else (``labels``: a note's title words, tags,
    series and folder, casefolded) and most do not use in their text (``speaks_of``):
    笔记 labels a note, 缓存 in a title is what the note discusses. ``holders`` may
    offer more notes than hold the word (titles that contain it): the labels decide."""
    folders = {name.casefold() for name in folder_names}
    found = set()
    for word in words:
        if word in folders:
            found.add(word)
            continue
        offered = sorted(holders(word))[: 2 * GENRE_SAMPLE]
        notes = [n for n in offered if word in labels(n)][:GENRE_SAMPLE]
        if len(notes) < GENRE_MIN_NOTES:
            continue
        sets = [labels(n) - {word} for n in notes]
        pairs = [(a, b) for i, a in enumerate(sets) for b in sets[i + 1 :]]
        apart = sum(1 for a, b in pairs if not a & b)
        if apart < GENRE_SHARE * len(pairs):
            continue
        if sum(speaks_of(n, word) for n in notes) < GENRE_SHARE * len(notes):
            found.add(word)
    return frozenset(found)


_FOLDER = "\0folder:"  # a label no word can be: the note's folder


@dataclass(slots=True)
class _GenreCache:
    """What the genre test reads, kept while the store is unchanged: every title
    (casefolded), tags and series by note and notes by tag; each note's labels and body,
    read when first asked; each word's verdict."""

    titles: list[tuple[int, str]]
    paths: dict[int, str]
    terms: dict[int, set[str]]  # tags and series, casefolded
    tagged: dict[str, list[int]]
    labels: dict[int, frozenset[str]] = field(default_factory=dict)
    bodies: dict[int, str] = field(default_factory=dict)
    verdicts: dict[str, bool] = field(default_factory=dict)


_GENRE_CACHE: dict[tuple[str, int], _GenreCache] = {}


def _genre_words_of(store: Store, note_id: int, folder_names: Collection[str]) -> frozenset[str]:
    """The genre words among this note's title words and tags. The titles, tags and series
    are read once per change of the store; a title is cut into words only when its note
    holds a word in question (a scan of the titles finds those)."""
    key = (str(store.path), store.generation)
    cache = _GENRE_CACHE.get(key)
    if cache is None:
        choices = store.notes.choices()
        terms: dict[int, set[str]] = {}
        tagged: dict[str, list[int]] = {}
        for kind in ("tags", "series"):
            for other, names in store.terms.by_note(kind).items():
                for name in names:
                    terms.setdefault(other, set()).add(name.casefold())
                    if kind == "tags":
                        tagged.setdefault(name.casefold(), []).append(other)
        cache = _GenreCache(
            [(c.id, c.title.casefold()) for c in choices],
            {c.id: c.path for c in choices},
            terms,
            tagged,
        )
        _GENRE_CACHE.clear()
        _GENRE_CACHE[key] = cache

    def labels(other: int) -> frozenset[str]:
        found = cache.labels.get(other)
        if found is None:
            title = store.notes.titles([other]).get(other, "")
            held = {word.casefold() for word in _title_words(title)}
            held |= cache.terms.get(other, set())
            held.add(_FOLDER + cache.paths.get(other, "").rpartition("/")[0])
            found = cache.labels[other] = frozenset(held)
        return found

    def holders(word: str) -> list[int]:
        in_titles = [other for other, title in cache.titles if word in title]
        return sorted({*in_titles, *cache.tagged.get(word, [])})

    def speaks_of(other: int, word: str) -> bool:
        text = cache.bodies.get(other)
        if text is None:
            found = store.notes.search_documents([other])
            text = cache.bodies[other] = found[0][1].body.casefold() if found else ""
        return word in text

    mine = labels(note_id) - {_FOLDER + cache.paths.get(note_id, "").rpartition("/")[0]}
    unknown = [word for word in mine if word not in cache.verdicts]
    if unknown:
        genre = genre_words(unknown, labels, holders, speaks_of, folder_names)
        cache.verdicts.update((word, word in genre) for word in unknown)
    return frozenset(word for word in mine if cache.verdicts[word])


def _meaning_detail(store: Store, note_id: int, other: NoteText, pair: tuple[int, int]) -> str:
    """The two closest passages, short: ``«mine» ~ «theirs»``."""
    from kb.meaning.passages import passage_text  # deferred: asked only when meaning is on

    shown = []
    for owner, position in ((note_id, pair[0]), (other.id, pair[1])):
        row = other if owner == other.id else _note_text(store, owner)
        stored = store.vectors.passage(owner, position)
        text = passage_text(row.text, stored.start, stored.end) if stored and row else ""
        shown.append(_excerpt(text or (row.title if row else "")))
    return f"«{shown[0]}» ~ «{shown[1]}»"


# The last note whose list it was (in a tuple: a note that is gone is None).
_TEXTS: dict[tuple[str, int, int], tuple[NoteText | None]] = {}


def _note_text(store: Store, note_id: int) -> NoteText | None:
    """This note's stored text, read once for every entry of its list."""
    key = (str(store.path), store.generation, note_id)
    cached = _TEXTS.get(key)
    if cached is not None:
        return cached[0]
    found = store.notes.by_id(note_id)
    _TEXTS.clear()  # another thread (the app's workers) may clear it too: found is ours
    _TEXTS[key] = (found,)
    return found


EXCERPT_CHARS = 40


def _excerpt(text: str) -> str:
    """The passage's first EXCERPT_CHARS characters on one line."""
    line = clean_line(" ".join(text.split()))
    return line if len(line) <= EXCERPT_CHARS else line[: EXCERPT_CHARS - 1] + "…"


def _title_words(title: str) -> set[str]:
    from kb.engines.similar import document_terms  # deferred: 2 modules more
    from kb.words.documents import SearchDocument  # deferred: 4 modules more

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
        elif kind == "meaning":
            passages = found.details[kind][0]
            pieces.append(f"close in meaning: {passages}" if passages else "close in meaning")
        else:
            values = list(dict.fromkeys(found.details[kind]))
            pieces.append(f"{kind}: {', '.join(values[:4])}")
    return " · ".join(pieces)
