"""Cross-links on the bundled notes and on small folders made for each case."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.errors import UsageError
from kb.knowledge_base import KnowledgeBase
from kb.names.resolve import LinkIndex, LinkToResolve, NoteName
from tests.conftest import SAMPLE_NOTES, SHARED_CORPORA


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    """A copy of notes/ (tests here add, rename and edit files)."""
    home = tmp_path_factory.mktemp("links")
    shutil.copytree(SAMPLE_NOTES, home / "notes")
    (home / "kb.yaml").write_text(
        "roots: [notes]\nsite_url: https://blog.example.com\n"
        "mention_terms: {Redis: engineering/redis-study.md}\n",
        encoding="utf-8",
    )
    kb = KnowledgeBase.open(home)
    kb.ingest()
    return kb


def resolved(kb: KnowledgeBase, source: str, target: str) -> list[tuple[str | None, str]]:
    """(target note path, status) of each link in ``source`` written as ``target``."""
    note = kb._store.notes.by_path(source)
    assert note is not None, source
    return [
        (row.target_path, row.status)
        for row in kb._store.links.outgoing(note.id)
        if row.target == target
    ]


LECTURE_3 = "cs336/lecture-03-gpus.md"


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        # Markdown links, relative to the linking file, with the README's fallbacks
        ("posts/2024-03-10-flops-vs-latency.md", "../cs336/lecture-03-gpus.md", LECTURE_3),
        ("cs336/lecture-06-moe.md", "lecture-05-parallelism", "cs336/lecture-05-parallelism.md"),
        (
            "cs336/lecture-05-parallelism.md",
            "../posts/fsdp1-source-reading/",
            "posts/fsdp1-source-reading/index.md",
        ),
        ("life/2024-review.md", "../cs336/", "cs336/_index.md"),
        (
            "engineering/overview.md",
            "bazel-onnxruntime/",
            "engineering/bazel-onnxruntime/README.md",
        ),
        (
            "engineering/compute-platform-time-window.md",
            "redis-study.html",
            "engineering/redis-study.md",
        ),
        ("posts/moe-serving.md", "/cs336/lecture-06-moe.md", "cs336/lecture-06-moe.md"),
        (
            "posts/dtype-memory.md",
            "../engineering/%E6%98%BE%E5%AD%98%20%E4%BC%B0%E7%AE%97.md",
            "engineering/显存 估算.md",
        ),
        ("engineering/overview.md", "显存%20估算.md", "engineering/显存 估算.md"),
        # wikilinks by file stem, title, alias; with label, heading; embeds
        ("cs336/lecture-04-kernels-triton.md", "lecture-03-gpus", LECTURE_3),
        (
            "engineering/compute-platform-time-window.md",
            "Redis 学习笔记",
            "engineering/redis-study.md",
        ),
        ("engineering/overview.md", "redis-notes", "engineering/redis-study.md"),
        ("posts/triton-fused-softmax.md", "softmax-numerics", "engineering/softmax-numerics.md"),
        # Hugo ref and relref, also inside a Markdown link
        (
            "cs336/assignments/a1-transformer-flops.md",
            "cs336/lecture-02-architectures.md",
            "cs336/lecture-02-architectures.md",
        ),
        ("engineering/显存 估算.md", "posts/dtype-memory.md", "posts/dtype-memory.md"),
        ("cs336/lecture-06-moe.md", "posts/moe-serving.md", "posts/moe-serving.md"),
        # reference-style
        (
            "cs336/lecture-05-parallelism.md",
            "../posts/fsdp1-source-reading/index.md",
            "posts/fsdp1-source-reading/index.md",
        ),
        # the published site (site_url, slug permalink)
        (
            "life/2024-review.md",
            "https://blog.example.com/posts/flops-vs-latency/",
            "posts/2024-03-10-flops-vs-latency.md",
        ),
        # typed front-matter links, by path and by title
        ("posts/2024-03-10-flops-vs-latency.md", "cs336/lecture-03-gpus.md", LECTURE_3),
        (
            "cs336/assignments/a1-bpe-tokenizer.md",
            "CS336 Lecture 1：课程概览与 Tokenization",
            "cs336/lecture-01-overview-tokenization.md",
        ),
    ],
)
def test_every_link_form_resolves(sample, source: str, target: str, expected: str) -> None:
    found = resolved(sample, source, target)
    assert found, f"no link {target!r} in {source}"
    assert {path for path, _ in found} == {expected}
    assert {status for _, status in found} <= {"resolved", "missing-heading"}


def test_anchors_are_checked_against_heading_slugs(sample) -> None:
    project = "engineering/compute-platform-time-window.md"
    note = sample._store.notes.by_path(project)
    anchors = {
        row.anchor: row.status for row in sample._store.links.outgoing(note.id) if row.anchor
    }
    assert anchors["Redis-ZSET-实现"] == "resolved"  # case-insensitive, Chinese kept
    roofline = sample._store.notes.by_path("posts/2024-03-10-flops-vs-latency.md")
    statuses = {
        row.anchor: row.status for row in sample._store.links.outgoing(roofline.id) if row.anchor
    }
    assert statuses["%E6%98%BE%E5%AD%98%E5%B8%A6%E5%AE%BD"] == "resolved"  # URL-encoded
    assert statuses["Roofline"] == "resolved"
    assert statuses["tensor-core-细节"] == "missing-heading"


def test_check_reports_broken_links_with_lines(sample) -> None:
    problems = {(p.path, p.line, p.kind) for p in sample.links.check()}
    assert problems == {
        ("posts/speculative-decoding.md", 87, "broken-link"),
        ("life/2024-review.md", 30, "broken-link"),
        ("posts/2024-03-10-flops-vs-latency.md", 139, "missing-heading"),
        ("life/2024-review.md", 12, "ambiguous-link"),
        # images the bundled notes show but the repository does not hold
        ("posts/2024-03-10-flops-vs-latency.md", 20, "missing-file"),
        ("posts/fsdp1-source-reading/index.md", 19, "missing-file"),
    }


def test_ambiguous_wikilink_prefers_the_documented_rule(sample) -> None:
    # [[overview]] in life/: neither candidate shares its folder, both are as deep: by name.
    assert resolved(sample, "life/2024-review.md", "overview") == [
        ("cs336/overview.md", "ambiguous")
    ]


def test_a_missing_target_resolves_once_it_exists(sample) -> None:
    notes = sample.config.roots[0].path
    (notes / "cs336/lecture-99-missing.md").write_text("# 补上了\n", encoding="utf-8")
    (notes / "life/later.md").write_text("---\ntitle: 以后再写的笔记\n---\n", encoding="utf-8")
    sample.ingest()
    assert resolved(sample, "posts/speculative-decoding.md", "../cs336/lecture-99-missing.md") == [
        ("cs336/lecture-99-missing.md", "resolved")
    ]
    assert resolved(sample, "life/2024-review.md", "以后再写的笔记") == [
        ("life/later.md", "resolved")
    ]
    (notes / "life/later.md").unlink()
    (notes / "cs336/lecture-99-missing.md").unlink()
    sample.ingest()
    assert resolved(sample, "life/2024-review.md", "以后再写的笔记") == [(None, "broken")]
    assert resolved(sample, "posts/speculative-decoding.md", "../cs336/lecture-99-missing.md") == [
        (None, "broken")
    ]


def test_a_rename_keeps_the_note_and_its_name_based_backlinks(sample) -> None:
    notes = sample.config.roots[0].path
    before = sample.find_note("Redis 学习笔记")
    (notes / "engineering/redis-study.md").rename(notes / "engineering/redis.md")
    stats = sample.ingest()
    assert stats.moved == 1
    after = sample.find_note("Redis 学习笔记")
    assert (after.id, after.path) == (before.id, "engineering/redis.md")
    backlinks = {
        (b.path, place.kind, place.rel)
        for b in sample.links.connections(after).backlinks
        for place in b.places
    }
    assert ("engineering/compute-platform-time-window.md", "front-matter", "uses") in backlinks
    assert ("engineering/compute-platform-time-window.md", "wikilink", "") in backlinks
    # a link written as a path to the old name is broken now, and kb says so
    assert resolved(sample, "engineering/compute-platform-time-window.md", "redis-study.html") == [
        (None, "broken")
    ]
    (notes / "engineering/redis.md").rename(notes / "engineering/redis-study.md")
    sample.ingest()
    assert resolved(sample, "engineering/compute-platform-time-window.md", "redis-study.html") == [
        ("engineering/redis-study.md", "resolved")
    ]


def test_lectures_and_the_posts_built_on_them_are_related(sample) -> None:
    post = sample.find_note("posts/2024-03-10-flops-vs-latency.md")
    related = {r.path: r.reason for r in sample.links.related(post.id)}
    assert "links both ways (lecture)" in related[LECTURE_3]
    assert "series: CS336" in related[LECTURE_3]
    lecture = sample.find_note(LECTURE_3)
    assert post.path in {r.path for r in sample.links.related(lecture.id)}


def test_the_redis_notes_are_related_both_ways(sample) -> None:
    study = sample.find_note("Redis 学习笔记")
    project = sample.find_note("engineering/compute-platform-time-window.md")
    from_study = {r.path: r.reason for r in sample.links.related(study.id)}
    assert from_study[project.path].startswith("links here (uses)")
    assert "tags: redis" in from_study[project.path]
    from_project = {r.path: r.reason for r in sample.links.related(project.id)}
    assert from_project[study.path].startswith("links to it (uses)")


def test_mentions_work_in_chinese_text(sample) -> None:
    post = sample.find_note("posts/2024-03-10-flops-vs-latency.md")
    mentions = {m.path: m for m in sample.links.mentions(post.id)}
    softmax = mentions["engineering/softmax-numerics.md"]
    assert softmax.name == "Roofline 模型"  # a name alias, inside a Chinese sentence
    assert softmax.line == 71
    assert "Roofline 模型" in softmax.context
    # notes that already link to the post are backlinks, not mentions
    assert "life/2024-review.md" not in mentions


def test_configured_mention_terms(sample) -> None:
    study = sample.find_note("Redis 学习笔记")
    mentioned_by = {m.path for m in sample.links.mentions(study.id)}
    assert "engineering/compute-platform-time-window.md" not in mentioned_by  # it links
    assert mentioned_by, "Redis is named in notes that do not link to the study note"
    assert all(m.name == "Redis" for m in sample.links.mentions(study.id))


def test_short_titles_are_not_mentions() -> None:
    from kb.links.mentions import mention_names, mention_pattern

    note = NoteName(1, "notes", "a.md", "GPU", aliases=("锁", "显存带宽", "Redis 学习笔记"))
    assert mention_names(note, []) == ["显存带宽", "Redis 学习笔记"]
    assert mention_pattern("Redis").search("Redisson") is None
    assert mention_pattern("Redis").search("用Redis做") is not None
    assert mention_pattern("Redis 学习笔记").search("见redis  学习笔记。") is not None


def test_find_note_by_path_title_alias_and_ambiguity(sample, monkeypatch) -> None:
    assert sample.find_note("engineering/redis-study.md").title == "Redis 学习笔记"
    assert sample.find_note("engineering/redis-study").title == "Redis 学习笔记"
    assert sample.find_note("redis 学习笔记").path == "engineering/redis-study.md"
    assert sample.find_note("Redis 数据结构").path == "engineering/redis-study.md"
    monkeypatch.chdir(sample.config.roots[0].path / "engineering")
    assert sample.find_note("redis-study.md").path == "engineering/redis-study.md"
    with pytest.raises(UsageError, match=r"names 2 notes: cs336/overview\.md"):
        sample.find_note("overview")
    with pytest.raises(UsageError, match="no note matches"):
        sample.find_note("no such note at all")


def test_cli_links_json(sample) -> None:
    result = CliRunner().invoke(
        cli, ["--kb", str(sample.home), "links", "--json", "Redis 学习笔记"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) >= {"outgoing", "backlinks", "mentions", "related"}
    for entry in (*data["backlinks"], *data["mentions"], *data["related"]):
        assert {"path", "title"} <= set(entry)
    assert all("reason" in entry for entry in data["related"])
    lecture = json.loads(
        CliRunner()
        .invoke(cli, ["--kb", str(sample.home), "links", "--json", "posts/speculative-decoding.md"])
        .stdout
    )
    broken = [e for e in lecture["outgoing"] if not e["resolved"]]
    assert broken[0]["target"] == "../cs336/lecture-99-missing.md"
    ambiguous = CliRunner().invoke(cli, ["--kb", str(sample.home), "links", "overview"])
    assert ambiguous.exit_code == 2
    assert "cs336/overview.md" in ambiguous.stderr
    assert "engineering/overview.md" in ambiguous.stderr


def test_cli_check_json_and_exit_code(sample) -> None:
    result = CliRunner().invoke(cli, ["--kb", str(sample.home), "check", "--json"])
    assert result.exit_code == 1
    problems = json.loads(result.stdout)
    assert {"path", "line", "kind", "message"} <= set(problems[0])
    assert {p["kind"] for p in problems} == {
        "broken-link",
        "missing-file",
        "missing-heading",
        "ambiguous-link",
    }


@pytest.mark.parametrize("fmt", ["dot", "json", "mermaid"])
def test_cli_graph_formats(sample, fmt: str) -> None:
    result = CliRunner().invoke(cli, ["--kb", str(sample.home), "graph", "--format", fmt])
    assert result.exit_code == 0
    if fmt == "json":
        graph = json.loads(result.stdout)
        paths = {n["id"]: n["path"] for n in graph["nodes"]}
        edges = {(paths[e["source"]], paths[e["target"]], e["kind"]) for e in graph["edges"]}
        assert ("posts/2024-03-10-flops-vs-latency.md", LECTURE_3, "lecture") in edges
    elif fmt == "dot":
        assert result.stdout.startswith("digraph kb {")
        assert "->" in result.stdout
    else:
        assert result.stdout.startswith("graph LR")
        assert "-->|uses|" in result.stdout


# -- the resolver alone, table-driven -------------------------------------------------------

NAMES = [
    NoteName(1, "n", "a/one.md", "One", aliases=("First",)),
    NoteName(2, "n", "a/two/index.md", "two"),
    NoteName(3, "n", "b/one.md", "Another one"),
    NoteName(4, "n", "README.md", "Home"),
    NoteName(5, "n", "posts/2024-01-01-x.md", "X", slug="x-post", url_aliases=("/old/x.html",)),
]


@pytest.mark.parametrize(
    ("kind", "target", "source", "expected"),
    [
        ("markdown", "one.md", 1, (1, "resolved")),
        ("markdown", "one", 1, (1, "resolved")),
        ("markdown", "two/", 1, (2, "resolved")),
        ("markdown", "two.html", 1, (None, "broken")),
        ("markdown", "../b/one.md", 1, (3, "resolved")),
        ("markdown", "one.md", 3, (3, "resolved")),  # relative: b/one.md, not a/one.md
        ("markdown", "../../one.md", 1, (None, "broken")),  # outside the root
        ("markdown", "/", 1, (4, "resolved")),
        ("markdown", "diagram.png", 1, (None, "attachment")),
        ("markdown", "./LICENSE", 4, (None, "attachment")),
        ("markdown", "/posts/x-post/", 1, (5, "resolved")),  # a site path by slug
        ("wikilink", "first", 3, (1, "resolved")),
        ("wikilink", "ANOTHER ONE", 1, (3, "resolved")),
        ("wikilink", "one", 3, (3, "ambiguous")),  # two stems: the same folder wins
        ("wikilink", "one", 4, (1, "ambiguous")),  # else the shallower, then by name
        ("wikilink", "b/one", 1, (3, "resolved")),
        ("wikilink", "one.md", 1, (1, "ambiguous")),
        ("hugo-ref", "a/one.md", 3, (1, "resolved")),  # from the root when not relative
        ("url", "https://blog.example.com/old/x.html", 1, (5, "resolved")),
        ("url", "https://blog.example.com/posts/x-post", 1, (5, "resolved")),
        ("url", "https://elsewhere.org/posts/x-post", 1, (None, "external")),
        ("image", "a.png", 1, (None, "attachment")),
    ],
)
def test_resolver(kind: str, target: str, source: int, expected: tuple) -> None:
    index = LinkIndex.build(NAMES, "https://blog.example.com")
    found = index.resolve(LinkToResolve(1, source, target, "", kind))
    assert (found.target_id, found.status) == expected


@pytest.mark.skipif(not SHARED_CORPORA.is_dir(), reason="no ../shared/corpora")
@pytest.mark.parametrize(("corpus", "broken"), [("advanced-java-zh", 0), ("foam-docs", 31)])
def test_check_on_real_corpora(tmp_path: Path, corpus: str, broken: int) -> None:
    (tmp_path / "kb.yaml").write_text(
        f"roots: [{json.dumps(str(SHARED_CORPORA / corpus))}]\n", encoding="utf-8"
    )
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    problems = [p for p in kb.links.check() if p.kind == "broken-link"]
    assert len(problems) == broken
    stems = {Path(row.path).stem.casefold() for row in kb._store.notes.listing()}
    for problem in problems:  # each really names no note
        target = problem.message.split(" (")[0]
        assert Path(target).stem.casefold() not in stems or target.endswith(".md")


def test_site_urls_ignore_case(make_kb) -> None:
    kb = make_kb(
        {
            "posts/MyPost.md": "# Mine\n",
            "src.md": "[a](https://blog.example.com/posts/MyPost/) "
            "[b](https://blog.example.com/posts/mypost/) [c](/posts/MyPost/)\n",
        },
        config="roots: [notes]\nsite_url: https://blog.example.com\n",
    )
    kb.ingest()
    assert {link.path for link in kb.links.connections(kb.find_note("src.md")).outgoing} == {
        "posts/MyPost.md"
    }
