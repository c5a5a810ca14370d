"""Long answers in pages: where a page of text may end, and the cursor that asks for the
next one. Pure functions; the assistant server (kb/mcp/) pages notes and lists with them.

A page ends at a line break when one lies in its last quarter, else at a space, else
anywhere that does not split what a reader sees as one character: a base letter and the
combining marks, variation selectors and zero-width joiners after it stay together (an
emoji family, ``é`` written as ``e`` + U+0301), so no page starts with half a glyph.
"""

from __future__ import annotations

import base64
import binascii
import json
import unicodedata
from typing import Any

from kb.errors import UsageError

_JOINER = "\u200d"


def _joins_previous(char: str) -> bool:
    """Whether ``char`` belongs to the character before it on screen."""
    code = ord(char)
    return (
        unicodedata.combining(char) != 0
        or unicodedata.category(char) in ("Mn", "Me", "Mc")
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0100 <= code <= 0xE01EF
        or 0x1F3FB <= code <= 0x1F3FF  # skin-tone modifiers
        or 0xDC00 <= code <= 0xDFFF  # a lone low surrogate (from surrogateescape)
        or char == _JOINER
    )


def safe_cut(text: str, at: int) -> int:
    """The nearest position at or before ``at`` where ``text`` may be cut without splitting
    a glyph (see the module's docstring); ``at`` itself when it is one. Never 0 unless
    ``at`` is, so a page always makes progress when it can."""
    at = max(0, min(at, len(text)))
    cut = at
    while 0 < cut < len(text) and (_joins_previous(text[cut]) or text[cut - 1] == _JOINER):
        cut -= 1
    if cut == 0 and at > 0:  # one glyph longer than the page: take it whole
        cut = at
        while cut < len(text) and (_joins_previous(text[cut]) or text[cut - 1] == _JOINER):
            cut += 1
    return cut


def page_end(text: str, start: int, size: int) -> int:
    """Where the page of ``text`` that starts at ``start`` and holds at most about ``size``
    characters ends: ``len(text)`` when the rest fits, else after a line break in the
    page's last quarter, else after a space there, else at a safe cut."""
    if size < 1:
        raise ValueError("a page holds at least one character")
    limit = start + size
    if limit >= len(text):
        return len(text)
    floor = start + size * 3 // 4
    newline = text.rfind("\n", floor, limit)
    if newline != -1:
        return newline + 1
    space = text.rfind(" ", floor, limit)
    if space != -1:
        return space + 1
    return max(safe_cut(text, limit), start + 1) if start < len(text) else len(text)


def encode_cursor(kind: str, **fields: Any) -> str:
    """An opaque cursor naming what it continues (``kind``) and where: URL-safe text."""
    data = json.dumps({"k": kind, **fields}, ensure_ascii=True, separators=(",", ":"))
    return base64.urlsafe_b64encode(data.encode("ascii")).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, kind: str) -> dict[str, Any]:
    """The fields of a cursor ``encode_cursor`` made for ``kind``; a UsageError saying
    what to do for any other text."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error):
        data = None
    if not isinstance(data, dict) or data.get("k") != kind:
        raise UsageError(
            f"the cursor is not one this {kind} gave; call {kind} again without a cursor"
        )
    del data["k"]
    return data


def cursor_offset(fields: dict[str, Any], key: str = "offset") -> int:
    """A non-negative integer from a decoded cursor, or a UsageError."""
    value = fields.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UsageError("the cursor is damaged; call again without a cursor")
    return value
