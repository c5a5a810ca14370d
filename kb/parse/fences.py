"""Which lines of a Markdown text are code: the one fenced-code scanner kb uses wherever a
line's "inside code?" matters (the reader's link rewriting, display pieces, mentions).

The rules are CommonMark's: a fence is three or more backticks or tildes indented at most
three spaces; it is closed by a run of the same character at least as long, with nothing
after it but spaces; a backtick fence's info string holds no backtick (else the line is
text); an unclosed fence runs to the end of the text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator


def _fence_run(line: str) -> tuple[str, int, str] | None:
    """(character, run length, rest of the line) when ``line`` starts like a fence."""
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3 or not stripped or stripped[0] not in "`~":
        return None
    char = stripped[0]
    run = len(stripped) - len(stripped.lstrip(char))
    if run < 3:
        return None
    return char, run, stripped[run:]


def code_lines(lines: Iterable[str]) -> Iterator[tuple[str, bool]]:
    """Each line with whether it is code: fence lines themselves count as code."""
    open_char, open_run = "", 0
    for line in lines:
        fence = _fence_run(line)
        if open_char:
            if fence and fence[0] == open_char and fence[1] >= open_run and not fence[2].strip():
                open_char, open_run = "", 0
            yield line, True
        elif fence and not (fence[0] == "`" and "`" in fence[2]):
            open_char, open_run = fence[0], fence[1]
            yield line, True
        else:
            yield line, False
