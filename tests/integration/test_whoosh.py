"""The whoosh engine: chosen per knowledge base, same answers as FTS5, and never out of
step with the store for longer than one ingest, even when ingest is killed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.engines.whoosh import available
from kb.knowledge_base import KnowledgeBase
from tests.conftest import SAMPLE_NOTES, SHARED_CORPORA

pytestmark = pytest.mark.skipif(not available(), reason="whoosh-reloaded is not installed")

QUERIES = [
    "显存",
    "显存带宽",
    "Redis 学习笔记",
    "roofline",
    "roof*",
    "FSDP",
    "FlatParameter",
    '"arithmetic intensity"',
    "tag:cs336",
    "tag:redis 数据结构",
    "时间窗口 -lua",
    "(MoE OR 专家) serving",
    "date:2024-03",
    "title:lecture",
    "锁",
    "std::move",
    "INT8",
    "将亡值",
    'title:"Redis 学习笔记"',
    "kv cache",
    # prefixes and lone characters: each is one set of notes on whoosh (TermSet)
    "re*",
    "re* -redis",
    "title:redis re*",
    "存",
    "开",
    "存 re*",
    "(锁 OR 存) -redis",
]
# searched as you type: the last word of 3 or more characters is a prefix
TYPED = ["redi", "kv cac", "显存 ban", "roo"]


def sample_kb(tmp_path: Path) -> KnowledgeBase:
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    return KnowledgeBase.open(tmp_path)


def answers(kb: KnowledgeBase) -> dict[str, set[str]]:
    found = {q: {hit.path for hit in kb.search(q, limit=1000).hits} for q in QUERIES}
    for q in TYPED:
        found[f"{q} (typed)"] = {hit.path for hit in kb.search(q, limit=1000, prefix=True).hits}
    return found


@pytest.mark.slow
def test_rebuild_with_whoosh_gives_the_same_answers(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest()
    with_fts5 = answers(kb)
    result = CliRunner().invoke(
        cli, ["--kb", str(tmp_path), "ingest", "--rebuild", "--engine", "whoosh", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "index" / "whoosh").is_dir()
    kb = KnowledgeBase.open(tmp_path)
    assert kb.engine().name == "whoosh"
    assert kb.engine().is_ready()
    assert answers(kb) == with_fts5
    assert kb.search("Redis 学习笔记").hits[0].title == "Redis 学习笔记"
    CliRunner().invoke(cli, ["--kb", str(tmp_path), "ingest", "--rebuild", "--engine", "fts5"])
    kb = KnowledgeBase.open(tmp_path)
    assert kb.engine().name == "fts5"
    assert answers(kb) == with_fts5


@pytest.mark.slow
@pytest.mark.skipif(not SHARED_CORPORA.is_dir(), reason="no ../shared/corpora")
def test_same_answers_on_advanced_java(tmp_path: Path) -> None:
    root = json.dumps(str(SHARED_CORPORA / "advanced-java-zh"))
    (tmp_path / "kb.yaml").write_text(f"roots: [{root}]\n", encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    words = [
        "分布式锁",
        "消息队列",
        "哨兵",
        "幂等",
        "限流",
        "锁",
        "kafka",
        "dubbo",
        "Redis",
        "hystrix",
        '"缓存雪崩"',
        "redis -集群",
        "zookeeper OR dubbo",
    ]
    fts5 = {w: {h.path for h in kb.search(w, limit=1000).hits} for w in words}
    kb.ingest(rebuild=True, engine="whoosh")
    kb = KnowledgeBase.open(tmp_path)
    assert {w: {h.path for h in kb.search(w, limit=1000).hits} for w in words} == fts5


@pytest.mark.slow
def test_killed_between_store_and_index_commit_catches_up(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest(rebuild=True, engine="whoosh")
    note = tmp_path / "notes" / "engineering" / "redis-study.md"
    note.write_text(note.read_text(encoding="utf-8") + "\n新词：独角兽缓存\n", encoding="utf-8")
    (tmp_path / "notes" / "life" / "reading-list.md").unlink()
    killer = (
        "import os, signal, sys\n"
        "from kb.engines import whoosh\n"
        "whoosh.WhooshIndex.sync = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from kb.knowledge_base import KnowledgeBase\n"
        f"KnowledgeBase.open({str(tmp_path)!r}).ingest()\n"
    )
    died = subprocess.run([sys.executable, "-c", killer], check=False)
    assert died.returncode == -9  # killed after the store committed, before the index did
    kb = KnowledgeBase.open(tmp_path)
    assert not kb.engine().is_ready()
    lagging = kb.search("独角兽缓存")
    assert lagging.warning  # answers from what it has, and says the index is behind
    index_files = sorted(p.name for p in (tmp_path / "index" / "whoosh").iterdir())
    assert index_files == sorted(p.name for p in (tmp_path / "index" / "whoosh").iterdir())
    stats = kb.ingest()
    assert stats.changed == 0  # the store had it all; only the index caught up
    kb = KnowledgeBase.open(tmp_path)
    assert kb.engine().is_ready()
    assert [h.path for h in kb.search('"独角兽缓存"').hits] == ["engineering/redis-study.md"]
    assert "life/reading-list.md" not in {h.path for h in kb.search("阅读清单", limit=100).hits}


@pytest.mark.slow
def test_opening_the_index_never_imports_rjieba(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest(rebuild=True, engine="whoosh")
    script = (
        "import sys\n"
        "from kb.knowledge_base import KnowledgeBase\n"
        f"hits = KnowledgeBase.open({str(tmp_path)!r}).search('显存带宽').hits\n"
        "print(len(hits) > 0, 'rjieba' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "True False"


def test_engine_flag_needs_rebuild(tmp_path: Path) -> None:
    sample_kb(tmp_path)
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "ingest", "--engine", "whoosh"])
    assert result.exit_code == 2
    assert "--rebuild" in result.stderr


@pytest.mark.slow
def test_a_new_store_rebuilds_the_index(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest(rebuild=True, engine="whoosh")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\nengine: whoosh\n", encoding="utf-8")
    for _ in range(3):
        with (tmp_path / "notes" / "life" / "2024-review.md").open("a") as handle:
            handle.write("\nmore\n")
        KnowledgeBase.open(tmp_path).ingest()
    for path in (tmp_path / "index").glob("kb.sqlite*"):
        path.unlink()  # the store is made again: its generations start over
    (tmp_path / "notes" / "life" / "fresh.md").write_text("# fresh\n\nzetaword\n")
    (tmp_path / "notes" / "life" / "reading-list.md").unlink()
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    kb = KnowledgeBase.open(tmp_path)
    assert kb.engine().is_ready()
    assert [h.path for h in kb.search("zetaword").hits] == ["life/fresh.md"]
    assert "life/reading-list.md" not in {h.path for h in kb.search("阅读清单", limit=100).hits}


def test_a_prefix_ranks_by_field_then_newest_first(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb(
        {
            "fusion.md": "---\ntitle: Kernel fusion\ndate: 2020-01-01\n---\n\nTwo ops in one.\n",
            "launches.md": (
                "---\ntitle: Launch overhead\ndate: 2022-01-01\n---\n\n"
                "kernels, kernels and more kernels: every kernel launch costs.\n"
            ),
            "profile.md": "---\ntitle: Profiling\ndate: 2024-01-01\n---\n\nOne kernel.\n",
        }
    )
    kb.ingest(rebuild=True, engine="whoosh")
    kb = KnowledgeBase.open(kb.home)
    assert kb.engine().name == "whoosh"
    # The title match first; the two body matches tie (how often a note holds the word
    # does not count for a prefix), so the newer one comes next.
    expected = ["fusion.md", "profile.md", "launches.md"]
    assert [h.path for h in kb.search("kerne*").hits] == expected
    assert [h.path for h in kb.search("kerne", prefix=True).hits] == expected
