"""A note's images in the terminal (kb.tui.images): the placeholder's label, the file an
image shows, and the images the link list offers."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.tui.images import IMAGE_LINK, image_file, image_label, note_images
from kb.tui.widgets import markdown_parser


@pytest.mark.parametrize(
    ("alt", "src", "label"),
    [
        ("Roofline plot", "img/roofline.png", "🖼 Roofline plot (roofline.png)"),
        ("", "img/roofline.png", "🖼 roofline.png"),
        ("roofline.png", "roofline.png", "🖼 roofline.png"),
        ("图", "图片/%E5%B8%A6%E5%AE%BD.png?raw=1", "🖼 图 (带宽.png)"),
        ("a\x1b[31m b", "x.png", "🖼 a[31m b (x.png)"),
        ("remote", "https://example.com/a/b.svg", "🖼 remote (b.svg)"),
    ],
)
def test_image_label(alt, src, label) -> None:
    assert image_label(alt, src) == label


def test_image_file(tmp_path: Path) -> None:
    note = tmp_path / "site" / "content" / "posts" / "note.md"
    for file in ("site/content/posts/img/a b.png", "site/static/img/c.png"):
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_bytes(b"\x89PNG")
    note.write_text("x", encoding="utf-8")
    posts = note.parent
    assert image_file(note, "img/a%20b.png") == posts / "img" / "a b.png"
    assert image_file(note, "img/a b.png#x") == posts / "img" / "a b.png"
    assert image_file(note, "/img/c.png") == tmp_path / "site" / "static" / "img" / "c.png"
    assert image_file(note, "img/missing.png") is None
    assert image_file(note, "https://example.com/img/c.png") is None
    assert image_file(note, "") is None


def test_note_images_skip_code() -> None:
    markdown = (
        '![one](a.png) and ![two](b/c.png "title")\n\n'
        "```\n![not](code.png)\n```\n\n`![not](span.png)` ![three](<d e.png>)"
    )
    assert note_images(markdown) == [("one", "a.png"), ("two", "b/c.png"), ("three", "d e.png")]


def test_the_parser_turns_images_into_placeholder_links() -> None:
    tokens = markdown_parser().parse("see ![Roofline plot](img/roofline.png) here")
    children = [(t.type, t.content, t.attrs.get("href")) for t in tokens[1].children or []]
    assert children == [
        ("text", "see ", None),
        ("link_open", "", IMAGE_LINK + "img/roofline.png"),
        ("text", "🖼 Roofline plot (roofline.png)", None),
        ("link_close", "", None),
        ("text", " here", None),
    ]
