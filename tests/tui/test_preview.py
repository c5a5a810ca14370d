"""The search screen's preview (kb.tui.preview): a note formatted as the reader formats it,
in the rows that fit, its matched words highlighted; note text never read as markup."""

from __future__ import annotations

import pytest

from kb.tui.preview import markdown_lines, preview, window


def rows(markdown: str, width: int = 40, words: tuple[str, ...] = ()) -> list[str]:
    content = preview("T", "t.md", markdown, list(words), width).lay_out(width).rows
    return [line.plain.rstrip() for line in content.split("\n", allow_blank=True)][3:]


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("# Title\n\ntext", ["Title", "", "text"]),
        ("- one\n- two\n  - nested", ["• one", "• two", "  ▪ nested"]),
        ("3. three\n4. four", ["3. three", "4. four"]),
        ("> quoted\n> more", ["▌ quoted more"]),
        ("```\ncode line\n```", ["▏ code line"]),
        ("---", ["─" * 40]),
        (
            "| a | b |\n| - | - |\n| 1 | 2 |",
            ["a │ b", "──┼──", "1 │ 2"],
        ),
        ("![Roofline plot](img/roofline.png)", ["🖼 Roofline plot (roofline.png)"]),
        ("**bold** and `code` and [link](x.md)", ["bold and code and link"]),
        ("[red]not markup[/red] $x$", ["[red]not markup[/red] x"]),
    ],
)
def test_blocks_are_formatted_as_the_reader_formats_them(markdown, expected) -> None:
    assert rows(markdown) == expected


def test_list_items_wrap_under_their_first_word() -> None:
    shown = rows("- 显存带宽是GPU的瓶颈，尤其在 decode 阶段每生成一个 token", width=24)
    assert shown[0].startswith("• 显存带宽")
    assert all(line.startswith("  ") and line[2] != " " for line in shown[1:])
    assert len(shown) > 1


def test_code_and_tables_are_cut_not_wrapped() -> None:
    shown = rows("```\n" + "x = 1  # " + "long " * 20 + "\n```", width=30)
    assert len(shown) == 1 and shown[0].endswith("…")


def test_window_starts_at_the_first_match_below_the_first_screen() -> None:
    filler = "\n\n".join(f"paragraph {n} of filler text" for n in range(60))
    markdown = f"{filler}\n\n## The part\n\nwhere redis shows up\n\nafter it"
    shown, cut = window(markdown, ["Redis"], width=40, rows=20)
    assert cut
    assert shown.startswith("## The part")  # the match's heading comes with it
    assert "paragraph 0 " not in shown
    # A match on the first screen, or none at all: the note's start.
    assert window(markdown, ["paragraph"], 40, 20) == (window(markdown, [], 40, 20)[0], False)


def test_window_keeps_only_the_rows_that_fit() -> None:
    markdown = "\n\n".join(f"paragraph {n}" for n in range(500))
    shown, cut = window(markdown, [], width=40, rows=30)
    assert not cut
    assert "paragraph 10\n" in shown
    assert "paragraph 100" not in shown


def test_matched_words_are_highlighted_in_any_case() -> None:
    content = preview("T", "t.md", "Redis 与 redis，显存", ["REDIS", "显存"], 40).lay_out(40).rows
    lit = {
        content.plain[span.start : span.end]
        for span in content.spans
        if "underline" in str(span.style)
    }
    assert lit == {"Redis", "redis", "显存"}


def test_markdown_lines_prefixes() -> None:
    lines = markdown_lines("- a\n  - b")
    assert [(line.plain, prefix.first.plain, prefix.rest.plain) for line, prefix in lines] == [
        ("a", "• ", "  "),
        ("b", "  ▪ ", "    "),
    ]
