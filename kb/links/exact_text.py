"""A file's bytes as text that turns back into exactly those bytes, for editing in place.

Ingest reads a note as ``kb.parse.decode`` does: newlines made ``\\n``, a BOM dropped,
undecodable bytes replaced. Writing that text back would change the whole file. Here the
text keeps every byte: its newlines as written, undecodable bytes as lone surrogates
(``surrogateescape``); positions in the newline-normalised text the parser saw are mapped
back, and an edit re-encodes only the characters it puts in.
"""

from __future__ import annotations

import bisect
from typing import NamedTuple

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


class ExactText(NamedTuple):
    data: bytes
    prefix: bytes  # a BOM, kept as it is
    codec: str
    errors: str
    raw: str  # the text after the prefix, newlines as written
    normalised: str  # what the parser reads: ``\r\n`` and ``\r`` as ``\n``
    crlf_at: tuple[int, ...]  # where each ``\r\n`` starts, in normalised positions

    @classmethod
    def of(cls, data: bytes) -> ExactText | None:
        """The exact text of ``data``, decoded as ingest decodes it; None when no decoding
        gives the same bytes back."""
        prefix, codec, errors = b"", "", "strict"
        for bom, bom_codec in _BOMS:
            if data.startswith(bom):
                prefix, codec = bom, bom_codec
                break
        body = data[len(prefix) :]
        raw = None
        for candidate in [codec] if codec else ["utf-8", "gb18030"]:
            try:
                raw = body.decode(candidate)
                codec = candidate
                break
            except UnicodeDecodeError:
                continue
        if raw is None:
            if prefix and codec.startswith("utf-16"):
                return None
            codec, errors = "utf-8", "surrogateescape"
            raw = body.decode(codec, errors)
        if raw.encode(codec, errors) != body:
            return None
        normalised, crlf_at = _normalise(raw)
        return cls(data, prefix, codec, errors, raw, normalised, crlf_at)

    def raw_position(self, position: int) -> int:
        """A position in ``normalised`` as a position in ``raw``."""
        return position + bisect.bisect_left(self.crlf_at, position)

    def replaced(self, replacements: list[tuple[int, int, str]]) -> bytes:
        """The bytes with each ``(start, end, text)`` (normalised positions, in order, not
        overlapping) put in; every other byte as it was."""
        if not replacements:
            return self.data
        out = [self.prefix]
        byte_at = len(self.prefix)
        raw_at = 0
        for start, end, text in replacements:
            raw_start, raw_end = self.raw_position(start), self.raw_position(end)
            byte_start = byte_at + self._length(raw_at, raw_start)
            byte_end = byte_start + self._length(raw_start, raw_end)
            out.append(self.data[byte_at:byte_start])
            out.append(text.encode(self.codec, self.errors))
            byte_at, raw_at = byte_end, raw_end
        out.append(self.data[byte_at:])
        return b"".join(out)

    def _length(self, start: int, end: int) -> int:
        return len(self.raw[start:end].encode(self.codec, self.errors))


def _normalise(raw: str) -> tuple[str, tuple[int, ...]]:
    if "\r" not in raw:
        return raw, ()
    crlf_at = []
    position = raw.find("\r\n")
    removed = 0
    while position != -1:
        crlf_at.append(position - removed)
        removed += 1
        position = raw.find("\r\n", position + 2)
    return raw.replace("\r\n", "\n").replace("\r", "\n"), tuple(crlf_at)
