"""Limits checked before a note is parsed, so no note can hang or exhaust an ingest.

markdown-it-py is pure Python: its time and memory grow with the tokens it makes (about
330 bytes and tens of microseconds each), and tokens grow with lines and markup characters.
Each limit is far above the largest value among 1,356 real notes (in the comments), and
below what parses in about a second. A body over a limit is kept as plain text; front
matter over its limit is ignored. Counting is linear (``str.count``), never a regex.
"""

from __future__ import annotations

# Largest real body: 173,385 characters.
MAX_BODY_CHARS = 2_000_000
# Largest real body: 2,875 lines. Every line becomes block tokens.
MAX_BODY_LINES = 20_000
# Largest real body: 19,318. The characters where markdown-it's inline parser stops to try
# its rules (emphasis, links, code, HTML, entities, escapes), and `|`, which cuts table cells.
MARKUP_CHARS = "!#$%&*+-:<=>@[\\]^_`{}~|"
MAX_MARKUP_CHARS = 100_000
# Largest real body: 1,057. Each `[` may open a link, the costliest thing to look for.
MAX_BRACKETS = 10_000
# Largest real body: 256. Each `|` of a table row makes a cell, several tokens.
MAX_PIPES = 20_000
# Deepest real nesting of blocks (markdown-it's token level): 13. Each list level counts 2.
MAX_NESTING = 100
# Largest real front matter: 2,292 characters. YAML with a `*` loads in pure Python.
MAX_FRONT_MATTER_CHARS = 64_000


def body_over_limit(body: str) -> str | None:
    """Why a Markdown body is too large to parse (one line naming the limit), or None."""
    if len(body) > MAX_BODY_CHARS:
        return _over(len(body), MAX_BODY_CHARS, "characters")
    lines = body.count("\n") + 1
    if lines > MAX_BODY_LINES:
        return _over(lines, MAX_BODY_LINES, "lines")
    brackets = body.count("[")
    if brackets > MAX_BRACKETS:
        return _over(brackets, MAX_BRACKETS, "`[` (links)")
    pipes = body.count("|")
    if pipes > MAX_PIPES:
        return _over(pipes, MAX_PIPES, "`|` (table cells)")
    markup = sum(body.count(char) for char in MARKUP_CHARS)
    if markup > MAX_MARKUP_CHARS:
        return _over(markup, MAX_MARKUP_CHARS, "Markdown markup characters")
    return None


def front_matter_over_limit(raw: str) -> str | None:
    """Why front matter is too large to load, or None."""
    if len(raw) > MAX_FRONT_MATTER_CHARS:
        return _over(len(raw), MAX_FRONT_MATTER_CHARS, "characters")
    return None


def _over(count: int, limit: int, what: str) -> str:
    return f"{count:,} {what}, over the limit of {limit:,}"
