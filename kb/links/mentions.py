"""Unlinked mentions: where a note's title or alias stands in another note's prose, with the
rules that keep common words, code and markup out.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from kb.links.connections import CONTEXT_CHARS, INDEX_STEMS, Mention, read_note_file
from kb.names.resolve import NoteName
from kb.parse.fences import code_lines
from kb.text import CJK_CHAR, clean_line
from kb.words.stopwords import is_stop_word

# (root name, path inside the root) -> the note's file, or None when it may not be read
FileOf = Callable[[str, str], Path | None]

if TYPE_CHECKING:
    from kb.engines.contract import EngineHit, SearchEngine
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
    from kb.engines.similar import chinese_words  # deferred: 3 modules more

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
    lacks, as ``kb.engines.similar.chinese_words`` reads it)."""
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
    from kb.query.syntax import MAX_TERMS, Phrase, Query  # deferred: 3 modules more

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
            located = locate_mention(read_note_file(file_of(row.root, row.rel)), [name])
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


def mention_places(text: str, name: str) -> list[tuple[int, int, int]]:
    """Every place in a note's prose that names ``name`` by the rules ``locate_mention``
    follows (not in code, links, tags or a heading that is just the name): (1-based line,
    start, end), string indexes in the line."""
    pattern = mention_pattern(name)
    folded_name = normalise_name(name)
    found = []
    for number, line in prose_lines(text):
        folded = normalise_line(line)
        if not pattern.search(folded):
            continue
        folded = blank_markup(folded)
        heading = _HEADING.match(folded)
        if heading and normalise_name(heading.group(1)) == folded_name:
            continue
        found += [
            (number, m.start(), m.end())
            for m in pattern.finditer(folded)
            if not _in_menu_path(folded, m) and _whole_words(folded, m)
        ]
    return found
