"""Queries as people type them (issue 11): Chinese questions, typos and partial words,
any case, inflections, names with symbols, the glossary, relaxed matching, what is
searched, ranking and snippets — on every engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.engines.whoosh import available as whoosh_available
from kb.knowledge_base import KnowledgeBase
from kb.parse.markdown import strip_site_markup
from tests.conftest import run_cli

ENGINES = [
    "fts5",
    pytest.param(
        "whoosh", marks=pytest.mark.skipif(not whoosh_available(), reason="whoosh not installed")
    ),
]


def note(title: str, body: str, **front: str) -> str:
    extra = "".join(f"{key}: {value}\n" for key, value in front.items())
    return f"---\ntitle: {title}\n{extra}---\n\n{body}\n"


FILLER = "这一段只是为了让正文长一些，和主题没有关系。" * 3

NOTES = {
    # Chinese questions and split runs
    "mq-ha.md": note("消息队列的高可用", "怎么保证消息队列高可用？RabbitMQ 镜像集群，Kafka 副本。"),
    "mq-basics.md": note("消息队列入门", "为什么用消息队列：解耦、异步、削峰。可用性另说。"),
    "sharding.md": note("分库分表", "为什么要分库分表？单表数据量太大。" + FILLER),
    "sharding-split.md": note("拆分", "先分库，以后再考虑分表的事情。" + FILLER),
    # case and identifier parts
    "spring-cloud.md": note("微服务框架", "SpringCloud 是一套微服务框架。" + FILLER),
    "spring-cloud-spaced.md": note("服务治理", "Spring Cloud 的组件很多，Cloud 原生。" + FILLER),
    "threadlocal.md": note("线程变量", "ThreadLocal 用来保存线程私有的变量。"),
    "random.md": note("随机数", "并发下用 ThreadLocalRandom 生成随机数。"),
    # typos, partial words, inflections
    "es.md": note("搜索引擎", "Elasticsearch 的倒排索引。"),
    "dubbo.md": note("RPC 框架", "Dubbo 的 SPI 机制。"),
    "rocket.md": note("消息中间件", "RocketMQ 的事务消息。"),
    "gpus.md": note("Hardware", "Modern GPUs are memory bound when benchmarking kernels."),
    "gpu.md": note("One GPU", "A single GPU is enough; we benchmark it."),
    # names with symbols
    "btree.md": note("索引结构", "MySQL 的索引用 B+树 实现。"),
    "b-and-tree.md": note("其他", "B 站上看到一棵树的视频。"),
    "cpp.md": note("语言", "C++ 和 C# 都有 std::move 之类的东西吗？不，只有 C++ 有。"),
    "js.md": note("前端", "node.js 里没有 Thread.sleep()，要用 setTimeout。k8s 部署。"),
    "java.md": note("注解", "Spring 的 @Transactional 注解，以及 a/b 测试。"),
    "sql.md": note("SQL", "select * from t where id = 1;"),
    # the glossary
    "serving.md": note("Serving notes", "We run inference on GPUs with batching."),
    "tuili.md": note("推理优化", "推理的时候 batch 越大越好。"),
    # what is searched
    "described.md": note(
        "随笔", "正文里什么都没写。", description="关于 quokka 的描述", keywords="wombat"
    ),
    "posts/torch-cupy-import-order.md": note("顺序问题", "先导入哪个库会影响结果。"),
    "jekyll.md": note("提示", "> 这是提示\n{: .prompt-info }\n\n正文。"),
    # ranking: a title about it, a note that mentions it once, a hub listing them
    "about-raft.md": note("Raft 共识算法", "## Raft 的选主\n\nRaft 用任期选主。"),
    "mentions-raft.md": note("分布式杂谈", FILLER + "顺便提一句 raft。" + FILLER),
    "index.md": note(
        "目录",
        "\n".join(f"- [Raft 共识算法 {i}](about-raft.md)" for i in range(10)),
    ),
    # snippets
    "long-word.md": note("长词", "x" * 150 + " ConcurrentHashMap is a map. " + "y" * 150),
    "code-only.md": note(
        "代码", "正文不提它。\n\n```python\nimport numpy\nresult = frobnicate(x)\n```\n"
    ),
}


@pytest.fixture(params=ENGINES, scope="module")
def kb(request, tmp_path_factory) -> KnowledgeBase:
    from tests.conftest import write_notes

    home = tmp_path_factory.mktemp(f"reading-{request.param}")
    (home / "kb.yaml").write_text(
        f"roots: [notes]\nengine: {request.param}\nsynonyms:\n  袋熊: [wombat2]\n",
        encoding="utf-8",
    )
    write_notes(home / "notes", NOTES)
    base = KnowledgeBase.open(home)
    base.ingest()
    return base


def paths(kb: KnowledgeBase, query: str, **options: object) -> list[str]:
    return [hit.path for hit in kb.search(query, limit=50, **options).hits]  # type: ignore[arg-type]


def complete(kb: KnowledgeBase, query: str, **options: object) -> set[str]:
    """Notes holding every word of the query."""
    hits = kb.search(query, limit=50, **options).hits  # type: ignore[arg-type]
    return {hit.path for hit in hits if not hit.missing}


# -- 1. queries as people type them -----------------------------------------------


def test_a_chinese_question_finds_the_notes_that_answer_it(kb: KnowledgeBase) -> None:
    found = paths(kb, "怎样保证消息队列高可用")
    assert found[0] == "mq-ha.md"  # 保证 is the only word it lacks... none: 怎么 ≠ 怎样
    assert "mq-basics.md" in found  # holds 消息队列 but not 高可用: it follows
    assert "sharding.md" in complete(kb, "为什么要做分库分表")


def test_function_words_carry_no_requirement(kb: KnowledgeBase) -> None:
    assert complete(kb, "分库分表的") == complete(kb, "分库分表")
    assert complete(kb, "what is Elasticsearch") == {"es.md"}


def test_a_run_found_intact_ranks_first(kb: KnowledgeBase) -> None:
    # 分库分表 is split into 分库 and 分表; the note holding the run intact comes first.
    found = paths(kb, "分库分表")
    assert found[:2] == ["sharding.md", "sharding-split.md"]


def test_fewer_than_ten_notes_with_every_word_are_followed_by_notes_with_some(
    kb: KnowledgeBase,
) -> None:
    results = kb.search("消息队列 镜像集群 副本")
    assert results.hits[0].path == "mq-ha.md" and results.hits[0].missing == []
    partial = [hit for hit in results.hits if hit.missing]
    # most words first: mq-basics holds 消息 and 队列, rocket.md only 消息
    assert [hit.path for hit in partial][:2] == ["mq-basics.md", "rocket.md"]
    # 消息队列 is a glossary term (message queue): kept whole, before any split; 镜像集群
    # is split into the words the notes use
    assert partial[0].matched == ["消息队列"]
    assert sorted(partial[0].missing) == ["副本", "镜像", "集群"]
    assert results.relaxed


def test_explicit_syntax_keeps_its_exact_meaning(kb: KnowledgeBase) -> None:
    results = kb.search("消息队列 AND 镜像集群")
    assert [hit.path for hit in results.hits] == ["mq-ha.md"]
    assert paths(kb, '"分库分表"') == ["sharding.md"]  # a quoted run stays exact
    assert "mq-basics.md" not in paths(kb, "消息队列 -入门")


def test_cli_exit_codes_and_paths_with_relaxed_results(kb: KnowledgeBase, monkeypatch) -> None:
    monkeypatch.chdir(kb.home)
    runner = CliRunner()
    home = ["--kb", str(kb.home)]
    result = runner.invoke(cli, [*home, "search", "--paths", "消息队列 镜像集群"])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [str(Path("notes") / "mq-ha.md")]
    result = runner.invoke(cli, [*home, "search", "--paths", "入门 镜像集群"])
    assert result.exit_code == 0
    assert "no note holds every word" in result.stderr
    assert sorted(result.stdout.splitlines()) == [
        str(Path("notes") / "mq-basics.md"),
        str(Path("notes") / "mq-ha.md"),
    ]
    result = runner.invoke(cli, [*home, "search", "--json", "消息队列 镜像集群"])
    first = json.loads(result.stdout)[0]
    assert (first["path"], first["matched"], first["missing"]) == (
        "mq-ha.md",
        ["消息队列", "镜像", "集群"],
        [],
    )
    result = runner.invoke(cli, [*home, "search", "zzzqqq"])
    assert result.exit_code == 1


# -- 2. typos and partial words ----------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "meant", "expected"),
    [
        ("elasticsaerch", "elasticsearch", "es.md"),
        ("dubbbo", "dubbo", "dubbo.md"),
        ("rocketm", "rocketmq", "rocket.md"),
    ],
)
def test_typos_and_partial_words_find_the_word(
    kb: KnowledgeBase, typed: str, meant: str, expected: str
) -> None:
    results = kb.search(typed)
    assert [hit.path for hit in results.hits] == [expected]
    assert results.notices == [f"showing results for {meant} (for {typed})"]
    assert kb.search(typed, exact=True).hits == []
    # the TUI (prefix mode) and the command line agree
    assert [hit.path for hit in kb.search(typed, prefix=True).hits] == [expected]


def test_a_short_word_with_two_letters_swapped_finds_the_word(make_kb) -> None:
    kb = make_kb(
        {
            "ebpf.md": note("eBPF tracing", "eBPF programs run in the kernel; EBPF maps."),
            "frame.md": note("Stack frames", "The ebp register holds the frame base."),
        }
    )
    kb.ingest()
    results = kb.search("ebfp")
    assert [hit.path for hit in results.hits] == ["ebpf.md"]
    assert results.notices == ["showing results for ebpf (for ebfp)"]
    result = run_cli(kb, "search", "--exact", "ebfp")
    assert result.exit_code == 1
    assert "did you mean: ebpf?" in result.stderr


def test_typos_are_never_applied_to_chinese(kb: KnowledgeBase) -> None:
    results = kb.search("消息对列")
    assert results.notices == []
    assert all("队列" not in hit.matched for hit in results.hits)


# -- 3. case and inflections ----------------------------------------------------------


def test_case_never_changes_the_answer(kb: KnowledgeBase) -> None:
    spellings = ["SpringCloud", "springcloud", "SPRINGCLOUD", "Springcloud"]
    answers = [paths(kb, s) for s in spellings]
    assert all(a == answers[0] for a in answers)
    assert answers[0][:2] == ["spring-cloud.md", "spring-cloud-spaced.md"]  # whole word first


def test_longer_identifiers_match_below_the_word(kb: KnowledgeBase) -> None:
    assert paths(kb, "ThreadLocal") == ["threadlocal.md", "random.md"]
    assert paths(kb, "threadlocal") == ["threadlocal.md", "random.md"]


def test_inflections_match_with_the_exact_form_first(kb: KnowledgeBase) -> None:
    assert paths(kb, "gpu")[:2] == ["gpu.md", "gpus.md"]
    assert set(paths(kb, "benchmark")) == {"gpu.md", "gpus.md"}
    assert paths(kb, "benchmarking")[0] == "gpus.md"
    assert paths(kb, "benchmarking", exact=True) == ["gpus.md"]


# -- 4. names with symbols --------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("B+树", ["btree.md"]),
        ("C++", ["cpp.md"]),
        ("C#", ["cpp.md"]),
        ("std::move", ["cpp.md"]),
        ("node.js", ["js.md"]),
        ("Thread.sleep()", ["js.md"]),
        ("k8s", ["js.md"]),
        ("@Transactional", ["java.md"]),
        ("a/b", ["java.md"]),
        ("select *", ["sql.md"]),
    ],
)
def test_names_with_symbols_are_terms(kb: KnowledgeBase, query: str, expected: list[str]) -> None:
    assert complete(kb, query) == set(expected)
    assert paths(kb, query)[0] == expected[0]


# -- 5. what is searched ---------------------------------------------------------------


def test_front_matter_description_keywords_and_file_names_are_searched(
    kb: KnowledgeBase,
) -> None:
    assert paths(kb, "quokka") == ["described.md"]
    assert paths(kb, "wombat", exact=True) == ["described.md"]
    # code-only.md imports in its code, which counts less than a file name
    assert paths(kb, "import", exact=True)[0] == "posts/torch-cupy-import-order.md"
    assert paths(kb, "cupy") == ["posts/torch-cupy-import-order.md"]


def test_site_generator_markup_is_not_text(kb: KnowledgeBase) -> None:
    assert kb.search("prompt", exact=True).hits == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{: .prompt-info }", " "),
        ('a {{< figure src="x.png" >}} b', "a   b"),
        ("{{% notice info %}}", " "),
        ("{% include x.html %} y", "  y"),
        ("set {a: 1} stays", "set {a: 1} stays"),
        # A Jekyll site's own variables are markup; other {{ }} may be what a note is about.
        ("{{ site.url }}/a", " /a"),
        ("{{ name }}", "{{ name }}"),
    ],
)
def test_strip_site_markup(text: str, expected: str) -> None:
    assert strip_site_markup(text) == expected


# -- 6. ranking --------------------------------------------------------------------------


def test_a_note_about_the_query_ranks_above_a_mention_and_a_hub_below_it(
    kb: KnowledgeBase,
) -> None:
    found = paths(kb, "raft")
    assert found.index("about-raft.md") < found.index("mentions-raft.md")
    assert found.index("about-raft.md") < found.index("index.md")


# -- 7. snippets ---------------------------------------------------------------------------


def test_snippets_never_cut_a_latin_word(kb: KnowledgeBase) -> None:
    hit = kb.search("ConcurrentHashMap").hits[0]
    words = hit.snippet.strip("…").split()
    assert all(set(w) <= {"x"} or set(w) <= {"y"} or w.isalpha() or w == "map." for w in words)
    assert "ConcurrentHashMap" in [hit.snippet[s:e] for s, e in hit.highlights]
    assert not hit.snippet.startswith("…x") or hit.snippet.startswith("…xxx")


def test_a_match_only_in_code_shows_the_code_line(kb: KnowledgeBase) -> None:
    hit = kb.search("frobnicate").hits[0]
    assert hit.snippet == "`result = frobnicate(x)`"
    assert [hit.snippet[s:e] for s, e in hit.highlights] == ["frobnicate"]


# -- 8. the glossary ----------------------------------------------------------------------


def test_a_word_matches_its_glossary_partners_below_itself(kb: KnowledgeBase) -> None:
    results = kb.search("推理")
    found = [hit.path for hit in results.hits]
    assert found[:2] == ["tuili.md", "serving.md"]
    serving = results.hits[1]
    assert serving.matched == ["推理 (inference)"]
    # A note whose title is about the partner (推理优化) is about the word too.
    english = {hit.path: hit.matched for hit in kb.search("inference").hits}
    assert english == {"serving.md": ["inference"], "tuili.md": ["inference (推理)"]}
    assert paths(kb, "推理", exact=True) == ["tuili.md"]


def test_synonyms_in_kb_yaml_add_partners(kb: KnowledgeBase) -> None:
    assert paths(kb, "袋熊") == []  # wombat2 is in no note: the user entry replaced nothing
    assert "described.md" in paths(kb, "wombat")


def test_a_query_of_function_words_only_searches_them(kb: KnowledgeBase) -> None:
    assert "sharding.md" in paths(kb, "为什么")
