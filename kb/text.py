"""Small pure helpers on text: slugs, word counts, control characters."""

from __future__ import annotations

import re
from functools import cache

# Han, kana, Hangul and CJK compatibility ranges: one character is one word.
CJK_CHAR = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"

# C0 controls except tab and newline, DEL, and C1 controls: they can drive a terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """Remove terminal control characters, keeping tabs and newlines."""
    return _CONTROL.sub("", text)


def one_line(text: str) -> str:
    """A single display line: controls removed, line breaks and tabs made spaces."""
    return " ".join(_CONTROL.sub("", text).split())


@cache
def _word_pattern() -> re.Pattern[str]:
    # Compiled on first use: only ingest counts words, and the class is slow to compile.
    return re.compile(rf"[{CJK_CHAR}]|[^\W{CJK_CHAR}]+")


def word_count(text: str) -> int:
    """Count Latin words by runs and CJK text by characters, as writers of Chinese do."""
    return sum(1 for _ in _word_pattern().finditer(text))


def slugify(text: str) -> str:
    """GitHub/Hugo-style heading anchor: lower case, punctuation dropped, spaces to hyphens.

    Letters of every script are kept, so ``MySQL 事务`` becomes ``mysql-事务``.
    """
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "-_":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


def split_list(value: str) -> list[str]:
    """Split a front-matter string list: on commas when there are any, else on whitespace."""
    parts = re.split(r"[,，、]", value) if re.search(r"[,，、]", value) else value.split()
    return [p.strip() for p in parts if p.strip()]
