"""Each static-site generator's URL rules, as pure functions: a page's path and front
matter in, the URLs the generator serves it at out (Hugo, Jekyll, a docs folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.parse.note import parse_note
from kb.sites import site_urls, urlize
from kb.sites.common import Site
from kb.sites.jekyll import JEKYLL_STYLES


@pytest.mark.parametrize(
    ("name", "urlized"),
    [
        ("后缀自动机（SAM）学习笔记", "后缀自动机SAM学习笔记"),
        ("莫队、带修莫队、树上莫队详解", "莫队带修莫队树上莫队详解"),
        ("UER-8-游记-——-通信题：打雪仗", "UER-8-游记-通信题打雪仗"),
        ("2019，以及毕业之前", "2019以及毕业之前"),
        ("Hello  World", "Hello-World"),
        ("C++ 与 a_b.c", "C++-与-a_b.c"),
    ],
)
def test_hugo_urlize(name: str, urlized: str) -> None:
    assert urlize(name) == urlized


def _urls(site: Site, rel: str, text: str) -> list[str]:
    return site_urls(site, site.content / rel, parse_note(rel, text))


HUGO = Site(
    "hugo",
    Path("/site"),
    Path("/site/content"),
    permalinks={"notes": "/notes/:year/:month/:slug/"},
)


@pytest.mark.parametrize(
    ("rel", "text", "urls"),
    [
        ("post/后缀自动机（SAM）学习笔记.md", "# t\n", ["/post/后缀自动机sam学习笔记/"]),
        ("post/NOIp2018提高组游记.md", "# t\n", ["/post/noip2018提高组游记/"]),
        ("post/a.md", '+++\nslug = "My Slug"\n+++\n', ["/post/my-slug/"]),
        ("post/a.md", "---\nurl: /Special/page/\n---\n", ["/special/page/"]),
        ("about/index.md", "# About\n", ["/about/"]),
        ("post/_index.md", "# Posts\n", ["/post/"]),
        ("post/bundle/index.md", "---\nslug: leaf\n---\n", ["/post/leaf/"]),
        (
            "notes/x.md",
            "---\ntitle: Hello World\ndate: 2024-05-18\n---\n",
            ["/notes/2024/05/hello-world/"],
        ),
        ("_index.md", "# Home\n", []),
    ],
)
def test_hugo_urls(rel: str, text: str, urls: list[str]) -> None:
    assert _urls(HUGO, rel, text) == urls


def _jekyll(permalink: str, collections: dict[str, str] | None = None) -> Site:
    """A Jekyll site with this global permalink and collections (name -> permalink)."""
    permalinks = {"": JEKYLL_STYLES.get(permalink, permalink), **(collections or {})}
    return Site(
        "jekyll",
        Path("/site"),
        Path("/site"),
        permalinks=permalinks,
        collections=frozenset(collections or ()),
        lower_case=False,
    )


POST = "_posts/2024-05-08-first-post.md"
POST_TEXT = "---\ncategories: [Tech, AI]\n---\n"


@pytest.mark.parametrize(
    ("permalink", "url"),
    [
        ("date", "/tech/ai/2024/05/08/first-post.html"),
        ("pretty", "/tech/ai/2024/05/08/first-post/"),
        ("ordinal", "/tech/ai/2024/129/first-post.html"),
        ("weekdate", "/tech/ai/2024/W19/Wed/first-post.html"),
        ("none", "/tech/ai/first-post.html"),
        ("/:year/:i_month/:i_day/:short_year/:title/", "/2024/5/8/24/first-post/"),
        ("/:slugified_categories/:name:output_ext", "/Tech/AI/first-post.html"),
        ("/blog/:collection/:basename/", "/blog/posts/2024-05-08-first-post/"),
        (
            "/:long_month/:short_month/:long_day/:w_year/:week/:w_day/",
            "/May/May/Wednesday/2024/19/3/",
        ),
    ],
)
def test_jekyll_permalink_styles_and_placeholders(permalink: str, url: str) -> None:
    assert _urls(_jekyll(permalink), POST, POST_TEXT) == [url]


@pytest.mark.parametrize(
    ("rel", "text", "urls"),
    [
        ("_posts/2018-8-20-release-note.md", "# r\n", ["/2018/08/20/release-note/"]),  # 1-digit
        (
            "_posts/cn/2017-09-16-saga.md",
            "---\npermalink: /cn/docs/saga_2/   \n---\n",
            ["/cn/docs/saga_2/"],
        ),
        ("_posts/2017-09-16-saga.md", "---\nslug: other\n---\n", ["/2017/09/16/other/"]),
        ("_posts/2017-09-16-saga.md", "---\ndate: 2018-01-02\n---\n", ["/2018/01/02/saga/"]),
        ("_posts/no-date.md", "# x\n", []),  # Jekyll skips it
        ("_docs/guide/setup.md", "# s\n", ["/docs/guide/setup/"]),
        ("_hidden/page.md", "# h\n", []),  # a collection without output: true
        ("_hidden/page.md", "---\npermalink: /shown/\n---\n", ["/shown/"]),
        ("about.md", "# About\n", ["/about.html"]),
        ("about.md", "---\npermalink: /about-me/\n---\n", ["/about-me/"]),
    ],
)
def test_jekyll_urls(rel: str, text: str, urls: list[str]) -> None:
    site = _jekyll("pretty", {"docs": "/:collection/:path/"})
    assert _urls(site, rel, text) == urls


@pytest.mark.parametrize(
    ("rel", "text", "urls"),
    [
        ("guide/intro.md", "# i\n", ["/guide/intro/"]),
        ("guide/README.md", "# g\n", ["/guide/"]),
        ("README.md", "# home\n", ["/"]),
        ("guide/x.md", "---\nslug: /custom\n---\n", ["/custom/"]),  # Docusaurus slugs
        ("guide/x.md", "---\nslug: y\n---\n", ["/guide/y/"]),
    ],
)
def test_docs_urls(rel: str, text: str, urls: list[str]) -> None:
    site = Site("docs", Path("/repo"), Path("/repo/docs"))
    assert _urls(site, rel, text) == urls
