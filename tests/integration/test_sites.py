"""Static-site generators read as they are: kb init's detection and links between the
pages of a Hugo blog, a Jekyll blog and a docs folder (each generator's URL rules, pure
functions, are tests/unit/test_site_urls.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.knowledge_base import KnowledgeBase
from kb.sites import read_site
from kb.sites.layout import detect_layout
from tests.conftest import SHARED_CORPORA, write_notes

# -- fixtures: a Hugo blog, a Jekyll blog, a docs folder ------------------------------

HUGO_BLOG = {
    "config.toml": 'baseURL = "https://blog.example.org/"\ntitle = "x"\n',
    "static/favicon.ico": "icon",
    "content/about/index.md": "# 关于\n\n[NOIP](/post/noip2018提高组游记/)\n",
    "content/post/后缀自动机（SAM）学习笔记.md": (
        '+++\ntitle = "SAM"\naliases = ["/old/sam-notes"]\n+++\n\n# 确定有限状态自动机（DFA）\n'
    ),
    "content/post/NOIp2018提高组游记.md": '+++\ntitle = "游记"\n+++\n正文\n',
    "content/post/links.md": (
        '+++\ntitle = "links"\n+++\n'
        "[by url](/post/后缀自动机sam学习笔记/#确定有限状态自动机dfa)\n\n"
        "[encoded](/post/%E5%90%8E%E7%BC%80%E8%87%AA%E5%8A%A8%E6%9C%BAsam%E5%AD%A6%E4%B9%A0%E7%AC%94%E8%AE%B0/)\n\n"
        "[by alias](/old/sam-notes)\n\n"
        "[absolute](https://blog.example.org/post/noip2018提高组游记/)\n\n"
        "[icon](/favicon.ico) [random picture](/randpic/generator/?width=512)\n\n"
        "[moved away](/post/no-such-post/)\n"
    ),
}
JEKYLL_BLOG = {
    "_config.yml": (
        "url                      : https://me.github.io\n"
        "baseurl                  : /blog\n"
        "name: *name\n"  # an alias without its anchor: PyYAML refuses the file
        "permalink: /:categories/:title/\n"
    ),
    "kb.yaml": "roots: [.]\nsite_hosts: [old.example.com]\n",
    "_posts/2024-05-18-saga-background.md": "---\ntitle: Saga 背景\n---\n正文\n",
    "_posts/cn/2024-05-20-saga-design.md": (
        "---\ntitle: Saga 设计\npermalink: /cn/docs/saga_2/   \n---\n"
        "[上文]({{ site.baseurl }}{% link _posts/2024-05-18-saga-background.md %})\n\n"
        "[again]({% post_url 2024-05-18-saga-background %})\n"
    ),
    "_posts/2024-05-21-links.md": (
        "---\ntitle: links\ncategories: [news]\n---\n"
        "[design]({{ site.url }}{{ site.baseurl }}/cn/docs/saga_2/)\n\n"
        "[old host](http://old.example.com/blog/saga-background/)\n\n"
        "[own host](https://me.github.io/blog/news/links/)\n\n"
        "[gone](/blog/cn/docs/removed-page/)\n"
    ),
}
DOCS_SITE = {
    "package.json": "{}\n",
    "docs/.vuepress/config.js": "module.exports = {}\n",
    "docs/README.md": "# Home\n\n[Intro](/guide/intro.md) [Setup](/guide/setup/)\n",
    "docs/guide/intro.md": "# Intro\n\n[home](/) [setup](./setup.md#install)\n",
    "docs/guide/setup.md": "# Setup\n\n## Install\n\n[missing](/guide/missing/)\n",
}


def _site(tmp_path: Path, files: dict[str, str]) -> Path:
    write_notes(tmp_path, dict(files))
    return tmp_path


def _init_ingest_check(home: Path) -> tuple[KnowledgeBase, list[tuple[str, str]]]:
    result = CliRunner().invoke(cli, ["init", str(home)])
    assert result.exit_code == 0, result.output
    kb = KnowledgeBase.open(home)
    kb.ingest()
    return kb, [(p.path, p.kind) for p in kb.links.check() if p.kind != "duplicate-title"]


def _statuses(kb: KnowledgeBase, path: str) -> dict[str, str]:
    note = kb._store.notes.by_path(path)
    assert note is not None
    return {row.text: row.status for row in kb._store.links.outgoing(note.id)}


def test_hugo_blog_links_resolve_by_hugo_url_and_alias(tmp_path: Path) -> None:
    home = _site(tmp_path, HUGO_BLOG)
    kb, problems = _init_ingest_check(home)
    assert kb.config.roots[0].path == home / "content"
    assert not (home / "notes").exists()
    statuses = _statuses(kb, "post/links.md")
    assert statuses == {
        "by url": "resolved",  # the anchor is Hugo's heading id
        "encoded": "resolved",
        "by alias": "resolved",
        "absolute": "resolved",
        "icon": "attachment",  # static/favicon.ico
        "random picture": "external",  # a page of the site that is not a note
        "moved away": "broken",
    }
    assert _statuses(kb, "about/index.md") == {"NOIP": "resolved"}
    assert problems == [("post/links.md", "broken-link")]


def test_jekyll_blog_links_resolve_by_permalink(tmp_path: Path) -> None:
    home = _site(tmp_path, JEKYLL_BLOG)
    kb, problems = _init_ingest_check(home)  # kb.yaml is kept: it names the old host
    assert _statuses(kb, "_posts/cn/2024-05-20-saga-design.md") == {
        "上文": "resolved",
        "again": "resolved",
    }
    assert _statuses(kb, "_posts/2024-05-21-links.md") == {
        "design": "resolved",
        "old host": "resolved",
        "own host": "resolved",
        "gone": "broken",
    }
    assert problems == [("_posts/2024-05-21-links.md", "broken-link")]


def test_docs_folder_urls_are_paths_under_docs(tmp_path: Path) -> None:
    home = _site(tmp_path, DOCS_SITE)
    kb, problems = _init_ingest_check(home)
    assert kb.config.roots[0].path == home / "docs"
    assert problems == [("guide/setup.md", "broken-link")]
    assert set(_statuses(kb, "README.md").values()) == {"resolved"}
    assert set(_statuses(kb, "guide/intro.md").values()) == {"resolved"}


def test_docs_folder_with_the_root_at_the_repository(tmp_path: Path) -> None:
    # Site paths lack docs/: they still reach the pages under docs/.
    home = _site(tmp_path, {**DOCS_SITE, "kb.yaml": "roots: [.]\nsite_url: https://d.example\n"})
    kb = KnowledgeBase.open(home)
    kb.ingest()
    assert set(_statuses(kb, "docs/README.md").values()) == {"resolved"}
    assert [(p.path, p.kind) for p in kb.links.check()] == [("docs/guide/setup.md", "broken-link")]


@pytest.mark.parametrize(
    ("files", "kind", "roots"),
    [
        ({"hugo.toml": "", "content/a.md": ""}, "hugo", ("content",)),
        ({"config.yaml": "", "content/a.md": ""}, "hugo", ("content",)),
        ({"_config.yml": "", "_posts/2024-01-01-a.md": ""}, "jekyll", (".",)),
        ({"_posts/2024-01-01-a.md": "", "about.md": ""}, "jekyll", (".",)),  # no _config.yml
        ({"archetypes/default.md": "", "content/a.md": ""}, "hugo", ("content",)),  # no config
        ({".obsidian/app.json": "{}", "a.md": ""}, "obsidian", (".",)),
        ({"docs/.vuepress/config.js": "", "docs/a.md": ""}, "docs", ("docs",)),
        ({"docusaurus.config.js": "", "docs/a.md": ""}, "docs", ("docs",)),
        ({"mkdocs.yml": "docs_dir: pages\n", "pages/a.md": ""}, "docs", ("pages",)),
        ({"a/b.md": "", "README.md": ""}, "plain", (".",)),
        ({"notes/a.md": "", "other.md": ""}, "notes", ("notes",)),
        ({"image.png": ""}, "empty", ("notes",)),
        ({"config.toml": "", "a.md": ""}, "plain", (".",)),  # no content/: not Hugo
    ],
)
def test_detect_layout(tmp_path: Path, files: dict[str, str], kind: str, roots: tuple) -> None:
    write_notes(tmp_path, dict(files))
    layout = detect_layout(tmp_path)
    assert (layout.kind, layout.roots) == (kind, roots)


def test_init_finds_the_hosts_a_site_was_served_at_from_its_links(tmp_path: Path) -> None:
    """A Jekyll config without url, posts linking each other on two domains (one old) and
    citing another site: the two domains become site_hosts, the cited one does not."""
    posts = {
        f"_posts/2024-05-0{i}-post-{i}.md": f"---\ntitle: P{i}\n---\n正文\n" for i in (1, 2, 3)
    }
    links = "".join(f"[a{i}](https://blog.example.org/post-{i}/) " for i in (1, 2, 3))
    links += "".join(f"[b{i}](http://old.example.net/post-{i}) " for i in (1, 2, 3))
    links += "[cited](https://docs.example.com/post-1/) "
    links += "".join(f"[doc {i}](https://docs.example.com/guide/{i}/) " for i in range(6))
    home = _site(
        tmp_path,
        {
            "_config.yml": "permalink: /:title/\n",
            **posts,
            "_posts/2024-06-01-links.md": f"---\ntitle: links\n---\n{links}\n",
        },
    )
    result = CliRunner().invoke(cli, ["init", str(home)])
    assert "links to blog.example.org, old.example.net are links to it" in result.output
    assert "site_hosts: [blog.example.org, old.example.net]" in (home / "kb.yaml").read_text()
    kb = KnowledgeBase.open(home)
    kb.ingest()
    statuses = _statuses(kb, "_posts/2024-06-01-links.md")
    assert {statuses[f"{host}{i}"] for host in "ab" for i in (1, 2, 3)} == {"resolved"}
    assert statuses["cited"] == "external"


def test_a_jekyll_blog_without_config_is_a_site_whose_own_links_resolve(tmp_path: Path) -> None:
    """No _config.yml (Jekyll does not need one): _posts/ says it is a Jekyll site, its
    posts' URLs follow Jekyll's default permalink style, and the host its posts link to
    each other on is inferred from those links, so they are no external links."""
    posts = {
        f"_posts/2024-05-0{i}-post-{i}.md": f"---\ntitle: P{i}\n---\n正文\n" for i in (1, 2, 3)
    }
    links = "".join(
        f"[a{i}](https://blog.example.org/2024/05/0{i}/post-{i}.html) " for i in (1, 2, 3)
    )
    home = _site(tmp_path, {**posts, "_posts/2024-06-01-links.md": f"# links\n\n{links}\n"})
    result = CliRunner().invoke(cli, ["init", str(home)])
    assert "found a Jekyll site (_posts/): notes in ." in result.output
    assert "site_hosts: [blog.example.org]" in (home / "kb.yaml").read_text()
    kb = KnowledgeBase.open(home)
    kb.ingest()
    assert set(_statuses(kb, "_posts/2024-06-01-links.md").values()) == {"resolved"}


def test_init_says_what_it_chose_and_never_makes_an_empty_notes_folder(tmp_path: Path) -> None:
    write_notes(tmp_path, {"blog/a.md": "# a\n", "b.md": "# b\n"})
    result = CliRunner().invoke(cli, ["init", str(tmp_path)])
    assert "found a folder of Markdown (2 Markdown files): notes in ." in result.output
    assert not (tmp_path / "notes").exists()
    empty = tmp_path.parent / "fresh"
    result = CliRunner().invoke(cli, ["init", str(empty)])
    assert "new notes go in notes/" in result.output
    assert (empty / "notes").is_dir()


def test_init_leaves_jekyll_build_output_and_gems_out(tmp_path: Path) -> None:
    write_notes(
        tmp_path,
        {
            "_config.yml": "",
            "_posts/2024-01-01-a.md": "# a\n",
            "_site/a.md": "# built\n",
            "vendor/bundle/gems/x/README.md": "# gem\n",
        },
    )
    CliRunner().invoke(cli, ["init", str(tmp_path)])
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    assert [row.path for row in kb._store.notes.listing()] == ["_posts/2024-01-01-a.md"]


def test_ingest_that_finds_no_notes_says_where_markdown_is(tmp_path: Path) -> None:
    write_notes(tmp_path, {"content/post/a.md": "# a\n", "kb.yaml": "roots: [notes]\n"})
    (tmp_path / "notes").mkdir()
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "ingest"])
    assert result.exit_code == 0
    assert "no notes in notes/, but Markdown files are elsewhere" in result.stderr
    assert "content/ (1)" in result.stderr


def test_a_jekyll_config_that_yaml_refuses_is_still_read(tmp_path: Path) -> None:
    write_notes(tmp_path, {"_config.yml": JEKYLL_BLOG["_config.yml"] + "bad: [\n"})
    site = read_site(tmp_path)
    assert site is not None
    assert (site.base_path, site.hosts) == ("/blog", ("me.github.io",))
    assert site.permalinks[""] == "/:categories/:title/"


# -- the real sites --------------------------------------------------------------------


def _copy(corpus: str, tmp_path: Path) -> Path:
    source = SHARED_CORPORA / corpus
    if not source.is_dir():
        pytest.skip(f"no ../shared/corpora/{corpus}")
    home = tmp_path / corpus
    shutil.copytree(source, home)
    return home


@pytest.mark.slow
def test_hugo_site_zh_resolves_all_50_note_links_after_kb_init_alone(tmp_path: Path) -> None:
    home = _copy("hugo-site-zh", tmp_path)
    kb, problems = _init_ingest_check(home)
    rows = [
        row
        for note in kb._store.notes.listing()
        for row in kb._store.links.outgoing(note.id)
        if row.kind == "markdown" and row.target.startswith("/")
    ]
    assert sum(row.status == "resolved" for row in rows) == 50
    assert {row.status for row in rows} == {"resolved", "external"}
    assert [p for p in problems if p[1] != "parse-warning"] == []


@pytest.mark.slow
def test_jekyll_blog_zh_resolves_the_site_links_that_match_a_permalink(tmp_path: Path) -> None:
    home = _copy("jekyll-blog-zh", tmp_path)
    kb, _ = _init_ingest_check(home)  # kb init alone: it finds the hosts in the links
    hosts = ["servicecomb.apache.org", "servicecomb.incubator.apache.org", "servicecomb.io"]
    assert kb.config.site_hosts == tuple(hosts)
    resolved = 0
    for note in kb._store.notes.listing():
        for row in kb._store.links.outgoing(note.id):
            on_site = row.kind in ("markdown", "liquid-link", "liquid-post") and (
                row.kind != "markdown" or row.target.startswith("/")
            )
            on_site = on_site or (row.kind == "url" and any(h in row.target for h in hosts))
            if on_site and "/assets/" not in row.target:
                resolved += row.status == "resolved"
    assert resolved >= 213
    wikilinks = [p for p in kb.links.check() if "(wikilink)" in p.message]
    assert wikilinks == []  # [[asc]](url) and [[1]] citations are not wikilinks
