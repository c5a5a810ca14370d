"""Real note folders written by other people (../shared/corpora), when they are present.

Users who clone kb don't have them, so every test here skips without them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from kb.words.documents import path_words
from tests.conftest import SHARED_CORPORA

pytestmark = pytest.mark.skipif(not SHARED_CORPORA.is_dir(), reason="no ../shared/corpora")

CORPORA = sorted(p.name for p in SHARED_CORPORA.iterdir()) if SHARED_CORPORA.is_dir() else []


def corpus_kb(tmp_path: Path, name: str) -> KnowledgeBase:
    root = SHARED_CORPORA / name
    (tmp_path / "kb.yaml").write_text(f"roots: [{json.dumps(str(root))}]\n", encoding="utf-8")
    return KnowledgeBase.open(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", CORPORA)
def test_every_markdown_file_is_a_note_or_a_warning(tmp_path: Path, name: str) -> None:
    kb = corpus_kb(tmp_path, name)
    stats = kb.ingest()
    files = {
        p.relative_to(SHARED_CORPORA / name).as_posix()
        for p in (SHARED_CORPORA / name).rglob("*")
        if p.suffix.lower() in (".md", ".markdown") and p.is_file()
    }
    notes = {row.path for row in kb._store.notes.listing()}
    warned = {path for path, _ in stats.problems}
    assert files <= notes | warned
    assert stats.added == len(notes)
    assert kb.ingest().changed == 0


def test_gbk_samples_decode_with_warnings(tmp_path: Path) -> None:
    kb = corpus_kb(tmp_path, "gbk-samples")
    stats = kb.ingest()
    assert stats.added == 3
    assert {p.kind for _, p in stats.problems} == {"encoding"}
    assert "multer/README-zh-cn.md" in {hit.path for hit in kb.search("上传文件").hits}


CHINESE_WORDS = [
    "分布式锁",
    "消息队列",
    "哨兵",
    "缓存雪崩",
    "主从复制",
    "幂等",
    "限流",
    "熔断",
    "服务降级",
    "分库分表",
    "读写分离",
    "事务",
    "高可用",
    "持久化",
    "数据一致性",
    "过期策略",
    "锁",
    "集群",
]
ENGLISH_WORDS = [
    "kafka",
    "zookeeper",
    "dubbo",
    "sentinel",
    "hystrix",
    "RabbitMQ",
    "elasticsearch",
    "mysql",
    "Redis",
]


def _contains(word: str, fields_text: str) -> bool:
    """Chinese: anywhere. English: as a word or as a part of an identifier (sentinelMaster,
    sentinel1-ip, RedisSentinel), as kb's tokenizer splits them."""
    if re.fullmatch(r"[A-Za-z]+", word):
        alone = rf"(?<![A-Za-z])(?i:{word})(?![a-z])"
        camel_part = rf"(?<=[a-z0-9])(?=[A-Z])(?i:{word})(?![a-z])"
        return re.search(f"{alone}|{camel_part}", fields_text) is not None
    return word in fields_text


def _searchable_text(kb: KnowledgeBase, note: dict) -> str:
    store = kb._store
    parts = [note.title, note.text, note.code]
    parts += store.terms.of_note("tags", note.id) + store.terms.of_note("series", note.id)
    parts += store.terms.of_note("categories", note.id)
    parts += [r.alias for r in store.notes.aliases(note.id) if r.kind == "name"]
    parts += [r.text for r in store.notes.headings(note.id)]
    parts += [path_words(note.rel)]  # file and folder names are searched too
    return "\n".join(parts)


@pytest.fixture(scope="module")
def java_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    kb = corpus_kb(tmp_path_factory.mktemp("java"), "advanced-java-zh")
    kb.ingest()
    return kb


@pytest.mark.parametrize("word", CHINESE_WORDS + ENGLISH_WORDS)
def test_advanced_java_every_word_found_exactly_where_it_is(java_kb, word: str) -> None:
    notes = [java_kb._store.notes.by_path(row.path) for row in java_kb._store.notes.listing()]
    expected = {n.path for n in notes if _contains(word, _searchable_text(java_kb, n))}
    assert expected, f"pick another word: {word} is in no note"
    # --exact: the word as written (its glossary partners and inflections would add more);
    # a Chinese run in quotes, as one phrase (unquoted, it is split into its words).
    query = word if word.isascii() else f'"{word}"'
    found = {hit.path for hit in java_kb.search(query, limit=1000, exact=True).hits}
    assert found == expected


@pytest.mark.parametrize("run", ["过期策略", "数据一致性", "服务降级"])
def test_advanced_java_a_run_found_intact_ranks_first(java_kb, run: str) -> None:
    """Unquoted, a run is split into words found anywhere, but the notes holding it
    intact come first."""
    hits = java_kb.search(run, limit=1000).hits
    intact = {hit.path for hit in java_kb.search(f'"{run}"', limit=1000, exact=True).hits}
    assert intact
    assert {hit.path for hit in hits[: len(intact)]} == intact
