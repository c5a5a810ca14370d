"""The tantivy engine: chosen per knowledge base, same answers as FTS5, never out of step
with the store for longer than one ingest (even when killed), a damaged index named with
its repair, and without the package a one-line error naming the extra."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.engines.tantivy_index import PREFIX_CAP, available
from kb.knowledge_base import KnowledgeBase
from tests.conftest import SAMPLE_NOTES

pytestmark = pytest.mark.skipif(not available(), reason="tantivy is not installed")

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
    "re*",
    "re* -redis",
    "title:redis re*",
    "存",
    "开",
    "存 re*",
    "(锁 OR 存) -redis",
    '"数据结构"',
    "date:2024 -redis",
]
# searched as you type: the last word of 3 or more characters is a prefix
TYPED = ["redi", "kv cac", "显存 ban", "roo", "显存带"]


def sample_kb(tmp_path: Path) -> KnowledgeBase:
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    return KnowledgeBase.open(tmp_path)


def answers(kb: KnowledgeBase) -> dict[str, set[str]]:
    found = {q: {hit.path for hit in kb.search(q, limit=1000).hits} for q in QUERIES}
    for q in TYPED:
        found[f"{q} (typed)"] = {hit.path for hit in kb.search(q, limit=1000, prefix=True).hits}
    return found


def run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_rebuild_with_tantivy_gives_the_same_answers(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest()
    with_fts5 = answers(kb)
    assert all(with_fts5[q] for q in ("显存", "re*", "存", "redi (typed)", "显存带 (typed)"))
    result = CliRunner().invoke(
        cli, ["--kb", str(tmp_path), "ingest", "--rebuild", "--engine", "tantivy", "--json"]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "index" / "tantivy" / "meta.json").is_file()
    kb = KnowledgeBase.open(tmp_path)
    assert kb.engine().name == "tantivy"
    assert kb.engine().is_ready()
    assert answers(kb) == with_fts5
    assert kb.search("Redis 学习笔记").hits[0].title == "Redis 学习笔记"
    info = CliRunner().invoke(cli, ["--kb", str(tmp_path), "info"])
    assert "engine:         tantivy" in info.output
    stats = CliRunner().invoke(cli, ["--kb", str(tmp_path), "stats"])
    assert "tantivy" in stats.output
    CliRunner().invoke(cli, ["--kb", str(tmp_path), "ingest", "--rebuild", "--engine", "fts5"])
    kb = KnowledgeBase.open(tmp_path)
    assert kb.engine().name == "fts5"
    assert answers(kb) == with_fts5


def test_tokens_spilled_to_disk_give_the_same_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest()
    with_fts5 = answers(kb)
    # A first ingest past the spool's memory bound (a large folder): every note's tokens
    # go through the file, and the index is the one FTS5 answers from.
    monkeypatch.setattr("kb.ingest.spool.IN_MEMORY_CHARACTERS", 0)
    kb.ingest(rebuild=True, engine="tantivy")
    kb = KnowledgeBase.open(tmp_path)
    assert kb.engine().name == "tantivy"
    assert answers(kb) == with_fts5
    assert not list((tmp_path / "index").glob("kb-streams-*"))


@pytest.mark.slow
def test_related_notes_match_fts5(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest()
    notes = ["engineering/redis-study.md", "cs336/lecture-09-inference.md"]

    def related(kb: KnowledgeBase) -> dict[str, list[str]]:
        found = {}
        for path in notes:
            note = kb.find_note(path)
            found[path] = [str(r) for r in kb.links.related(note.id)]
        return found

    with_fts5 = related(kb)
    assert all(with_fts5.values())
    kb.ingest(rebuild=True, engine="tantivy")
    assert related(KnowledgeBase.open(tmp_path)) == with_fts5


@pytest.mark.slow
def test_killed_between_store_and_index_commit_catches_up(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest(rebuild=True, engine="tantivy")
    note = tmp_path / "notes" / "engineering" / "redis-study.md"
    note.write_text(note.read_text(encoding="utf-8") + "\n新词：独角兽缓存\n", encoding="utf-8")
    (tmp_path / "notes" / "life" / "reading-list.md").unlink()
    died = run(
        "import os, signal\n"
        "from kb.engines import tantivy_index as tantivy\n"
        "tantivy.TantivyIndex.sync = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from kb.knowledge_base import KnowledgeBase\n"
        f"KnowledgeBase.open({str(tmp_path)!r}).ingest()\n"
    )
    assert died.returncode == -9  # killed after the store committed, before the index did
    kb = KnowledgeBase.open(tmp_path)
    assert not kb.engine().is_ready()
    lagging = kb.search("独角兽缓存")
    assert lagging.warning  # answers from what it has, and says the index is behind
    stats = kb.ingest()
    assert stats.changed == 0  # the store had it all; only the index caught up
    kb = KnowledgeBase.open(tmp_path)
    assert kb.engine().is_ready()
    assert [h.path for h in kb.search('"独角兽缓存"').hits] == ["engineering/redis-study.md"]
    assert "life/reading-list.md" not in {h.path for h in kb.search("阅读清单", limit=100).hits}


@pytest.mark.slow
@pytest.mark.parametrize("rebuild", [False, True])
def test_killed_while_the_index_writes_catches_up(tmp_path: Path, rebuild: bool) -> None:
    """Killed halfway through adding documents: tantivy commits all of a batch or none."""
    kb = sample_kb(tmp_path)
    kb.ingest(rebuild=True, engine="tantivy")
    before = answers(KnowledgeBase.open(tmp_path))
    for index, note in enumerate(sorted((tmp_path / "notes").rglob("*.md"))[:12]):
        note.write_text(note.read_text(encoding="utf-8") + f"\n\nkillword{index}\n")
    died = run(
        "import os, signal\n"
        "from kb.engines import tantivy_index as tantivy\n"
        "made = tantivy._document\n"
        "calls = []\n"
        "def dying(*args):\n"
        "    calls.append(1)\n"
        "    if len(calls) == 6:\n"
        "        os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return made(*args)\n"
        "tantivy._document = dying\n"
        "from kb.knowledge_base import KnowledgeBase\n"
        f"KnowledgeBase.open({str(tmp_path)!r}).ingest(rebuild={rebuild})\n"
    )
    assert died.returncode == -9
    kb = KnowledgeBase.open(tmp_path)
    if rebuild:  # the old store and index stand; the killed build left nothing behind
        assert answers(kb) == before
    else:
        assert not kb.engine().is_ready()
        assert kb.search("killword3").warning  # the index says it is behind the store
    kb.ingest()
    kb = KnowledgeBase.open(tmp_path)
    assert kb.engine().is_ready()
    assert len(kb.search("killword3").hits) == 1
    assert not (tmp_path / "index" / "tantivy.new").exists()


@pytest.mark.slow
def test_a_damaged_index_is_named_and_rebuilt(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest(rebuild=True, engine="tantivy")
    (tmp_path / "index" / "tantivy" / "meta.json").write_text("{garbled", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "search", "redis"])
    assert result.exit_code != 0
    assert "tantivy index" in result.stderr and "--rebuild" in result.stderr
    assert "Traceback" not in result.output
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()  # derived data: an index that cannot be read is made again
    assert KnowledgeBase.open(tmp_path).search("redis").hits


@pytest.mark.slow
def test_without_the_package_choosing_it_is_one_line(tmp_path: Path) -> None:
    sample_kb(tmp_path)
    blocked = "import sys\nsys.modules['tantivy'] = None\nfrom kb.cli import main\n"
    result = run(
        blocked
        + f"sys.argv = ['kb', '--kb', {str(tmp_path)!r}, 'ingest', '--rebuild', '--engine', "
        "'tantivy']\nmain()\n"
    )
    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "pip install '.[tantivy]' in kb's folder" in result.stderr
    assert not (tmp_path / "index" / "tantivy").exists()


@pytest.mark.slow
def test_searching_with_fts5_never_imports_tantivy(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest()
    out = run(
        "import sys\n"
        "from kb.knowledge_base import KnowledgeBase\n"
        f"hits = KnowledgeBase.open({str(tmp_path)!r}).search('显存带宽').hits\n"
        "print(len(hits) > 0, 'tantivy' in sys.modules)\n"
    )
    assert out.stdout.strip() == "True False", out.stderr


@pytest.mark.slow
def test_opening_the_index_never_imports_rjieba(tmp_path: Path) -> None:
    kb = sample_kb(tmp_path)
    kb.ingest(rebuild=True, engine="tantivy")
    out = run(
        "import sys\n"
        "from kb.knowledge_base import KnowledgeBase\n"
        f"hits = KnowledgeBase.open({str(tmp_path)!r}).search('显存带宽').hits\n"
        "print(len(hits) > 0, 'rjieba' in sys.modules)\n"
    )
    assert out.stdout.strip() == "True False", out.stderr


def test_a_prefix_past_the_cap_loses_no_note(make_kb: Callable[..., KnowledgeBase]) -> None:
    count = PREFIX_CAP + 30
    notes = {f"n{i:04d}.md": f"# note {i}\n\nwordpfx{i:04d} here\n" for i in range(count)}
    notes["title.md"] = "# wordpfx0001\n\nthe title holds it\n"
    kb = make_kb(notes)
    kb.ingest(rebuild=True, engine="tantivy")
    kb = KnowledgeBase.open(kb.home)
    hits = kb.search("wordpfx*", limit=1000).hits
    assert len(hits) == count + 1
    assert hits[0].path == "title.md"  # a title word outranks body words
    assert {h.path for h in kb.search("wordpfx000*", limit=1000).hits} == {
        *(f"n{i:04d}.md" for i in range(10)),
        "title.md",
    }
