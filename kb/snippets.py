"""Snippets cut from a note's original text around the best match, with highlight spans."""

from __future__ import annotations

import re
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
    best_start, best_score = spans[0][0], -1
    for first, *_ in spans:
        covered = {i for s, e, i in spans if first <= s and e <= first + width - _LEAD}
        if len(covered) > best_score:
            best_start, best_score = first, len(covered)
    start = _snap_start(text, max(0, best_start - _LEAD))
    end = min(len(text), start + width)
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    window = _flatten(text[start:end])
    shift = len(prefix) - start
    inside = [(s + shift, e + shift) for s, e, _ in spans if s >= start and e <= end]
    return prefix + window + suffix, inside


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
