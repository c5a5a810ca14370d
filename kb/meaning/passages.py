"""Notes split into passages for embedding: pure functions over a note's stored text.

A passage is a few hundred characters of one section, cut at paragraph (line) breaks,
and is embedded with the note's title and its heading path in front, so that a passage
deep in a note still says what it is about. Code blocks are left out: a model of
sentences reads code as noise, and identifiers are the words' job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TARGET = 400  # characters a passage aims at
HARD_MAX = 600  # a paragraph longer than this is cut
MAX_PASSAGES = 200  # a 5 MB note: its first this many passages only
MAX_CONTEXT = 120  # characters of title and heading path put in front
RULES = 1  # how notes are split (what is left out, where a passage ends): bump on a change


def splitting() -> str:
    """How passages are cut, for the vectors' stored signature: passages cut another way
    are embedded again, never mixed with these."""
    return f"passages{RULES}-{TARGET}-{HARD_MAX}-{MAX_PASSAGES}-{MAX_CONTEXT}"


@dataclass(frozen=True, slots=True)
class Passage:
    position: int
    heading: str  # the heading path, "A › B", '' before the first heading
    text: str  # the passage as shown (≈ …)
    start: int = 0  # where it stands in the note's plain text (characters)
    end: int = 0

    def embedded_text(self, title: str) -> str:
        """What the embedder reads: title, heading path, passage."""
        context = " › ".join(part for part in (title, self.heading) if part)[:MAX_CONTEXT]
        return f"{context}\n{self.text}" if context else self.text


def split_passages(title: str, text: str, headings: Sequence[tuple[int, str]]) -> list[Passage]:
    """``text`` (the note's plain text, a line per block) cut into passages. ``headings``
    are (level, text) in order; a line equal to the next heading starts a section."""
    passages: list[Passage] = []
    path: list[tuple[int, str]] = []
    pending = list(headings)
    buffer: list[str] = []
    size = 0
    span = [0, 0]  # of the lines in buffer, in text

    def flush() -> None:
        nonlocal size
        body = "\n".join(buffer).strip()
        buffer.clear()
        size = 0
        if body and _has_words(body) and len(passages) < MAX_PASSAGES:
            heading = " › ".join(h for _, h in path)
            passages.append(Passage(len(passages), heading, body, span[0], span[1]))

    offset = 0
    for raw in text.splitlines(keepends=True):
        line_start = offset
        offset += len(raw)
        line = raw.strip()
        if not line:
            continue
        if pending and line == pending[0][1].strip():
            flush()
            level, heading = pending.pop(0)
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, heading.strip()))
            continue
        while len(line) > HARD_MAX:  # one huge paragraph: cut it, at a space if one is near
            cut = line.rfind(" ", TARGET, HARD_MAX)
            cut = cut if cut > 0 else TARGET
            if buffer:
                flush()
            span[:] = [line_start, line_start + cut]
            buffer.append(line[:cut])
            flush()
            line_start += cut
            line = line[cut:].strip()
        if size and size + len(line) > TARGET:
            flush()
        if not buffer:
            span[0] = line_start
        span[1] = offset
        buffer.append(line)
        size += len(line) + 1
        if len(passages) >= MAX_PASSAGES:
            break
    flush()
    if not passages and title.strip() and _has_words(title):
        passages.append(Passage(0, "", title.strip()))  # a note of only code or an image
    return passages


def passage_text(text: str, start: int, end: int) -> str:
    """A stored passage's text, read back from the note's plain text."""
    return "\n".join(line.strip() for line in text[start:end].splitlines() if line.strip())


def _has_words(text: str) -> bool:
    return any(ch.isalnum() for ch in text)
