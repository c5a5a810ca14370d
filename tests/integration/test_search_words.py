"""Chinese words the notes never wrote, fragments of a run, and proximity (issue 23,
item 1): a typed run keeps its meaning (its glossary partners are looked up before it is
split), a lone character or a leftover piece of the run is never a matched or a missing
word, and a note holding the query's words near each other ranks above one where they are
scattered. On every engine, with notes written here and on the shared corpora."""

from __future__ import annotations

import pytest

from kb.engines.whoosh import available as whoosh_available
from kb.knowledge_base import KnowledgeBase
from tests.conftest import SHARED_CORPORA

ENGINES = [
    "fts5",
    pytest.param(
        "whoosh", marks=pytest.mark.skipif(not whoosh_available(), reason="whoosh not installed")
    ),
]
CORPORA = SHARED_CORPORA


def note(title: str, body: str) -> str:
    return f"---\ntitle: {title}\n---\n\n{body}\n"


FILLER = "这一段只是为了让正文长一些，和主题没有关系。"
PADDING = " ".join(["The weather was fine and the coffee was good."] * 6)

NOTES = {
    # 命中率: a note that says it in English, one holding 命中 in another sense (often),
    # one holding only 率, one holding only 缓存
    "cache-tuning.md": note(
        "缓存调优", "After the last release the cache hit rate dropped to 60%. 调了淘汰策略。"
    ),
    "shooting.md": note(
        "射击训练", ("十发子弹命中了九发，命中目标靠呼吸，命中靠练习。" + FILLER) * 2
    ),
    "failure.md": note("接口失败率", "接口失败率太高，失败率要降到千分之一，成功率要高。"),
    "cpu-cache.md": note("CPU 缓存", "L1 缓存很小，缓存行 64 字节。" + FILLER),
    # 缓存击穿率: the note about 缓存击穿, and a page holding 缓存, 击穿 and 率 apart
    "penetration.md": note("缓存击穿", "缓存击穿是热点 key 过期的一瞬间，大量请求打到数据库。"),
    "overview.md": note(
        "高并发总览",
        "缓存的用法有很多。" + FILLER + "击穿与雪崩另说。" + FILLER + "再谈失败率。",
    ),
    # proximity: the page about installing the service center, and a report that holds
    # deploy, service and center far apart (and more often)
    "install.md": note(
        "Installation", f"To deploy the service center, unpack it and run it. {PADDING}"
    ),
    "meetup.md": note(
        "Meetup report",
        "Deploy: we met at noon and talked for hours about many other things. Service: the "
        "teams came from far away and stayed late into the night. Center: the venue was the "
        "Convention Center downtown, near the old station. " * 2,
    ),
    # proximity in Chinese: 显存 带宽 side by side (in a long note), and apart (in a short one)
    "bandwidth.md": note("瓶颈在哪", "显存带宽是大模型推理的瓶颈。" + FILLER * 8),
    "scattered.md": note(
        "杂记", "显存不够用，显存太小。" + FILLER * 2 + "网络带宽也不够，带宽太低。"
    ),
}


@pytest.fixture(params=ENGINES, scope="module")
def kb(request, tmp_path_factory) -> KnowledgeBase:
    from tests.conftest import write_notes

    home = tmp_path_factory.mktemp(f"words-{request.param}")
    (home / "kb.yaml").write_text(f"roots: [notes]\nengine: {request.param}\n", encoding="utf-8")
    write_notes(home / "notes", NOTES)
    base = KnowledgeBase.open(home)
    base.ingest()
    return base


def paths(kb: KnowledgeBase, query: str) -> list[str]:
    return [hit.path for hit in kb.search(query, limit=20).hits]


def words_shown(kb: KnowledgeBase, query: str) -> set[str]:
    """Every word the results name as matched or as missing ("without …")."""
    shown: set[str] = set()
    for hit in kb.search(query, limit=20).hits:
        shown.update(label.split(" (")[0] for label in (*hit.matched, *hit.missing))
    return shown


# -- a run the notes never wrote keeps its meaning --------------------------------------


def test_a_run_no_note_holds_finds_its_glossary_partner_first(kb: KnowledgeBase) -> None:
    # 命中率 is in no note; the note saying "cache hit rate" holds its meaning, the note
    # holding 命中 (another sense) or 率 (失败率) does not.
    found = paths(kb, "命中率")
    assert found[:1] == ["cache-tuning.md"]
    assert "failure.md" not in found  # 率 alone is not 命中率
    assert not {"命", "率", "中率"} & words_shown(kb, "命中率")


def test_a_fragment_of_a_run_is_never_shown_as_missing(kb: KnowledgeBase) -> None:
    results = kb.search("缓存命中率低", limit=20)
    assert results.hits[0].path == "cache-tuning.md"
    shown = words_shown(kb, "缓存命中率低")
    assert not {"低", "率低", "率", "命"} & shown  # never "without 率低"
    ranked = [hit.path for hit in results.hits]
    assert "failure.md" not in ranked[: ranked.index("cache-tuning.md") + 1]


def test_a_note_holding_a_common_fragment_never_outranks_one_with_the_words(
    kb: KnowledgeBase,
) -> None:
    # 缓存击穿率: the overview holds 缓存, 击穿 and 率 apart; the note about 缓存击穿 holds
    # no 率 but is the one about the query.
    found = paths(kb, "缓存击穿率")
    assert found[0] == "penetration.md"
    assert "率" not in words_shown(kb, "缓存击穿率")


# -- proximity ----------------------------------------------------------------------------


def test_words_near_each_other_rank_above_words_scattered(kb: KnowledgeBase) -> None:
    # In English, and in Chinese (显存带宽 side by side in a long note, 显存 and 带宽 apart
    # in a short one, where BM25 alone prefers the short one)
    found = paths(kb, "how to deploy service center")
    assert found.index("install.md") < found.index("meetup.md")
    found = paths(kb, "显存 带宽")
    assert found.index("bandwidth.md") < found.index("scattered.md")


# -- the shared corpora -------------------------------------------------------------------


def _corpus_kb(name: str, engine: str, tmp_path_factory) -> KnowledgeBase:
    folder = CORPORA / name
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    home = tmp_path_factory.mktemp(f"{name}-{engine}")
    (home / "kb.yaml").write_text(f'roots: ["{folder}"]\nengine: {engine}\n', encoding="utf-8")
    base = KnowledgeBase.open(home)
    base.ingest()
    return base


@pytest.mark.slow
def test_the_install_page_comes_before_the_meetup_reports(tmp_path_factory) -> None:
    # Both engines in one test: whoosh's BM25F already ranked the page first, FTS5's BM25
    # put the report mentioning a "Convention Center" ahead of it.
    install = "_docs/products/service-center/install.md"
    reports = [
        "_posts/2018-10-29-Apache-ServiceComb-Meetup-2018-Shanghai-Report.md",
        "_posts/2018-09-28-Apache-ServiceComb-Meetup-2018-Shanghai.md",
    ]
    engines = ["fts5", *(["whoosh"] if whoosh_available() else [])]
    for engine in engines:
        kb = _corpus_kb("jekyll-blog-zh", engine, tmp_path_factory)
        found = paths(kb, "how to deploy service center")
        assert install in found[:3], engine
        assert all(r not in found or found.index(install) < found.index(r) for r in reports)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_a_run_with_a_leftover_character_ranks_the_note_about_it_first(
    engine: str, tmp_path_factory
) -> None:
    kb = _corpus_kb("advanced-java-zh", engine, tmp_path_factory)
    # 缓存击穿率: 率 is a fragment; the note about 缓存击穿 (and 雪崩, 穿透) comes first,
    # before the index pages that hold 率 somewhere, and nothing says "without 率".
    results = kb.search("缓存击穿率", limit=10)
    assert "redis-caching-avalanche-and-caching-penetration" in results.hits[0].path
    assert all("率" not in hit.missing and "率" not in hit.matched for hit in results.hits)
    # 主从同步延迟率: the notes holding 主从, 同步 and 延迟 lead; 率 is never missing
    results = kb.search("主从同步延迟率", limit=10)
    assert all("率" not in hit.missing for hit in results.hits)
    assert not results.hits[0].missing
