"""A note's sections: each ATX heading (``## Title``) outside fenced code, and the lines
from it to the next heading of the same or a higher level. Pure functions over the
Markdown as written; ``kb mcp``'s read_note gives one section with them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kb.errors import UsageError
from kb.parse.fences import code_lines
from kb.text import clean_line, slugify

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_LISTED = 12  # headings named in an error


class Section(NamedTuple):
    level: int
    title: str
    slug: str
    start: int  # character offset of the heading line in the text
    end: int  # offset where the section ends (the next heading at this level or above)


def sections(markdown: str) -> list[Section]:
    """Every heading's section, in order (front matter and fenced code hold none)."""
    from kb.parse.frontmatter import split_front_matter  # deferred: loads yaml

    body_start = len(markdown) - len(split_front_matter(markdown).body)
    found: list[tuple[int, str, int]] = []  # level, title, offset
    offset = 0
    lines = markdown.splitlines(keepends=True)
    for line, is_code in code_lines(lines):
        if offset >= body_start and not is_code:
            match = _ATX.match(line.rstrip("\r\n"))
            if match:
                found.append((len(match.group(1)), clean_line(match.group(2) or ""), offset))
        offset += len(line)
    out = []
    for index, (level, title, start) in enumerate(found):
        end = len(markdown)
        for later_level, _, later_start in found[index + 1 :]:
            if later_level <= level:
                end = later_start
                break
        out.append(Section(level, title, slugify(title), start, end))
    return out


def find_section(markdown: str, heading: str) -> Section:
    """The section whose heading is ``heading``: its text (any case, ``#`` marks optional)
    or its anchor slug. A UsageError naming the note's headings when none or several match."""
    found = sections(markdown)
    wanted = clean_line(heading.strip().lstrip("#").strip()).casefold()
    for rule in (
        lambda s: s.title.casefold() == wanted,
        lambda s: s.slug == slugify(wanted) or s.slug == wanted,
    ):
        matches = [s for s in found if rule(s)]
        if len(matches) == 1:
            return matches[0]
        if matches:
            lines = ", ".join(str(markdown.count("\n", 0, s.start) + 1) for s in matches)
            raise UsageError(
                f"{len(matches)} headings read {heading!r} (lines {lines}); "
                "read the whole note instead"
            )
    titles = [s.title for s in found]
    listed = "; ".join(titles[:_LISTED]) + ("; …" if len(titles) > _LISTED else "")
    hint = f"its headings: {listed}" if titles else "it has no headings"
    raise UsageError(f"no heading {clean_line(heading)!r} in this note; {hint}")
