"""Snippets cut from a note's original text around the best match, with highlight spans."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kb.query import plan
from kb.query.syntax import Field, Phrase, Word
from kb.text import CJK_CHAR, CONTROL_CHARS
from kb.words.tokenize import segments

if TYPE_CHECKING:
    from kb.query.plan import Text
    from kb.query.reading import Reading, WordReading

SNIPPET_CHARS = 160
_LEAD = 40
_CONTROL_OR_BREAK = re.compile(rf"[\t\n{CONTROL_CHARS}]")
_CJK = re.compile(f"[{CJK_CHAR}]")
_LATIN = re.compile(rf"[^\W_{CJK_CHAR}]")


def term_patterns(terms: Iterable[Word | Phrase | Field]) -> list[re.Pattern[str]]:
    """One pattern per query term, matching where it occurs in the original text."""
    patterns: list[re.Pattern[str]] = []
    for term in terms:
        text = term.value if isinstance(term, Field) else term.text
        if isinstance(term, Phrase) or (isinstance(term, Field) and term.phrase):
            words = [re.escape(s.text) for s in segments(text)]
            if words:
                patterns.append(re.compile(r"[\s\W]*".join(words), re.IGNORECASE))
            continue
        for word in text.split():
            runs = list(segments(word))
            for index, run in enumerate(runs):
                pattern = re.escape(run.text)
                if run.kind == "latin":
                    if isinstance(term, Word) and term.prefix and index == len(runs) - 1:
                        pattern += rf"[^\W{CJK_CHAR}]*"
                    if len(run.text) <= 2:
                        pattern = rf"(?<![^\W_]){pattern}(?![^\W_])"
                patterns.append(re.compile(pattern, re.IGNORECASE))
    return patterns


def reading_patterns(reading: Reading) -> list[re.Pattern[str]]:
    """Patterns for everything a query as read may have matched: each word's forms
    (variants, partners, corrections), unsplit runs, phrases and title filters."""

    patterns: list[re.Pattern[str]] = []
    for word in reading.words:
        patterns.extend(word_patterns(word))
    for text in reading.intact:
        patterns.extend(plan_patterns(text))
    others = [t for t in reading.query.positive_terms() if isinstance(t, Phrase | Field)]
    patterns.extend(term_patterns(others))
    unique: dict[str, re.Pattern[str]] = {}
    for pattern in patterns:
        unique.setdefault(pattern.pattern, pattern)
    return list(unique.values())


def word_patterns(word: WordReading) -> list[re.Pattern[str]]:
    """Where a query word, in any of its forms, may stand in a text."""
    return [p for text in word.alternatives() for p in plan_patterns(text)]


def plan_patterns(text: Text) -> list[re.Pattern[str]]:

    if isinstance(text, plan.Term):
        return [_token_pattern(text.token)]
    if isinstance(text, plan.Prefix):
        return [re.compile(re.escape(text.stem) + rf"[^\W{CJK_CHAR}]*", re.IGNORECASE)]
    if isinstance(text, plan.CharPrefix):
        return [re.compile(re.escape(text.char))]
    if isinstance(text, plan.Bigrams | plan.Sequence):
        pieces: list[str] = []
        for token in text.tokens:
            cjk = _CJK.match(token) is not None
            if cjk and pieces and len(token) == 2 and pieces[-1].endswith(token[0]):
                pieces[-1] += token[1]  # the next bigram of the same run
            else:
                pieces.append(token)
        pattern = r"[\W_]*".join(re.escape(p) for p in pieces)
        return [re.compile(pattern, re.IGNORECASE)]
    if isinstance(text, plan.AnyOf | plan.AllOf):
        return [p for child in text.children for p in plan_patterns(child)]
    return plan_patterns(text.child)


def _token_pattern(token: str) -> re.Pattern[str]:
    pattern = re.escape(token)
    if len(token) <= 2 and not _CJK.match(token):
        pattern = rf"(?<![^\W_]){pattern}(?![^\W_])"
    return re.compile(pattern, re.IGNORECASE)


def find_spans(text: str, patterns: list[re.Pattern[str]]) -> list[tuple[int, int, int]]:
    """(start, end, pattern index) of every match, in text order, without overlaps."""
    spans = sorted(
        (m.start(), m.end(), i)
        for i, p in enumerate(patterns)
        for m in p.finditer(text)
        if m.end() > m.start()
    )
    merged: list[tuple[int, int, int]] = []
    for span in spans:
        if merged and span[0] < merged[-1][1]:
            continue
        merged.append(span)
    return merged


def highlight_spans(text: str, patterns: list[re.Pattern[str]]) -> list[tuple[int, int]]:
    return [(start, end) for start, end, _ in find_spans(text, patterns)]


def make_snippet(
    text: str, patterns: list[re.Pattern[str]], width: int = SNIPPET_CHARS, code: str = ""
) -> tuple[str, list[tuple[int, int]]]:
    """The window of ``text`` that shows the most distinct terms, and their spans in it.
    When only the code matches, the first matching code line, in backticks."""
    spans = find_spans(text, patterns)
    if not spans:
        line = _code_line(code, patterns) if code else None
        if line is not None:
            found, line_spans = line
            return f"`{found}`", [(s + 1, e + 1) for s, e, _ in line_spans]
        return _flatten(_cut(text, 0, width)), []
    start = _snap_start(text, max(0, _best_start(spans, width - _LEAD) - _LEAD))
    end = _snap_end(text, min(len(text), start + width))
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    window = _flatten(text[start:end])
    shift = len(prefix) - start
    inside = [(s + shift, e + shift) for s, e, _ in spans if s >= start and e <= end]
    return prefix + window + suffix, inside


def _code_line(
    code: str, patterns: list[re.Pattern[str]]
) -> tuple[str, list[tuple[int, int, int]]] | None:
    """The first code line holding a match, trimmed, with its spans."""
    spans = find_spans(code, patterns)
    if not spans:
        return None
    first = spans[0][0]
    line_start = code.rfind("\n", 0, first) + 1
    line_end = code.find("\n", first)
    line_end = len(code) if line_end == -1 else line_end
    raw = code[line_start:line_end]
    indent = len(raw) - len(raw.lstrip())
    line = _flatten(raw.strip())[:SNIPPET_CHARS]
    offset = line_start + indent
    inside = [
        (s - offset, e - offset, i) for s, e, i in spans if s >= offset and e - offset <= len(line)
    ]
    return line, inside


def _best_start(spans: list[tuple[int, int, int]], reach: int) -> int:
    """Where the first window of ``reach`` characters holding the most distinct terms
    starts. Spans are sorted and never overlap, so their ends rise too: one sliding
    window, linear in the spans (a note with 10,000 matches must not cost 10⁸ steps)."""
    best_start, best_score = spans[0][0], -1
    inside: Counter[int] = Counter()
    end = 0  # spans[first:end] lie in the window starting at spans[first]
    for first, (window_start, _, _) in enumerate(spans):
        while end < len(spans) and spans[end][1] <= window_start + reach:
            inside[spans[end][2]] += 1
            end += 1
        if len(inside) > best_score:
            best_start, best_score = window_start, len(inside)
        if end > first:  # the window's first span leaves before the next window
            term = spans[first][2]
            inside[term] -= 1
            if not inside[term]:
                del inside[term]
        else:
            end = first + 1  # this span alone is wider than the window
    return best_start


def _snap_start(text: str, start: int) -> int:
    """Start after a line break, a space or Chinese punctuation near ``start``, never
    inside a Latin word or a grapheme."""
    if start == 0:
        return 0
    window = text[start : start + 16]
    for mark in ("\n", "。", "，", "；", " "):
        found = window.find(mark)
        if found != -1:
            return start + found + 1
    while start < len(text) and (_inside_word(text, start) or _joins(text[start])):
        start += 1
    return start


def _snap_end(text: str, end: int) -> int:
    """End before a Latin word or grapheme that ``end`` would cut (back to its start, or
    on to its end when the word is longer than the lead)."""
    if end >= len(text):
        return len(text)
    cut = end
    while cut > 0 and (_inside_word(text, cut) or _joins(text[cut])):
        cut -= 1
    if end - cut <= _LEAD and cut > 0:
        return cut
    while end < len(text) and (_inside_word(text, end) or _joins(text[end])):
        end += 1
    return end


def _inside_word(text: str, position: int) -> bool:
    """Whether ``position`` falls between two characters of one Latin word or number."""
    if position <= 0 or position >= len(text):
        return False
    before, after = text[position - 1], text[position]
    return _LATIN.match(before) is not None and _LATIN.match(after) is not None


def _joins(char: str) -> bool:
    """A character that belongs to the one before it: a combining mark, a variation
    selector, a zero-width joiner (and what follows a joiner is kept by the loop)."""
    return (
        unicodedata.combining(char) > 0
        or char in "\u200d\ufe0e\ufe0f"
        or ("\U0001f3fb" <= char <= "\U0001f3ff")
    )


def _cut(text: str, start: int, width: int) -> str:
    piece = text[start : start + width]
    return piece + ("…" if len(text) > start + width else "")


def _flatten(text: str) -> str:
    """Line breaks and control characters become spaces, one for one, so offsets hold."""
    return _CONTROL_OR_BREAK.sub(" ", text)
