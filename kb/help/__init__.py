"""``kb help TOPIC``: sections of the README, shipped in the package so they work offline.

The ``*.md`` files here are copies of README sections, made by ``python -m kb.help`` and
checked against the README by ``tests/contracts/test_cli_help.py``, so the two never drift.
"""

from __future__ import annotations

# topic -> the README heading its text starts at (it runs to the next heading as high)
TOPICS = {
    "query": "#### The query language",
    "config": "## Configuration: `kb.yaml`",
    "links": "### Links",
}


def readme_section(readme: str, heading: str) -> str:
    """The README's section under ``heading``, the heading included, up to the next
    heading of the same or a higher level (headings in fenced code do not count)."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = readme.split("\n")
    try:
        start = lines.index(heading)
    except ValueError:
        raise KeyError(f"the README has no heading {heading!r}") from None
    fenced = False
    end = len(lines)
    for number in range(start + 1, len(lines)):
        line = lines[number]
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            marks = len(line) - len(line.lstrip("#"))
            if marks <= level and line[marks : marks + 1] == " ":
                end = number
                break
    return "\n".join(lines[start:end]).strip() + "\n"
