"""Table-driven tests of the pure parsing functions: input text in, what a user sees out."""

from __future__ import annotations

import pytest

from kb.parse.note import normalise_date, parse_note
from kb.text import slugify, split_list, strip_controls, word_count


def links(text: str, path: str = "a.md") -> list[tuple[str, str, str, int]]:
    return [
        (link.kind, link.target, link.anchor, link.line) for link in parse_note(path, text).links
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[t](other.md)", [("markdown", "other.md", "", 1)]),
        ("[t](../x/other)", [("markdown", "../x/other", "", 1)]),
        ("[t](other.md#MySQL-事务)", [("markdown", "other.md", "MySQL-事务", 1)]),
        ("[t](%E6%98%BE%E5%AD%98.md)", [("markdown", "%E6%98%BE%E5%AD%98.md", "", 1)]),
        ("[t](显存.md)", [("markdown", "显存.md", "", 1)]),
        ("[t](/cs336/lecture.md)", [("markdown", "/cs336/lecture.md", "", 1)]),
        ("[t](#local)", [("anchor", "", "local", 1)]),
        ("![d](img/a.png)", [("image", "img/a.png", "", 1)]),
        ("[t](https://arxiv.org/abs/1)", [("url", "https://arxiv.org/abs/1", "", 1)]),
        ("<https://x.org>", [("url", "https://x.org", "", 1)]),
        ("[[lecture-03]]", [("wikilink", "lecture-03", "", 1)]),
        ("[[Redis 学习笔记|笔记]]", [("wikilink", "Redis 学习笔记", "", 1)]),
        ("[[lecture-03#Roofline]]", [("wikilink", "lecture-03", "Roofline", 1)]),
        ("[[Index | notes/index.md]]", [("wikilink", "Index", "", 1)]),
        ("| [[a\\|b]] |\n|---|", [("wikilink", "a", "", 1)]),
        ("![[softmax]]", [("embed", "softmax", "", 1)]),
        ('{{< ref "cs336/l2.md" >}}', [("hugo-ref", "cs336/l2.md", "", 1)]),
        ('{{< relref "p.md#sec" >}}', [("hugo-ref", "p.md", "sec", 1)]),
        ('[这篇]({{< ref "posts/moe.md" >}})', [("hugo-ref", "posts/moe.md", "", 1)]),
        ("[FSDP][f]\n\n[f]: fsdp/index.md", [("reference", "fsdp/index.md", "", 1)]),
        ("[f]\n\n[f]: fsdp/index.md", [("reference", "fsdp/index.md", "", 1)]),
        ("[t](<a b.md>)", [("markdown", "a b.md", "", 1)]),
        ('text\n\n[todo]: dev/todo.md "Todo"', [("reference", "dev/todo.md", "", 3)]),
        ("line one\nline two [t](b.md)", [("markdown", "b.md", "", 2)]),
        # look-alikes in code are not links
        ("```bash\nif [[ -f x ]]; then\n```", []),
        ("`[[name]]` and `[t](x.md)`", []),
        ("    [[indented code]]", []),
        # bash's tests in prose: `[[` and a space, or an operator, names no note
        ("if [[ 2 < 10 ]] is true", []),
        ("用 [[ 和 ]] 写条件", []),
        ("[[a > b]] and [[x && y]]", []),
        ("[[ $x -eq 1 ]]", []),
        ("[[ -f x ]] then [[note]]", [("wikilink", "note", "", 1)]),
    ],
)
def test_links(text: str, expected: list[tuple[str, str, str, int]]) -> None:
    assert links(text) == expected


def test_link_lines_count_front_matter() -> None:
    text = "---\ntitle: T\n---\n\n# T\n\nsee [[other]]\n"
    assert links(text) == [("wikilink", "other", "", 7)]


def test_typed_links_from_front_matter() -> None:
    note = parse_note("a.md", '---\ntitle: T\nuses: ["Redis 学习笔记"]\nlecture: l3.md\n---\n')
    typed = [(link.rel, link.target, link.line) for link in note.links]
    assert typed == [("uses", "Redis 学习笔记", 3), ("lecture", "l3.md", 4)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ntags: [a, cs336/lecture]\n---\n", ["a", "cs336/lecture"]),
        ("---\ntags: gpu cuda profiling\n---\n", ["gpu", "cuda", "profiling"]),
        ('---\ntags: "redis, 数据结构, cache"\n---\n', ["redis", "数据结构", "cache"]),
        ("---\ntag: single\n---\n", ["single"]),
        ('+++\ntags = ["toml", "x/y"]\n+++\n', ["toml", "x/y"]),
        ("body #性能优化 and #cs336/assignment.", ["性能优化", "cs336/assignment"]),
        ("---\ntags: [A]\n---\nalso #a and #b", ["A", "b"]),
        ("issue #123 and colour #ff00aa", []),
        ("no a#b or url http://x/#frag", []),
        ("```cpp\n#include <vector>\n```\n```python\n# comment\n```", []),
        ("`#notatag` here", []),
        ("[#linktext](x.md)", []),
        ("## Heading {#custom-id}", []),
        ('<span style="color:#eee">x</span>', []),
    ],
)
def test_tags(text: str, expected: list[str]) -> None:
    assert parse_note("a.md", text).tags == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("a.md", "---\ntitle: Roofline 模型\n---\n# Other", "Roofline 模型"),
        ("a.md", "intro\n\n# First H1\n\n# Second", "First H1"),
        ("posts/fsdp/index.md", "no heading", "fsdp"),
        ("cs336/_index.md", "", "cs336"),
        ("bazel/README.md", "text", "bazel"),
        ("my-note.md", "## only h2", "my-note"),
        ("a.md", "---\ntitle: 42\n---\n", "42"),
        ("a.md", '---\ntitle: "bad\\u001b[31m\\nred"\n---\n', "bad[31m red"),
    ],
)
def test_title(path: str, text: str, expected: str) -> None:
    assert parse_note(path, text).title == expected


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("a.md", "---\ndate: 2024-03-10\n---\n", "2024-03-10"),
        ("a.md", "---\ndate: 2024-03-10T21:30:00+08:00\n---\n", "2024-03-10T21:30:00+08:00"),
        ("a.md", "---\ndate: '2024/3/9'\n---\n", "2024-03-09"),
        ("a.md", "---\ndate: 2024-03-10 08:05\n---\n", "2024-03-10T08:05:00"),
        ("a.md", "+++\ndate = 2024-05-01\n+++\n", "2024-05-01"),
        ("posts/2024-03-10-flops.md", "no front matter", "2024-03-10"),
        ("posts/2024-13-45-bad.md", "", None),
        ("a.md", "---\ndate: someday\n---\n", None),
        ("a.md", "plain", None),
    ],
)
def test_date(path: str, text: str, expected: str | None) -> None:
    assert parse_note(path, text).date == expected


def test_unrecognised_date_is_a_warning() -> None:
    note = parse_note("a.md", "---\ndate: someday\n---\n")
    assert [p.kind for p in note.problems] == ["front-matter"]
    assert "someday" in note.problems[0].message


def test_metadata_keys() -> None:
    text = (
        "---\ntitle: T\ncategories: [GPU]\nseries: [CS336]\nkeywords: a, b\ndraft: true\n"
        "slug: flops-vs-latency\n"
        'aliases: ["Redis 数据结构", redis-notes, /old/posts/roofline.html, /2023/05/roof/, '
        "https://old.example.com/x]\n---\n"
    )
    note = parse_note("a.md", text)
    assert note.categories == ["GPU"]
    assert note.series == ["CS336"]
    assert note.keywords == ["a", "b"]
    assert note.draft is True
    assert note.slug == "flops-vs-latency"
    assert note.name_aliases == ["Redis 数据结构", "redis-notes"]
    assert note.url_aliases == [
        "/old/posts/roofline.html",
        "/2023/05/roof/",
        "https://old.example.com/x",
    ]


def test_headings_have_slugs_and_lines() -> None:
    text = "---\ntitle: t\n---\n# 标题\n\n## MySQL 事务\n\n## MySQL 事务\n\n### Q&A: why? {#faq}\n"
    note = parse_note("a.md", text)
    assert [(h.level, h.text, h.slug, h.line) for h in note.headings] == [
        (1, "标题", "标题", 4),
        (2, "MySQL 事务", "mysql-事务", 6),
        (2, "MySQL 事务", "mysql-事务-1", 8),
        (3, "Q&A: why?", "faq", 10),
    ]


@pytest.mark.parametrize(
    ("heading", "text", "slug"),
    [
        ("## Title {#my-id}", "Title", "my-id"),
        ("## Title {.wide #my-id .x}", "Title", "my-id"),
        ("## Title {# #my-id}", "Title", "my-id"),
        ("## Title {##}", "Title", "#"),
        ("## Title {#}", "Title {#}", "title-"),
        ("## Title {a}b}", "Title {a}b}", "title-ab"),
        ("## Title {#a} tail", "Title {#a} tail", "title-a-tail"),
        ("## {#only-id}", "", "only-id"),
        pytest.param("## x {" + "#" * 4000, "x {" + "#" * 4000, "x-", id="issue-9"),
    ],
)
def test_custom_heading_ids(heading: str, text: str, slug: str) -> None:
    (parsed,) = parse_note("a.md", heading + "\n").headings
    assert (parsed.text, parsed.slug) == (text, slug)


def test_each_link_keeps_its_own_text_when_two_share_a_target() -> None:
    note = parse_note("a.md", "[first](x.md) and [second](x.md), [first](x.md)\n")
    assert [link.text for link in note.links] == ["first", "second", "first"]


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<div>a <b>bold</b> c</div>", "a  bold  c"),
        ("<div>1 < 2</div>", "1"),
        pytest.param("<div>" + "<" * 1000, "<" * 1000, id="unclosed"),
    ],
)
def test_html_blocks_lose_their_tags(html: str, text: str) -> None:
    assert parse_note("a.md", html + "\n").text == text


def test_tab_after_a_key_is_read_as_a_space_after_many_blank_lines() -> None:
    note = parse_note("a.md", "---\n" + "\n" * 1000 + "title:\tTabbed\n---\n")
    assert note.title == "Tabbed"


def test_text_code_summary_and_word_count() -> None:
    text = (
        "# Roofline\n\n显存带宽是GPU的瓶颈, see **arithmetic intensity**.\n\n"
        "Second paragraph.\n\n```python\nx = 1  # comment\n```\n"
    )
    note = parse_note("a.md", text)
    assert note.summary == "显存带宽是GPU的瓶颈, see arithmetic intensity."
    assert "**" not in note.text
    assert "显存带宽是GPU的瓶颈" in note.text
    assert "x = 1" not in note.text
    assert note.code == "x = 1  # comment\n"
    # Roofline(1) + 显存带宽是(5) + GPU(1) + 的瓶颈(3) + see arithmetic intensity(3) + 2
    assert note.word_count == 15


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("MySQL 事务", "mysql-事务"),
        ("Hello, World!", "hello-world"),
        ("FSDP 的 FlatParameter", "fsdp-的-flatparameter"),
        ("C++ value categories", "c-value-categories"),
        ("snake_case-and-dash", "snake_case-and-dash"),
    ],
)
def test_slugify(text: str, expected: str) -> None:
    assert slugify(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("显存带宽", 4), ("hello world", 2), ("CS336 的 BPE tokenizer", 4), ("", 0)],
)
def test_word_count(text: str, expected: int) -> None:
    assert word_count(text) == expected


def test_split_list_prefers_commas() -> None:
    assert split_list("hello world, bonjour") == ["hello world", "bonjour"]
    assert split_list("a b  c") == ["a", "b", "c"]
    assert split_list("数据结构、缓存") == ["数据结构", "缓存"]


def test_strip_controls_keeps_newlines() -> None:
    assert strip_controls("a\x1b[2Jb\x07\n\tc\x9b") == "a[2Jb\n\tc"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-10", "2024-03-10"),
        ("2024-03-10T01:02:03Z", "2024-03-10T01:02:03+00:00"),
        ("2024.3.1", "2024-03-01"),
        ("yesterday", None),
        ("2024-02-30", None),
    ],
)
def test_normalise_date(value: str, expected: str | None) -> None:
    assert normalise_date(value) == expected
