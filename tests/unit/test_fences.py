"""The one fenced-code scanner: which lines are code, by CommonMark's fence rules."""

from __future__ import annotations

import pytest

from kb.notes.browse import display_markdown, split_for_display
from kb.parse.fences import code_lines

# Each case: the text, and for each line whether it is code ("c") or text (".").
CASES = [
    ("no fences", "a\nb", ".."),
    ("backticks", "a\n```\nx\n```\nb", ".ccc."),
    ("tildes", "~~~\nx\n~~~\nb", "ccc."),
    ("info string", "```python\nx = 1\n```\nb", "ccc."),
    ("longer close", "```\nx\n`````\nb", "ccc."),
    ("shorter run does not close", "````\n```\nx\n````\nb", "cccc."),
    ("other character does not close", "```\n~~~\nx\n```\nb", "cccc."),
    ("close with text after is code", "```\n``` x\nstill\n```\nb", "cccc."),
    ("two backticks are text", "``\nx", ".."),
    ("indented four spaces is not a fence", "    ```\nx", ".."),
    ("indented three spaces is a fence", "   ```\nx\n   ```\nb", "ccc."),
    ("backtick in a backtick info string", "``` a`b\nx", ".."),
    ("backtick in a tilde info string", "~~~ a`b\nx\n~~~", "ccc"),
    ("unclosed runs to the end", "```\nx\ny", "ccc"),
    ("two blocks", "```\nx\n```\nt\n~~~\ny\n~~~", "ccc.ccc"),
]


@pytest.mark.parametrize(
    ("text", "expected"), [(c[1], c[2]) for c in CASES], ids=[c[0] for c in CASES]
)
def test_code_lines(text: str, expected: str) -> None:
    marks = "".join("c" if is_code else "." for _, is_code in code_lines(text.split("\n")))
    assert marks == expected


def test_wikilinks_in_code_are_left_as_written() -> None:
    body = "see [[Redis]]\n````\n```\n[[not a link]]\n````\nand [[FSDP]]"
    shown = display_markdown(body).split("\n")
    assert shown[0].startswith("see [Redis](kb:wiki/")
    assert shown[3] == "[[not a link]]"  # a shorter run inside the block does not close it
    assert shown[5].startswith("and [FSDP](kb:wiki/")


def test_display_pieces_never_split_a_code_block() -> None:
    block = "```\n" + "x\n\n" * 50 + "```"
    pieces = split_for_display("intro\n\n" + block + "\n\nafter", chunk_chars=10)
    assert len(pieces) == 2
    assert [piece.count("```") for piece in pieces] == [2, 0]
