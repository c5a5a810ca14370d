"""How a note connects to the others: outgoing links, backlinks, unlinked mentions and
related notes.

Everything the CLI's ``kb links``/``kb graph`` and the TUI's connection panes show comes
from here, tested without either front end.
"""

from __future__ import annotations

import heapq
import math
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kb.links.resolve import NoteName
from kb.parse.fences import code_lines
from kb.query.stopwords import is_stop_word
from kb.text import CJK_CHAR, clean_line

FileOf = Callable[[str, str], Path]  # (root name, path inside the root) -> the note's file

if TYPE_CHECKING:
    from kb.engines.contract import EngineHit, SearchEngine
    from kb.notes.naming import NoteRef
    from kb.store import Store
    from kb.store.rows import NoteText

# A title or alias counts for mentions when it is long enough not to match by accident:
# each CJK character counts 2, anything else 1, spaces 0; at least this much in all.
MENTION_MIN_WEIGHT = 6
# ... and when it is not so common that it would be a mention everywhere: found in more
# than 5% of the notes (and more than 10), a name is a phrase, not a reference ('latest' in
# 76 of 754 blog posts, 'Projects' in 18 of 257 pages; 'GitHub Pages' in 8 of 87 counts).
MENTION_MAX_SHARE = 0.05
MENTION_COMMON_FLOOR = 10
# A folder's index note is titled by its folder's subject (高可用架构, Using Foam): text that
# says those words means the subject, not the index page.
INDEX_STEMS = frozenset({"readme", "index", "_index"})
RELATED_LIMIT = 10
CONTEXT_CHARS = 40  # shown each side of a mention or a link
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
class LinkPlace:
    """One link from another note to this one: where it is written, and its line."""

    line: int
    kind: str
    rel: str
    context: str  # the line the link is on, as text (empty for a front-matter link)


@dataclass(slots=True)
class Backlink:
    """Another note that links here, once, with every place it does."""

    id: int  # the other note
    path: str
    title: str
    kind: str  # of its first link (the places have each one's)
    rel: str  # the first typed-link key among its links, else ''
    line: int  # of its first link
    places: list[LinkPlace] = field(default_factory=list)


@dataclass(slots=True)
class Mention:
    id: int  # the other note
    path: str
    title: str
    name: str  # the title or alias that was named
    line: int
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


def backlinks(store: Store, note_id: int, file_of: FileOf | None = None) -> list[Backlink]:
    """The notes that link here, one entry each (by path), with the line of context around
    every link: ``file_of`` reads it from the source file (else contexts are empty)."""
    grouped: dict[int, Backlink] = {}
    lines: dict[int, list[str]] = {}
    for row in store.links.backlinks(note_id):
        entry = grouped.get(row.source_id)
        if entry is None:
            entry = grouped[row.source_id] = Backlink(
                row.source_id,
                row.source_path,
                clean_line(row.source_title),
                row.kind,
                row.rel,
                row.line,
            )
            lines[row.source_id] = _source_lines(store, row.source_id, file_of)
        if row.rel and not entry.rel:
            entry.rel = row.rel
        text = lines[row.source_id]
        in_text = row.kind != "front-matter" and 0 < row.line <= len(text)
        context = _around(text[row.line - 1], row.text or row.target) if in_text else ""
        place = LinkPlace(row.line, row.kind, row.rel, context)
        if place not in entry.places:
            entry.places.append(place)
    for entry in grouped.values():
        entry.places.sort(key=lambda p: (p.line, p.kind))
    return sorted(grouped.values(), key=lambda b: b.path)


def _source_lines(store: Store, note_id: int, file_of: FileOf | None) -> list[str]:
    row = store.notes.by_id(note_id) if file_of is not None else None
    if row is None or file_of is None:
        return []
    return _read(file_of(row.root, row.rel)).splitlines()


def _around(line: str, written: str, width: int = 2 * CONTEXT_CHARS) -> str:
    """The line, cut to about ``width`` characters around what the link wrote."""
    line = clean_line(line)
    if len(line) <= width + CONTEXT_CHARS:
        return line
    at = max(line.find(written), 0) if written else 0
    start = max(0, min(at - CONTEXT_CHARS, len(line) - width))
    return ("…" if start else "") + line[start : start + width] + "…"


# -- mentions -------------------------------------------------------------------------------

# Names that head many notes as ordinary words: a mention only when configured. Spaces
# are dropped as ``normalise_name`` does (`Getting Started` is gettingstarted).
_COMMON_NAMES = """
readme index _index 常见问题 项目介绍 介绍 简介 概述 总结 目录 前言 说明 参考 参考资料 笔记 学习笔记
faq overview introduction summary notes todo changelog about 关于 首页 文章
get_started getting_started quick_start quickstart release_notes installation install setup
usage examples tutorial guide home archive archives latest projects contributing license
glossary troubleshooting 快速开始 快速入门 入门 安装 安装部署 使用说明 发布说明 更新日志 环境配置
环境搭建 常用命令
"""
COMMON_NAMES = frozenset(name.replace("_", "") for name in _COMMON_NAMES.split())
# Markdown that names something without being prose: inline code, links (their text names
# their own target), wikilinks, autolinks and bare URLs, HTML tags, reference definitions.
_NOT_PROSE = re.compile(
    r"(`+)(?:(?!\1).)+?\1"  # inline code
    r"|!?\[[^\]]*\]\([^)]*\)"  # [text](target), ![alt](src)
    r"|!?\[[^\]]*\]\[[^\]]*\]"  # [text][ref]
    r"|!?\[\[[^\]]*\]\]"  # [[wikilink]]
    r"|<[^>\s]+>|</?[a-z][^>]*>"  # <https://...>, HTML tags
    r"|\b(?:[a-z][a-z0-9+.-]*://|www\.)\S+"  # bare URLs
    r"|\{\{[<%].*?[>%]\}\}",  # Hugo shortcodes
    re.IGNORECASE,
)
_REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
# A step of a menu path, `File > Preferences > Keyboard Shortcuts`: a label on screen.
_MENU_BEFORE = re.compile(r"\S\s*[>›»]\s*$")
_MENU_AFTER = re.compile(r"^\s*[>›»]\s*\S")
_LATIN = re.compile(r"[0-9a-z_]")


def name_weight(name: str) -> int:
    cjk = len(re.findall(f"[{CJK_CHAR}]", name))
    other = len(re.sub(rf"[\s{CJK_CHAR}]", "", name))
    return 2 * cjk + other


def normalise_name(text: str) -> str:
    """What names are compared by: NFKC (full-width letters and punctuation to half-width),
    case-folded, spaces dropped (``Redis 持久化机制`` is ``redis持久化机制``)."""
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


def is_common_name(name: str) -> bool:
    """A title that is an everyday phrase (常见问题, README) or only function words."""
    from kb.engines.contract import chinese_words

    folded = normalise_name(name)
    if folded in COMMON_NAMES:
        return True
    words = re.findall(rf"[{CJK_CHAR}]+|[^\W{CJK_CHAR}]+", folded)
    parts = [
        w
        for run in words
        for w in (chinese_words(run) if re.match(f"[{CJK_CHAR}]", run) else [run])
    ]
    return all(is_stop_word(w) or w in COMMON_NAMES for w in parts)


def mention_names(note: NoteName, extra_terms: list[str]) -> list[str]:
    """The names of a note that count for mentions (see MENTION_MIN_WEIGHT)."""
    names = [n for n in (note.title, *note.aliases) if name_weight(n) >= MENTION_MIN_WEIGHT]
    return list(dict.fromkeys([*names, *extra_terms]))


def mention_pattern(name: str) -> re.Pattern[str]:
    """The name in a line, any case and width (on ``normalise_line`` text), spaces or none
    where it has a space or meets a non-Latin character (``Redis 学习笔记`` in
    ``redis学习 笔记``), but not inside a longer Latin word: ``Redis`` is not in
    ``Redisson`` or ``redis-py``."""
    folded = " ".join(unicodedata.normalize("NFKC", name).casefold().split())
    body, before, spaced = "", "", False
    for ch in folded:
        if ch == " ":
            spaced = True
            continue
        if body:
            inside_word = not spaced and _LATIN.match(before) and _LATIN.match(ch)
            body += "" if inside_word else r"\s*"
        body += re.escape(ch)
        before, spaced = ch, False
    # advanced-java and x.advanced are longer words too
    left = r"(?<![0-9a-z_])(?<![0-9a-z][-.])" if _LATIN.match(folded[:1]) else ""
    right = r"(?![0-9a-z_]|[-.][0-9a-z])" if _LATIN.match(folded[-1:]) else ""
    return re.compile(left + body + right, re.IGNORECASE)


def normalise_line(line: str) -> str:
    """A line as names are compared (case aside: patterns ignore it), character for
    character, so offsets still point into the line: NFKC (full width to half width), each
    character kept as it is where NFKC would make it several."""
    folded = unicodedata.normalize("NFKC", line)
    if len(folded) == len(line):
        return folded
    out = []
    for ch in line:
        one = unicodedata.normalize("NFKC", ch)
        out.append(one if len(one) == 1 else ch)
    return "".join(out)


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of the lines a reader reads as prose: not the front matter,
    fenced code or a reference definition (see ``blank_markup`` for inside a line)."""
    lines = text.splitlines()
    start = _front_matter_end(lines)
    for number, (line, is_code) in enumerate(code_lines(lines[start:]), start=start + 1):
        if not (is_code or _REFERENCE_DEFINITION.match(line)):
            yield number, line


def blank_markup(line: str) -> str:
    """The line with inline code, links, URLs and tags blanked out (offsets hold)."""
    return _NOT_PROSE.sub(lambda m: " " * len(m.group()), line)


def _front_matter_end(lines: list[str]) -> int:
    """How many lines the front matter takes (0 when there is none)."""
    if not lines or lines[0].strip() not in ("---", "+++"):
        return 0
    fence = lines[0].strip()
    for index in range(1, len(lines)):
        if lines[index].strip() == fence or (fence == "---" and lines[index].strip() == "..."):
            return index + 1
    return 0  # never closed: ingest reads it all as body


def locate_mention(text: str, names: list[str]) -> tuple[int, str, str] | None:
    """The first place in a note's prose that names one of ``names``: (line, the name,
    the context: the line around it). A heading that is just the name is a section of
    that name, not a mention of the note."""
    patterns = [(name, mention_pattern(name)) for name in names]
    for number, line in prose_lines(text):
        folded = normalise_line(line)
        if not any(pattern.search(folded) for _, pattern in patterns):
            continue  # most lines: no need to look at their markup
        folded = blank_markup(folded)
        heading = _HEADING.match(folded)
        for name, pattern in patterns:
            if heading and normalise_name(heading.group(1)) == normalise_name(name):
                continue
            match = next(
                (
                    m
                    for m in pattern.finditer(folded)
                    if not _in_menu_path(folded, m) and _whole_words(folded, m)
                ),
                None,
            )
            if match is None:
                continue
            start = max(0, match.start() - CONTEXT_CHARS)
            context = clean_line(line[start : match.end() + CONTEXT_CHARS])
            return number, name, context
    return None


def _in_menu_path(line: str, match: re.Match[str]) -> bool:
    return bool(
        _MENU_BEFORE.search(line[: match.start()]) or _MENU_AFTER.match(line[match.end() :])
    )


_CJK_RUN = re.compile(f"[{CJK_CHAR}]+")


def _whole_words(line: str, match: re.Match[str]) -> bool:
    """Whether a name found inside Chinese text starts and ends between words: 服务配置 is
    named in 加载服务配置 (加载|服务|配置) but not in 微服务配置 (微|服务|配置: a lone
    character before it that is not a function word is a piece of a word the dictionary
    lacks, as ``kb.engines.chinese_words`` reads it)."""
    edges = [
        edge
        for edge in (match.start(), match.end())
        if 0 < edge < len(line) and _CJK_RUN.match(line[edge - 1]) and _CJK_RUN.match(line[edge])
    ]
    if not edges:
        return True
    import rjieba  # only for a name met inside a run of Chinese

    for run in _CJK_RUN.finditer(line):
        if not any(run.start() < edge < run.end() for edge in edges):
            continue
        offset, words = run.start(), {}
        for word in rjieba.cut(run.group()):
            words[offset] = word
            offset += len(word)
        ends = {start + len(word): word for start, word in words.items()}
        if match.start() in edges and (
            match.start() not in words or _lone_piece(ends.get(match.start(), ""))
        ):
            return False
        if match.end() in edges and match.end() not in words:
            return False  # (a lone verb may follow a name: 服务配置|写|在)
    return True


def _lone_piece(word: str) -> bool:
    return len(word) == 1 and not is_stop_word(word)


def mentions(
    store: Store,
    engine: SearchEngine,
    note_id: int,
    file_of: FileOf,
    extra_terms: list[str] | None = None,
    ignored: tuple[str, ...] = (),
) -> list[Mention]:
    """Notes whose prose names this note's title or alias without linking to it; a name
    in ``ignored`` (``mention_ignore`` in kb.yaml) never does."""
    from kb.query.syntax import MAX_TERMS, Phrase, Query

    names = store.notes.names([note_id])
    if not names:
        return []
    # Each configured term is a search: no more than a query's terms (kb.config warns).
    configured = (extra_terms or [])[:MAX_TERMS]
    total = max(store.notes.count(), 1)
    linking = store.links.neighbours(note_id)[1]
    found: dict[int, Mention] = {}
    index_note = names[0].stem.casefold() in INDEX_STEMS
    quiet = {normalise_name(name) for name in ignored}
    common = int(max(MENTION_COMMON_FLOOR, total * MENTION_MAX_SHARE))
    for name in mention_names(names[0], configured):
        if name not in configured and (
            index_note or is_common_name(name) or normalise_name(name) in quiet
        ):
            continue
        # Notes that link here name it as a reference: only the others count towards common.
        limit = total if name in configured else common + 2 + len(linking)
        hits = engine.search(Query(Phrase(name), f'"{name}"'), limit=limit)
        unlinked = [h.note_id for h in hits if h.note_id not in (note_id, *linking)]
        if name not in configured and len(unlinked) > common:
            continue
        namesakes = [] if name in configured else _namesakes(store, name, hits)
        pattern = mention_pattern(name)
        for hit in hits:
            if hit.note_id in (note_id, *linking) or hit.note_id in found:
                continue
            row = store.notes.by_id(hit.note_id)
            if row is None or (namesakes and not _nearest(names[0], row, namesakes)):
                continue
            if not _may_name(pattern, row.text):
                continue  # the index matched words apart: only the file is worth reading
            located = locate_mention(_read(file_of(row.root, row.rel)), [name])
            if located is not None:
                line, named, context = located
                found[hit.note_id] = Mention(
                    hit.note_id, row.path, clean_line(row.title), named, line, context
                )
    return sorted(found.values(), key=lambda m: m.path)


def _namesakes(store: Store, name: str, hits: list[EngineHit]) -> list[NoteName]:
    """The notes called ``name`` (two pages titled 负载均衡, one per product): a note so
    called is among the name's hits, as titles are indexed. Empty when only one is."""
    wanted = normalise_name(name)
    called = [
        note
        for note in store.notes.names([h.note_id for h in hits])
        if any(normalise_name(n) == wanted for n in (note.title, *note.aliases))
    ]
    return called if len(called) > 1 else []


def _nearest(note: NoteName, source: NoteText, namesakes: list[NoteName]) -> bool:
    """Whether, of several notes with the name, ``note`` is the one text in ``source``
    means: the only one nearest it in the folder tree (mesher/quick-start.md means
    mesher/load-balance.md), and ``source`` is not itself so called (a namesake names
    its own subject)."""
    if any(n.id == source.id for n in namesakes):
        return False
    depth = {n.id: _shared_folders(n, source) for n in namesakes}
    best = max(depth.values())
    return depth[note.id] == best and list(depth.values()).count(best) == 1


def _shared_folders(note: NoteName, source: NoteText) -> int:
    if note.root != source.root:
        return -1
    mine, theirs = note.rel.split("/")[:-1], source.rel.split("/")[:-1]
    shared = 0
    for a, b in zip(mine, theirs, strict=False):
        if a != b:
            break
        shared += 1
    return shared


def _may_name(pattern: re.Pattern[str], text: str) -> bool:
    """Whether the stored text has the name at all (any case, any width)."""
    return bool(pattern.search(text) or pattern.search(unicodedata.normalize("NFKC", text)))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


# -- related notes ------------------------------------------------------------------------

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
# A tag or series on more notes than the word ceiling (kb.engines.frequency_ceiling) says
# little, but a small folder's one series (20 of 45 bundled notes) still counts.
METADATA_MIN_CEILING = 50
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
    from kb.engines.contract import frequency_ceiling

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
    if document:
        similar = engine.more_like_this(note_id, document[0][1])
        titles = store.notes.titles([note_id, *(other for other, _, _ in similar)])
        mine = _title_words(titles.get(note_id, ""))
        for other, share, words in similar:
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
    from kb.engines.contract import document_terms
    from kb.ingest.documents import SearchDocument

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
