"""Site markup is not text anywhere a user reads: Liquid and Hugo shortcodes in the reader,
the preview and the search index; links to a site's tag and category pages."""

from __future__ import annotations

import pytest

from kb.notes.browse import display_markdown
from tests.conftest import run_cli
from tests.tui.pilot import screen_lines, settle

# -- what the reader is given (kb.parse.site_markup's rules), one row a rule --------------


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("{% include toc %}", ""),
        ("前言 {% include figure.html %} 正文", "前言  正文"),
        ("{{ site.title }} blog", " blog"),
        ("{{ name }} stays", "{{ name }} stays"),  # not a Jekyll site's variable
        # A URL built from the site's address is the address the site serves.
        (
            "![架构]({{ site.url }}{{ site.baseurl }}/assets/images/a.png)",
            "![架构](/assets/images/a.png)",
        ),
        ('[XML]({{ "sitemap.xml" | absolute_url }})', "[XML](/sitemap.xml)"),
        (
            "[上篇]({{ site.baseurl }}{% link _posts/2017-09-13-saga.md %})",
            "[上篇](kb:link/_posts/2017-09-13-saga.md)",
        ),
        ("[上篇]({% post_url 2017-09-13-saga %})", "[上篇](kb:post/2017-09-13-saga)"),
        # raw: what it holds, exactly; the tags go.
        ("{% raw %}`{% katex %}`{% endraw %} 写法", "`{% katex %}` 写法"),
        ("{% raw %}{{ content }}{% endraw %}", "{{ content }}"),
        # Hugo: a pair's tags go, a title shows, a figure is an image.
        ('{{% admonition note "参考代码" true %}}', "**参考代码**"),
        ("{{% fold 证明 %}}", "**证明**"),
        ('{{< notice title="Heads up" >}}', "**Heads up**"),
        ("{{% question %}}", ""),
        ("{{% /admonition %}}", ""),
        ('{{< figure src="/img/x.png" caption="架构图" >}}', "![架构图](/img/x.png)"),
        ("按 {{< kbd ctrl >}} 键", "按  键"),
        ('{{</* figure src="a" */>}} 是写法', '{{< figure src="a" >}} 是写法'),
        ("{: .notice--info}", ""),
        ("`{% include toc %}` in code", "`{% include toc %}` in code"),
    ],
)
def test_site_markup_shows_as_the_site_shows_it(written: str, shown: str) -> None:
    assert display_markdown(written) == shown


def test_code_is_kept_but_for_raw_tags_and_highlight_is_code() -> None:
    body = "\n".join(
        [
            "```yaml",
            "  {% raw %}",
            "  data: ${{ github.event }}",
            "  {% endraw %}",
            "{% include x %}",
            "```",
            "{% highlight python %}",
            "# a comment, not a heading {% x %}",
            "{% endhighlight %}",
        ]
    )
    assert display_markdown(body).split("\n") == [
        "```yaml",
        "  ",
        "  data: ${{ github.event }}",
        "  ",
        "{% include x %}",
        "```",
        "```python",
        "# a comment, not a heading {% x %}",
        "```",
    ]


# -- the reader and the preview -----------------------------------------------------------

JEKYLL_POST = """---
title: Saga 设计
tags: [saga]
---
{% include toc %}

架构如下：

![Saga 架构]({{ site.url }}{{ site.baseurl }}/assets/images/saga.png)

{{% admonition note "参考代码" true %}}
补偿事务按相反的顺序执行。
{{% /admonition %}}

{{< figure src="/img/flow.png" caption="流程图" >}}

更多见 [上篇]({{ site.baseurl }}{% link before.md %})。
"""


@pytest.fixture
def site_kb(make_kb):
    kb = make_kb(
        {
            "saga.md": JEKYLL_POST,
            "before.md": "---\ntitle: 上篇\n---\n正文\n",
            "gpu.md": "---\ntitle: GPU 笔记\ntags: [GPU 性能]\ncategories: [硬件]\n---\n正文\n",
            "links.md": (
                "---\ntitle: 索引\n---\n"
                "[性能标签](/tags/gpu-性能/) 和 [硬件分类](/categories/硬件/)，"
                "[全部标签](/tags/)\n"
            ),
        }
    )
    kb.ingest()
    return kb


def _no_site_markup(text: str) -> None:
    for mark in ("{%", "%}", "{{", "}}", "site.url"):
        assert mark not in text


@pytest.mark.slow
async def test_the_reader_and_the_preview_show_no_site_markup(site_kb) -> None:
    from kb.tui.app import make_app
    from tests.tui.pilot import open_note, search

    app = make_app(site_kb, watch=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "补偿")
        await pilot.pause(0.5)  # the preview waits for typing to pause
        await settle(app, pilot)
        preview = "\n".join(screen_lines(app))
        assert "Saga 设计" in preview and "补偿事务" in preview
        _no_site_markup(preview)
        assert "🖼 Saga 架构 (saga.png)" in preview
        await open_note(app, pilot, "补偿")
        assert app.screen.id == "note"
        reader = "\n".join(screen_lines(app))
        assert "补偿事务按相反的顺序执行" in reader
        _no_site_markup(reader)
        assert "🖼 Saga 架构 (saga.png)" in reader
        assert "🖼 流程图 (flow.png)" in reader
        assert "参考代码" in reader


async def test_liquid_between_html_tags_is_not_indexed(make_kb) -> None:
    kb = make_kb(
        {
            "sitemap.md": "# Sitemap\n\n<h2>Pages</h2>\n{% for p in pages %}\n"
            "  {% include archive-single.html %}\n{% endfor %}\n",
            "real.md": "# Real\n\nThe release includes an archive of logs.\n",
        }
    )
    kb.ingest()
    assert [hit.title for hit in kb.search("archive").hits] == ["Real"]
    assert [hit.title for hit in kb.search("single").hits] == []


# -- links to the pages a site generates for its tags and categories -----------------------


def test_links_to_tag_and_category_pages_are_not_broken(site_kb) -> None:
    result = run_cli(site_kb, "check")
    assert "tags/" not in result.output and "categories/" not in result.output
    # A page of the site that is no tag list is still reported.
    page = site_kb.notes_root / "other.md"
    page.write_text("# Other\n\n[gone](/posts/gone/)\n", encoding="utf-8")
    site_kb.ingest()
    assert "/posts/gone/" in run_cli(site_kb, "check").output


def test_following_a_tag_page_link_names_kbs_tag(site_kb) -> None:
    note = site_kb.find_note("索引", cwd=site_kb.home)
    tag = site_kb.follow(note.id, "/tags/gpu-性能/")
    assert (tag.kind, tag.target) == ("tag", "GPU 性能")  # Hugo's URL of the tag
    category = site_kb.follow(note.id, "/categories/硬件/")
    assert (category.kind, category.target) == ("category", "硬件")
    assert site_kb.follow(note.id, "/tags/").kind == "tag"


@pytest.mark.slow
async def test_following_a_tag_page_link_in_the_app_lists_that_tags_notes(site_kb) -> None:
    from textual.widgets import Input

    from kb.tui.app import make_app
    from tests.tui.pilot import open_note, result_titles

    app = make_app(site_kb, watch=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "索引")
        await pilot.press("ctrl+l", "enter")  # the first link: /tags/gpu-性能/
        await settle(app, pilot)
        assert app.screen.id == "search"
        assert app.screen.tag == "GPU 性能"
        assert result_titles(app) == ["GPU 笔记"]
        await pilot.press("escape")  # the tag filter off
        await open_note(app, pilot, "索引")
        await pilot.press("ctrl+l", "down", "enter")  # /categories/硬件/
        await settle(app, pilot)
        assert app.screen.id == "search"
        assert app.screen.query_one("#query", Input).value == 'category:"硬件"'
        assert result_titles(app) == ["GPU 笔记"]


def test_kb_links_says_a_tag_page_link_lists_that_tags_notes(site_kb) -> None:
    output = run_cli(site_kb, "links", "索引").output
    assert "/tags/gpu-性能/  :4  (the notes with this tag)" in output
    assert "/categories/硬件/  :4  (the notes with this category)" in output
    assert "(unresolved)" not in output


def test_an_image_whose_url_is_built_with_liquid_is_an_image() -> None:
    from kb.parse.markdown import parse_markdown

    parts = parse_markdown("![图1]({{ site.url }}{{ site.baseurl }}/assets/a.png){: .center}\n")
    assert [(link.kind, link.target, link.text) for link in parts.links] == [
        ("image", "/assets/a.png", "图1")
    ]
