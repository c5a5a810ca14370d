"""Where link targets stand, to the character (kb.parse.spans), and bytes that come back
exactly (kb.exact_text): what kb mv edits, and nothing else."""

from __future__ import annotations

import pytest

from kb.links.exact_text import ExactText
from kb.parse.spans import link_spans


def _found(text: str) -> list[tuple[str, str, str, int]]:
    return [(s.kind, s.target, text[s.start : s.end], s.line) for s in link_spans(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[a.md](a.md)\n", [("markdown", "a.md", "a.md", 1)]),  # the text is no target
        ('Pick option (a), "a" or [x](a)\n', [("markdown", "a", "a", 1)]),
        ('[x](a.md#part "title")\n', [("markdown", "a.md", "a.md", 1)]),
        ("[x](<my note.md#p>)\n", [("markdown", "my note.md", "my note.md", 1)]),
        ("`[x](a.md)` and\n\n```\n[y](b.md)\n```\n", []),  # code is never a link
        ('![plot](img/p.png "t")\n', [("image", "img/p.png", "img/p.png", 1)]),
        ("[[Redis 笔记 #ZSET | the notes ]]\n", [("wikilink", "Redis 笔记", "Redis 笔记", 1)]),
        ("![[diagram.png]]\n", [("embed", "diagram.png", "diagram.png", 1)]),
        ('{{< ref "eng/a.md#x" >}}\n', [("hugo-ref", "eng/a.md", "eng/a.md", 1)]),
        ("[x](https://e.org/a.md) [[#local]] [y](#h)\n", []),
        ('[t][r]\n\n[r]: a.md "T"\n', [("reference", "a.md", "a.md", 3)]),
        ("[t][R one]\n\n[r   ONE]:\n  <a b.md>\n", [("reference", "a b.md", "a b.md", 4)]),
        (
            "> - quote [x](q.md)\n>   and [y](r.md)\n",
            [("markdown", "q.md", "q.md", 1), ("markdown", "r.md", "r.md", 2)],
        ),
        (
            "| [x](a.md) | [x](a.md) |\n|---|---|\n| [[a]] | b |\n",
            [
                ("markdown", "a.md", "a.md", 1),
                ("markdown", "a.md", "a.md", 1),
                ("wikilink", "a", "a", 3),
            ],
        ),
        ("# Title [x](a.md) #\n", [("markdown", "a.md", "a.md", 1)]),
        ("显存 🎉 带宽 [显存](../显存.md) 后\n", [("markdown", "../显存.md", "../显存.md", 1)]),
        ("a\fb\u2028c\x85d\x1c [x](a.md)\n", [("markdown", "a.md", "a.md", 1)]),
        (
            "---\ntitle: T\nrelated: [a.md, 'b#h']\nuses:\n  - c.md\nx: a.md\n---\n\ntext a.md\n",
            [
                ("front-matter", "a.md", "a.md", 3),
                ("front-matter", "b", "b", 3),
                ("front-matter", "c.md", "c.md", 5),
            ],
        ),
    ],
)
def test_link_spans(text: str, expected: list[tuple[str, str, str, int]]) -> None:
    found = _found(text)
    assert sorted(found) == sorted(expected)


def test_the_two_identical_cells_of_a_row_are_two_places() -> None:
    text = "| [x](a.md) | [x](a.md) |\n|---|---|\n"
    starts = [s.start for s in link_spans(text)]
    assert len(set(starts)) == 2


@pytest.mark.parametrize(
    "data",
    [
        b"plain\n",
        b"\xef\xbb\xbfbom\r\n",
        b"crlf\r\nand lone\rcr\n",
        b"\xff\xfe\x80 not utf-8 nor gb18030 \x81\n",
        "显存带宽 GBK\r\n".encode("gbk"),
        "\ufeffutf-16 le 🎉\r\n".encode("utf-16-le"),
        "\ufeffutf-16 be 🎉\n".encode("utf-16-be"),
    ],
)
def test_exact_text_gives_the_same_bytes_back(data: bytes) -> None:
    exact = ExactText.of(data)
    assert exact is not None
    assert exact.replaced([]) == data
    assert "\r" not in exact.normalised


@pytest.mark.parametrize(
    ("data", "old", "new", "expected"),
    [
        (b"a\r\nb [x](t.md)\r\n", "t.md", "zz.md", b"a\r\nb [x](zz.md)\r\n"),
        (b"\x81\xfe [x](t.md) \xff", "t.md", "z.md", b"\x81\xfe [x](z.md) \xff"),
        (
            "显存带宽 [x](t.md)\n".encode("gbk"),
            "t.md",
            "显存.md",
            "显存带宽 [x](显存.md)\n".encode("gbk"),
        ),
        (
            "\ufeff🎉\r\n[x](t.md)".encode("utf-16-be"),
            "t.md",
            "z.md",
            "\ufeff🎉\r\n[x](z.md)".encode("utf-16-be"),
        ),
    ],
)
def test_an_edit_changes_only_its_span(data: bytes, old: str, new: str, expected: bytes) -> None:
    exact = ExactText.of(data)
    assert exact is not None
    start = exact.normalised.index(old)
    assert exact.replaced([(start, start + len(old), new)]) == expected
