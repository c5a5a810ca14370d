"""Snippets cut from a note's original text around the best match, with highlight spans."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from kb.query import Field, Phrase, Word
from kb.text import CJK_CHAR, CONTROL_CHARS
from kb.tokenize import segments

SNIPPET_CHARS = 160
_LEAD = 40
_CONTROL_OR_BREAK = re.compile(rf"[\t\n{CONTROL_CHARS}]")


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
    text: str, patterns: list[re.Pattern[str]], width: int = SNIPPET_CHARS
) -> tuple[str, list[tuple[int, int]]]:
    """The window of ``text`` that shows the most distinct terms, and their spans in it."""
    spans = find_spans(text, patterns)
    if not spans:
        return _flatten(_cut(text, 0, width)), []
    start = _snap_start(text, max(0, _best_start(spans, width - _LEAD) - _LEAD))
    end = min(len(text), start + width)
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    window = _flatten(text[start:end])
    shift = len(prefix) - start
    inside = [(s + shift, e + shift) for s, e, _ in spans if s >= start and e <= end]
    return prefix + window + suffix, inside


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
    """Start after a line break or space near ``start`` rather than mid-word."""
    if start == 0:
        return 0
    window = text[start : start + 12]
    for mark in ("\n", " ", "。", "，"):
        found = window.find(mark)
        if found != -1:
            return start + found + 1
    return start


def _cut(text: str, start: int, width: int) -> str:
    piece = text[start : start + width]
    return piece + ("…" if len(text) > start + width else "")


def _flatten(text: str) -> str:
    """Line breaks and control characters become spaces, one for one, so offsets hold."""
    return _CONTROL_OR_BREAK.sub(" ", text)
