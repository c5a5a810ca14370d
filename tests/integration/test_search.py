"""Search as a user sees it, run against every engine kb has."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.engines.whoosh import available as whoosh_available
from kb.knowledge_base import KnowledgeBase
from kb.query.syntax import QuerySyntaxError
from tests.conftest import engine_params, write_notes

ENGINES = [
    "fts5",
    pytest.param(
        "whoosh",
        marks=pytest.mark.skipif(not whoosh_available(), reason="whoosh-reloaded is not installed"),
    ),
]

NOTES = {
    "redis-study.md": (
        "---\ntitle: Redis 学习笔记\ntags: [redis, 数据结构]\ndate: 2023-05-02\n"
        "categories: [Backend]\n---\n\n# Redis 学习笔记\n\nSDS 和跳表是 Redis 的核心数据结构。\n"
    ),
    "project.md": (
        "---\ntitle: 计算平台的全局时间窗口\ntags: [project]\ndate: 2024-03-15\n---\n\n"
        "用 Redis 的 ZSET 实现全局时间窗口，参考 Redis 学习笔记。\n"
    ),
    "gpu.md": (
        "---\ntitle: GPU 笔记\ntags: [gpu/perf]\ndate: 2024-03-01\ncategories: [GPU]\n---\n\n"
        "显存带宽是GPU的瓶颈。FlashAttention 用 tiling；torch.distributed.fsdp 做分片，"
        "flash_attn 是它的包名，FP16 在 H100 上更快。\n\n```cpp\nauto y = std::move(x);\n```\n"
    ),
    "roofline.md": (
        "---\ntitle: Roofline 模型\ntags: [gpu/perf, cs336]\ndate: 2024-06-30\n---\n\n"
        "arithmetic intensity 决定了 memory bound 还是 compute bound。\n"
    ),
    "mentions-roofline.md": (
        "---\ntitle: 性能分析杂记\ndate: 2022-01-01\n---\n\n"
        "roofline roofline roofline: the roofline plot again, roofline everywhere. "
        "intensity of arithmetic work.\n"
    ),
    "cpp.md": (
        "---\ntitle: C++ 值类别\ndate: 2021-07-01\n---\n\n"
        "右值引用与将亡值的关系：std::move 产生将亡值。\n"
    ),
    "apart.md": "---\ntitle: 显示与存储\ndate: 2020-01-01\n---\n\n显示器和存储设备是两回事。\n",
    "lock.md": "---\ntitle: 分布式锁\ndraft: true\n---\n\n树和堆都不是锁。\n",
    "lecture.md": (
        "---\ntitle: Lecture 3 GPUs\ntags: [cs336/lecture]\nseries: [CS336]\n"
        "date: 2024-04-10\n---\n\n## Memory hierarchy\n\nHBM 与 SRAM。\n"
    ),
    "fullwidth.md": "---\ntitle: 全角\n---\n\nＧＰＵ 和 ＦＰ１６ 写成了全角。\n",
}


@pytest.fixture(scope="module", params=ENGINES)
def kb(request, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    """NOTES ingested once per engine for the module's tests that only search."""
    home = tmp_path_factory.mktemp(f"search-{request.param}")
    (home / "kb.yaml").write_text(f"roots: [notes]\nengine: {request.param}\n", encoding="utf-8")
    write_notes(home / "notes", NOTES)
    with KnowledgeBase.open(home) as base:
        base.ingest()
        yield base


@pytest.fixture(params=ENGINES)
def own_kb(request, make_kb) -> KnowledgeBase:
    """NOTES ingested for a test that changes the notes or the index."""
    base = make_kb(NOTES, config=f"roots: [notes]\nengine: {request.param}\n")
    base.ingest()
    return base


def found(kb: KnowledgeBase, query: str, prefix: bool = False) -> set[str]:
    """The notes holding every word of the query (notes holding only some of them follow
    when they are few: see the relaxed-matching tests)."""
    hits = kb.search(query, limit=100, prefix=prefix).hits
    return {hit.path for hit in hits if not hit.missing}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Chinese words inside longer runs, glued to Latin text, in titles and tags
        ("显存", {"gpu.md"}),
        ("带宽", {"gpu.md"}),
        ("瓶颈", {"gpu.md"}),
        ("显存带宽是GPU的瓶颈", {"gpu.md"}),
        ("时间窗口", {"project.md"}),
        ("学习笔记", {"redis-study.md", "project.md"}),
        ("数据结构", {"redis-study.md"}),
        ("将亡值", {"cpp.md"}),  # rjieba cuts 将/亡值 in context; bigrams still find it
        ("右值引用", {"cpp.md"}),
        # single characters
        ("锁", {"lock.md"}),
        ("树", {"lock.md"}),
        ("堆", {"lock.md"}),
        # English words, identifiers and their parts
        ("redis", {"redis-study.md", "project.md"}),
        ("Redis 学习笔记", {"redis-study.md", "project.md"}),
        ("fsdp", {"gpu.md"}),
        ("torch.distributed.fsdp", {"gpu.md"}),
        ("torch.distributed", {"gpu.md"}),
        ("attention", {"gpu.md"}),
        ("FlashAttention", {"gpu.md"}),
        ("flash_attn", {"gpu.md"}),
        ("std::move", {"gpu.md", "cpp.md"}),
        ("FP16", {"gpu.md", "fullwidth.md"}),
        ("h100", {"gpu.md"}),
        # roofline: tag gpu/perf; lecture: "GPUs", an inflection
        ("ＧＰＵ", {"gpu.md", "fullwidth.md", "roofline.md", "lecture.md"}),
        ("HBM", {"lecture.md"}),
        # prefixes
        ("roof*", {"roofline.md", "mentions-roofline.md"}),
        ("Redi*", {"redis-study.md", "project.md"}),
        # phrases, Chinese too
        ('"arithmetic intensity"', {"roofline.md"}),
        ('"学习笔记"', {"redis-study.md", "project.md"}),
        ('"全局时间窗口"', {"project.md"}),
        # boolean operators
        ("redis OR 将亡值", {"redis-study.md", "project.md", "cpp.md"}),
        ("redis -zset", {"redis-study.md"}),
        ("redis NOT 时间窗口", {"redis-study.md"}),
        ("(roofline OR 显存) gpu", {"gpu.md", "roofline.md"}),
    ],
)
def test_recall_and_precision(kb: KnowledgeBase, query: str, expected: set[str]) -> None:
    assert found(kb, query) == expected


def test_two_characters_apart_do_not_match(kb: KnowledgeBase) -> None:
    assert "apart.md" not in found(kb, "显存")
    assert "apart.md" in found(kb, "显示")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("tag:cs336", {"roofline.md", "lecture.md"}),
        ("tag:CS336/Lecture", {"lecture.md"}),
        ("tag:gpu", {"gpu.md", "roofline.md"}),
        ("tag:数据结构", {"redis-study.md"}),
        ("title:roofline", {"roofline.md"}),
        ('title:"Redis 学习笔记"', {"redis-study.md"}),
        ("title:时间窗口", {"project.md"}),
        ("path:lock", {"lock.md"}),
        ("series:cs336", {"lecture.md"}),
        ("category:gpu", {"gpu.md"}),
        ("date:2024", {"project.md", "gpu.md", "roofline.md", "lecture.md"}),
        ("date:2024-03", {"project.md", "gpu.md"}),
        ("date:2023-01..2024-03", {"redis-study.md", "project.md", "gpu.md"}),
        ("draft:true", {"lock.md"}),
        ("redis tag:project", {"project.md"}),
        ("tag:gpu -roofline", {"gpu.md"}),
        ("tag:cs336 OR tag:project", {"roofline.md", "lecture.md", "project.md"}),
    ],
)
def test_filters(kb: KnowledgeBase, query: str, expected: set[str]) -> None:
    assert found(kb, query) == expected


def test_title_hits_rank_first(kb: KnowledgeBase) -> None:
    assert kb.search("Redis 学习笔记").hits[0].path == "redis-study.md"
    assert kb.search("roofline").hits[0].path == "roofline.md"


def test_prefix_mode_treats_the_unfinished_last_word_as_a_prefix(kb: KnowledgeBase) -> None:
    assert found(kb, "roof", prefix=True) == {"roofline.md", "mentions-roofline.md"}
    # Typed in full, a word no note holds is a partial word too, as in the TUI...
    assert found(kb, "roof") == {"roofline.md", "mentions-roofline.md"}
    assert kb.search("roof").notices == ["showing results for roofline (for roof)"]
    # ...unless asked for exactly.
    assert kb.search("roof", exact=True).hits == []
    assert found(kb, "ro", prefix=True) == set()  # under 3 characters: not yet a prefix


def test_snippets_highlight_the_matches(kb: KnowledgeBase) -> None:
    hit = kb.search("显存 GPU").hits[0]
    marked = [hit.snippet[s:e] for s, e in hit.highlights]
    assert "显存" in marked
    assert "GPU" in marked
    title_hit = kb.search("roofline").hits[0]
    assert [title_hit.title[s:e] for s, e in title_hit.title_highlights] == ["Roofline"]


@pytest.mark.parametrize(
    "query",
    [
        "(open",
        "close)",
        "OR redis",
        "redis OR",
        "r*",
        "-redis",
        "tag:",
        "date:2024-13",
        "draft:maybe",
        "x" * 501,
    ],
)
def test_bad_syntax_is_one_clear_error(kb: KnowledgeBase, query: str) -> None:
    with pytest.raises(QuerySyntaxError) as error:
        kb.search(query)
    assert "\n" not in str(error.value)


def test_index_follows_edits_removals_and_renames(own_kb: KnowledgeBase) -> None:
    notes = own_kb.config.roots[0].path
    (notes / "cpp.md").write_text("---\ntitle: C++ 值类别\n---\n\n现在只谈 prvalue。\n")
    (notes / "apart.md").unlink()
    (notes / "lock.md").rename(notes / "locks.md")
    stats = own_kb.ingest()
    assert (stats.updated, stats.removed, stats.moved) == (1, 1, 1)
    assert found(own_kb, "将亡值") == set()
    assert found(own_kb, "prvalue") == {"cpp.md"}
    assert found(own_kb, "显示") == set()
    assert found(own_kb, "锁") == {"locks.md"}
    assert own_kb.engine().is_ready()


def test_index_is_rebuilt_when_the_tokenizer_changes(own_kb: KnowledgeBase, monkeypatch) -> None:
    import kb.words.streams as streams

    monkeypatch.setattr(streams, "TOKENIZER_VERSION", "test-changed")
    assert not own_kb.engine().is_ready()
    assert own_kb.search("显存").warning
    assert own_kb.ingest().changed == 0
    assert own_kb.engine().is_ready()
    assert found(own_kb, "显存") == {"gpu.md"}


def test_cli_search_output_and_exit_codes(kb: KnowledgeBase, monkeypatch) -> None:
    runner = CliRunner()
    home = ["--kb", str(kb.home)]
    monkeypatch.chdir(kb.home)  # paths print from here, inside the knowledge base
    result = runner.invoke(cli, [*home, "search", "Redis", "学习笔记"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[:2] == [
        "Redis 学习笔记  2023-05-02",
        f"{Path('notes') / 'redis-study.md'}  #redis #数据结构",
    ]
    assert "\x1b" not in result.stdout  # plain when piped

    result = runner.invoke(cli, [*home, "search", "--json", "roofline"])
    hits = json.loads(result.stdout)
    assert {"path", "title", "date", "tags", "snippet", "score"} <= set(hits[0])
    assert hits[0]["path"] == "roofline.md"
    assert hits[0]["file"] == str(Path("notes") / "roofline.md")

    result = runner.invoke(cli, [*home, "search", "--paths", "将亡值"])
    assert result.stdout.splitlines() == [str(Path("notes") / "cpp.md")]

    result = runner.invoke(cli, [*home, "search", "--json", "nothinglikethis"])
    assert (result.exit_code, result.stdout.strip()) == (1, "[]")

    result = runner.invoke(cli, [*home, "search", "--paths", "redsi"])
    assert result.exit_code == 0
    assert "kb: showing results for redis (for redsi)" in result.stderr
    assert str(Path("notes") / "redis-study.md") in result.stdout.splitlines()

    result = runner.invoke(cli, [*home, "search", "--exact", "redsi"])
    assert result.exit_code == 1
    assert "did you mean: redis?" in result.stderr

    result = runner.invoke(cli, [*home, "search", "(unclosed"])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "kb: unclosed ( in the query: close the group with ), or remove the ("
    )


def test_control_characters_never_reach_the_terminal(make_kb) -> None:
    kb = make_kb({"evil.md": '---\ntitle: "red\\e[31mALERT\\a"\n---\n\nbody \x1b]8;;x\x07 evil\n'})
    kb.ingest()
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "search", "evil"])
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout
    assert "red[31mALERT" in result.stdout


def test_search_before_ingest_says_what_to_do(make_kb) -> None:
    kb = make_kb({"a.md": "# a\n"})
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "search", "a"])
    assert result.exit_code == 1
    assert "run 'kb ingest' first" in result.stderr


def test_kb_search_imports_neither_textual_nor_sqlite_utils(kb: KnowledgeBase) -> None:
    script = (
        "import sys\n"
        "from kb.cli import main\n"
        f"sys.argv = ['kb', '--kb', {str(kb.home)!r}, 'search', '显存带宽']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'textual', 'sqlite_utils', 'rjieba', 'markdown_it', 'rich'}\n"
        "print('LOADED', sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert "GPU 笔记" in out
    assert out.strip().endswith("LOADED []")


def test_dictionary_words_boost_but_never_decide(make_kb) -> None:
    kb = make_kb(
        {
            "server.md": "---\ntitle: 一\n---\n\n我们和服务器的故事很长很长很长很长。\n",
            "kimono.md": "---\ntitle: 二\n---\n\n她穿着和服的故事很长很长很长很长。\n",
        }
    )
    kb.ingest()
    hits = [hit.path for hit in kb.search("和服").hits]
    assert hits == ["kimono.md", "server.md"]  # both contain 和服; one as a word


def test_case_variant_tags_keep_the_index_exact(make_kb) -> None:
    kb = make_kb({"b.md": "---\ntags: [PyTorch]\n---\n# B\nbeta\n"})
    kb.ingest()
    notes = kb.config.roots[0].path
    (notes / "a.md").write_text("---\ntags: [pytorch]\n---\n# A\nalpha\n")
    kb.ingest()
    (notes / "b.md").unlink()
    kb.ingest()
    with (notes / "a.md").open("a") as handle:
        handle.write("more\n")
    assert kb.ingest().updated == 1
    a = kb.find_note("a.md")
    assert kb._store.terms.of_note("tags", a.id) == ["pytorch"]  # its own spelling
    assert [hit.path for hit in kb.search("tag:PyTorch more").hits] == ["a.md"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("redis 。", {"redis-study.md", "project.md"}),  # punctuation-only words are dropped
        ("redis -", {"redis-study.md", "project.md"}),
        ("-(显存 OR 锁) redis", {"redis-study.md", "project.md"}),
        ('"锁"', {"lock.md"}),  # a one-character Chinese phrase
        ('"都不是锁"', {"lock.md"}),
        # the excluded notes start before the first match (whoosh's AndNot got this wrong)
        ("学习笔记 -(显存 OR 时间窗口)", {"redis-study.md"}),
    ],
)
def test_query_edge_cases(kb: KnowledgeBase, query: str, expected: set[str]) -> None:
    assert found(kb, query) == expected


@pytest.mark.parametrize(
    "query",
    ["\udcff", "redis " + "NOT " * 40 + "x", "(" * 20 + "a" + ")" * 20, "。", "-(。)"],
)
def test_more_bad_queries(kb: KnowledgeBase, query: str) -> None:
    with pytest.raises(QuerySyntaxError):
        kb.search(query)


EVERY_ENGINE = engine_params()


def _engine_kb(make_kb, engine: str, notes: dict[str, str]) -> KnowledgeBase:
    kb = make_kb(notes, f"roots: [notes]\nengine: {engine}\n")
    kb.ingest()
    return kb


@pytest.mark.parametrize("engine", EVERY_ENGINE)
def test_a_word_inside_a_longer_title_word_is_not_a_title_holding_it(make_kb, engine) -> None:
    # `token` is inside `tiktoken`, but a title "tiktoken budget tricks" does not hold the
    # word token: the note titled with both words comes first, however often the other
    # says them.
    notes = {
        "tiktoken.md": "---\ntitle: tiktoken budget tricks\ntags: [token, budget]\n---\n\n"
        + "## The token budget\n\nthe token budget, token by token, budget after budget.\n" * 5,
        "budget.md": "---\ntitle: A token budget for serving\n---\n\n"
        + "How much a request may spend, in the scheduler's words. " * 40,
    }
    kb = _engine_kb(make_kb, engine, notes)
    assert [h.path for h in kb.search("token budget").hits] == ["budget.md", "tiktoken.md"]


@pytest.mark.parametrize("engine", EVERY_ENGINE)
def test_a_title_holding_every_word_leads_even_past_the_engines_best(make_kb, engine) -> None:
    # Forty notes say "cache eviction" often; one, long, says it once but is titled with
    # both words. By score it is past the engine's best 30; kb still shows it first.
    notes = {
        f"n{i:02}.md": f"---\ntitle: 笔记 {i}\n---\n\n" + "cache eviction again. " * 30
        for i in range(40)
    }
    filler = " ".join(f"word{i}" for i in range(3000))
    notes["titled.md"] = (
        f"---\ntitle: Eviction policies of a cache\n---\n\n{filler}\n\ncache eviction.\n"
    )
    kb = _engine_kb(make_kb, engine, notes)
    hits = kb.search("cache eviction", limit=10).hits
    assert hits[0].path == "titled.md"
    assert len(hits) == 10


FILTERED = {
    # Seven notes tagged `cache`, two on one date (then by path), one undated (last);
    # two of them say "eviction", which ranks them first when the query has that word.
    "a.md": "---\ntitle: A\ntags: [cache]\ndate: 2021-03-01\n---\n\nwrite-back.\n",
    "b.md": "---\ntitle: B\ntags: [cache]\ndate: 2024-01-09\n---\n\nwrite-through.\n",
    "c.md": "---\ntitle: C\ntags: [cache]\ndate: 2024-01-09\n---\n\neviction, LRU.\n",
    "d.md": "---\ntitle: D\ntags: [cache]\n---\n\nno date.\n",
    "e.md": "---\ntitle: E\ntags: [cache]\ndate: 2025-07-30\n---\n\nsharding.\n",
    "f.md": "---\ntitle: F\ntags: [cache]\ndate: 2019-11-11\n---\n\neviction eviction.\n",
    "g.md": "---\ntitle: G\ntags: [cache]\ndate: 2023-02-02\n---\n\nhit ratio.\n",
    "other.md": "---\ntitle: Other\ntags: [gpu]\ndate: 2026-01-01\n---\n\neviction.\n",
}


@pytest.mark.parametrize("by_key_at_most", [500, 2])
@pytest.mark.parametrize("engine", EVERY_ENGINE)
def test_a_filter_lists_its_notes_newest_first_on_every_engine(
    make_kb, monkeypatch, engine, by_key_at_most
) -> None:
    # The notes a filter keeps with no score, newest first, undated last, then by path,
    # whether the store looks them up by key or reads its date index until the page is full.
    monkeypatch.setattr("kb.store.notes.BY_KEY_AT_MOST", by_key_at_most)
    kb = _engine_kb(make_kb, engine, FILTERED)
    newest = ["e.md", "b.md", "c.md", "g.md", "a.md", "f.md", "d.md"]
    assert [h.path for h in kb.search("tag:cache").hits] == newest
    assert [h.path for h in kb.search("tag:cache", limit=3).hits] == newest[:3]
    assert [h.path for h in kb.search("tag:cache -sharding", limit=4).hits] == [
        "b.md",
        "c.md",
        "g.md",
        "a.md",
    ]
    # A word ranks the notes holding it first; the rest of the filter's notes follow.
    ranked = [h.path for h in kb.search("tag:cache OR eviction").hits]
    assert set(ranked[:3]) == {"c.md", "f.md", "other.md"}
    assert ranked[3:] == ["e.md", "b.md", "g.md", "a.md", "d.md"]


@pytest.mark.parametrize("engine", EVERY_ENGINE)
def test_tied_scores_go_newest_first_a_time_after_its_day_as_fts5_orders(make_kb, engine) -> None:
    # Same words, same score: the note dated with a time on the same day is the newer.
    notes = {
        "p.md": "---\ntitle: P\ntags: [x]\ndate: 2024-01-09\n---\n\nalpha beta.\n",
        "q.md": "---\ntitle: Q\ntags: [x]\ndate: 2024-01-09T10:00:00\n---\n\nalpha beta.\n",
    }
    kb = _engine_kb(make_kb, engine, notes)
    for query in ("tag:x alpha", "tag:x OR alpha"):  # the engine orders a filtered page
        assert [h.path for h in kb.search(query).hits] == ["q.md", "p.md"], query


def test_the_note_choices_are_by_path(make_kb) -> None:
    # Completion, the palette's candidates and MCP's resource pages step through this list.
    kb = _engine_kb(make_kb, "fts5", {**FILTERED, "0-first.md": "# Zero\n"})
    paths = [choice.path for choice in kb.note_choices()]
    assert paths == sorted(paths)
