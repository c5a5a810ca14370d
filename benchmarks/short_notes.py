"""Short notes for the judged sets of issue 36: a folder of notes cut to their first
characters, written into a folder the benchmark names (the notes themselves are never
touched).

A note keeps its front matter whole (its title, tags, series and typed links are what a
short note has too) and the first CUT characters of its body; files that are not notes
are copied as they are, so that links to them still resolve.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kb.parse.frontmatter import split_front_matter  # noqa: E402

CUT = 600  # characters of body kept


def cut_text(text: str, chars: int = CUT) -> str:
    """The note with its front matter and the first ``chars`` characters of its body."""
    body = split_front_matter(text).body
    head = text[: len(text) - len(body)]
    return head + body[:chars]


def cut_folder(source: Path, target: Path, chars: int = CUT) -> Path:
    """A copy of ``source`` in ``target`` (made afresh) with every note cut."""
    if target.exists():
        shutil.rmtree(target)  # only ever a folder the caller named for this copy
    shutil.copytree(source, target)
    for path in target.rglob("*.md"):
        text = path.read_text(encoding="utf-8", errors="replace")
        path.write_text(cut_text(text, chars), encoding="utf-8")
    return target
