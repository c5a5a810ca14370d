"""What the UI shows, tested without the UI: pages, following links, history, tags, series."""

from __future__ import annotations

import pytest

from kb.notes.browse import History, display_markdown, parse_kb_href, split_for_display
from kb.notes.editing import new_note_name, new_note_text
from kb.notes.views import tag_tree
from kb.parse.note import parse_note


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("see [[lecture-03]]", "see [lecture-03](kb:wiki/lecture-03)"),
        ("[[Redis 学习笔记|笔记]]", "[笔记](kb:wiki/Redis%20%E5%AD%A6%E4%B9%A0%E7%AC%94%E8%AE%B0)"),
        ("![[softmax]]", "[↪ softmax](kb:wiki/softmax)"),
        ('[这篇]({{< ref "posts/moe.md" >}})', "[这篇](kb:ref/posts/moe.md)"),
        ('{{< relref "a.md" >}}', "[a.md](kb:ref/a.md)"),
        ("`[[name]]` stays", "`[[name]]` stays"),
        ("```\n[[code]]\n```\n[[x]]", "```\n[[code]]\n```\n[x](kb:wiki/x)"),
        ("red \x1b[31mtext\x07", "red [31mtext"),
    ],
)
def test_display_markdown(markdown: str, expected: str) -> None:
    assert display_markdown(markdown) == expected


def test_kb_hrefs_round_trip() -> None:
    href = display_markdown("[[lecture-03-gpus#Roofline 模型]]").split("(")[1].rstrip(")")
    assert parse_kb_href(href) == ("wikilink", "lecture-03-gpus", "Roofline 模型")
    assert parse_kb_href("https://x.org") is None


def test_split_for_display_never_cuts_a_code_block() -> None:
    body = "\n\n".join(["段落 " * 300, "```python\n" + "x = 1\n\nprint(x)\n" * 200 + "```", "结尾"])
    pieces = split_for_display(body, chunk_chars=500)
    assert len(pieces) > 1
    assert "\n".join(pieces) == body
    for piece in pieces:
        assert piece.count("```") % 2 == 0
        assert parse_note("a.md", piece).code.count("print") in (0, 200)


def test_history_back_forward_and_breadcrumb() -> None:
    history = History()
    for note in (1, 2, 3):
        history.visit(note)
    assert history.trail() == [1, 2, 3]
    assert history.back() == 2
    assert history.can_go_forward
    history.visit(4)  # a new visit drops the forward part
    assert not history.can_go_forward
    assert history.trail() == [1, 2, 4]
    assert history.back() == 2
    assert history.back() == 1
    assert history.back() == 1
    assert history.forward() == 2


def test_tag_tree_nests_and_counts() -> None:
    tree = tag_tree([("cs336/lecture", 12), ("cs336", 3), ("CS336/assignment", 2), ("redis", 4)])
    assert [(n.tag, n.count) for n in tree] == [("cs336", 17), ("redis", 4)]
    assert [(c.tag, c.count) for c in tree[0].children] == [
        ("CS336/assignment", 2),
        ("cs336/lecture", 12),
    ]


def test_new_note_names_and_template() -> None:
    assert new_note_name("Redis 学习笔记", set()) == "redis-学习笔记.md"
    assert new_note_name("Redis 学习笔记", {"redis-学习笔记.md"}) == "redis-学习笔记-2.md"
    assert new_note_name("???", set()) == "untitled.md"
    text = new_note_text('He said "hi"', tags=["a"])
    note = parse_note("x.md", text)
    assert note.title == 'He said "hi"'
    assert note.tags == ["a"]
    assert note.date is not None


def test_note_page_follow_and_series(make_kb) -> None:
    kb = make_kb(
        {
            "a.md": "---\ntitle: A\nseries: [S]\ndate: 2024-01-01\n---\n\n# A\n\n## 小节 一\n\n"
            "[[b]] [b again](b.md#missing) [site](https://x.org) [gone](nowhere.md)\n",
            "b.md": "---\ntitle: B\nseries: [S]\ndate: 2024-02-01\n---\n\n# B\n",
        }
    )
    kb.ingest()
    a = kb.find_note("a.md")
    b = kb.find_note("b.md")
    page = kb.note_page(a.id)
    assert page.headings == [(1, "A", "a"), (2, "小节 一", "小节-一")]
    assert "[b](kb:wiki/b)" in page.markdown
    statuses = [(link.text, link.status, link.note_id) for link in page.links]
    assert statuses == [
        ("b", "resolved", b.id),
        ("b again", "missing-heading", b.id),
        ("site", "external", None),
        ("gone", "broken", None),
    ]
    assert kb.follow(a.id, "kb:wiki/b").note_id == b.id
    assert kb.follow(a.id, "b.md").note_id == b.id
    assert kb.follow(a.id, "#小节-一").kind == "anchor"
    assert kb.follow(a.id, "https://x.org").kind == "external"
    assert kb.follow(a.id, "nowhere.md").kind == "unresolved"
    assert kb.follow(a.id, "/etc/passwd").kind == "unresolved"
    [(name, notes)] = kb.series(b.id)
    assert (name, [n.title for n in notes]) == ("S", ["A", "B"])
    assert [n.title for n in kb.recent(5)] == ["B", "A"]


def test_new_note_creates_a_file_in_the_root(make_kb) -> None:
    kb = make_kb({})
    path = kb.new_note("第一篇 note")
    assert path.parent == kb.config.roots[0].path
    assert path.name == "第一篇-note.md"
    kb.ingest()
    assert kb.find_note("第一篇 note").path == "第一篇-note.md"
    with pytest.raises(Exception, match="outside the notes root"):
        kb.new_note("x", folder="../../elsewhere")
