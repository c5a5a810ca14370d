"""Small pure helpers on text: slugs, word counts, control characters."""

from __future__ import annotations

import json
import re
from functools import cache

# Han, kana, Hangul and CJK compatibility ranges: one character is one word.
CJK_CHAR = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"

# C0 controls except tab and newline, DEL, and C1 controls (ESC, BEL, CSI 0x9b, ...): they
# can drive a terminal.
CONTROL_CHARS = r"\x00-\x08\x0b-\x1f\x7f-\x9f"
_CONTROL = re.compile(f"[{CONTROL_CHARS}]")
# Bidirectional formatting characters: they reorder what is shown, so they can disguise a
# name (``exe.md`` shown for ``dm.exe``). Printed visibly instead, as ``<U+202E>``.
_BIDI_CHARS = r"\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BIDI = re.compile(f"[{_BIDI_CHARS}]")


def _visible(match: re.Match[str]) -> str:
    return f"<U+{ord(match.group()):04X}>"


def strip_controls(text: str) -> str:
    """Text safe to print on a terminal, tabs and newlines kept: control characters removed,
    bidi controls shown as ``<U+202E>``. Every place kb shows note text goes through this."""
    return _BIDI.sub(_visible, clean_text(text))


def _escaped(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def escape_controls(text: str) -> str:
    """Text shown exactly yet safe to print: control characters written as ``\\x1b``,
    bidi controls as ``<U+202E>``; tabs and newlines kept."""
    return _BIDI.sub(_visible, _CONTROL.sub(_escaped, text))


def one_line(text: str) -> str:
    """A single line safe to print: as ``strip_controls``, with line breaks and tabs made
    spaces."""
    if _plain_line(text):
        return text
    return " ".join(strip_controls(text).split())


def _plain_line(text: str) -> bool:
    """Whether ``text`` is a line that ``one_line`` and ``clean_line`` leave as it is: every
    control, bidi and whitespace character but the ASCII space is unprintable to Python,
    so a printable text without doubled or outer spaces has none (the check is in C; the
    app cleans 100,000 titles at once)."""
    return text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "


def clean_text(text: str) -> str:
    """Text to keep or to parse: controls removed, bidi controls kept as they are (they
    belong to right-to-left text; only printing shows them)."""
    return _CONTROL.sub("", text)


def clean_line(text: str) -> str:
    """As ``clean_text``, on a single line: line breaks and tabs made spaces."""
    if _plain_line(text):
        return text
    return " ".join(clean_text(text).split())


# What json.dumps(ensure_ascii=False) leaves raw that a terminal would act on.
_JSON_UNSAFE = re.compile(rf"[\x7f-\x9f{_BIDI_CHARS}]")


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(data: object, indent: int | None = None) -> str:
    """JSON with exact values, yet safe to print: ``json.dumps`` escapes C0 controls but,
    without ``ensure_ascii``, lets DEL, C1 and bidi controls through raw."""

    return _JSON_UNSAFE.sub(_json_escape, json.dumps(data, ensure_ascii=False, indent=indent))


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


# Percent escapes of bytes 0x80-0xFF: the UTF-8 of a non-ASCII character.
_ESCAPED_UTF8 = re.compile(r"(?:%[89a-fA-F][0-9a-fA-F])+")


def _decoded(match: re.Match[str]) -> str:
    escaped = match.group()
    try:
        return bytes.fromhex(escaped.replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return escaped  # not UTF-8: shown as written


def shown_url(url: str) -> str:
    """An external URL as a reader wants to see it: ``/wiki/二阶段提交``, not
    ``/wiki/%E4%BA%8C…``. Only escapes of non-ASCII characters are decoded; ``%20``,
    ``%2F`` and the like stay, so what is shown still names the same page. Not yet safe
    to print: pass it through ``one_line``."""
    if "%" not in url:
        return url
    return _ESCAPED_UTF8.sub(_decoded, url)
