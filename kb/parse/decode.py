"""Turn a note file's bytes into text, whatever encoding its author's editor used."""

from __future__ import annotations

from dataclasses import dataclass

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_SNIFF = 8192


class BinaryFile(ValueError):
    """The bytes are not text (a NUL byte where text would have none)."""


@dataclass(frozen=True, slots=True)
class Decoded:
    text: str
    encoding: str
    warning: str = ""


def decode_note(data: bytes) -> Decoded:
    """Decode UTF-8 (with or without BOM), UTF-16 with BOM, else GB18030, else lossy UTF-8.

    Line endings are normalised to ``\\n`` so CRLF files parse exactly like LF ones.
    """
    if data.startswith(_UTF16_BOMS):
        try:
            return Decoded(_normalise_newlines(data.decode("utf-16")), "utf-16")
        except UnicodeDecodeError:
            pass
    if b"\x00" in data[:_SNIFF]:
        raise BinaryFile("binary file (NUL bytes), not a Markdown note")
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    try:
        return Decoded(_normalise_newlines(data.decode("utf-8")), "utf-8")
    except UnicodeDecodeError:
        pass
    try:
        # GB18030 is a superset of GBK and GB2312, the encodings older Chinese editors wrote.
        text = data.decode("gb18030")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        return Decoded(
            _normalise_newlines(text), "utf-8", "not valid UTF-8; undecodable bytes replaced"
        )
    return Decoded(_normalise_newlines(text), "gb18030", "not UTF-8; decoded as GB18030/GBK")


def _normalise_newlines(text: str) -> str:
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")
