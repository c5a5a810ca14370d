"""Every engine means the same thing: for each query of the relevance benchmark, FTS5 and
each other engine of the registry (whoosh, tantivy) return the same notes (those holding
every word, and those holding some), on the bundled notes and, when present, a real
Chinese knowledge base."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import REPO, SAMPLE_NOTES, SHARED_CORPORA, engine_params

pytestmark = pytest.mark.slow


OTHERS = engine_params(without=("fts5",))

QUERIES = json.loads(
    (REPO / "benchmarks" / "relevance" / "queries.json").read_text(encoding="utf-8")
)
SOURCES = {"notes": SAMPLE_NOTES, "advanced-java-zh": SHARED_CORPORA / "advanced-java-zh"}


def _kb(home: Path, source: Path, engine: str) -> KnowledgeBase:
    home.mkdir()
    (home / "kb.yaml").write_text(f"roots: [{source}]\nengine: {engine}\n", encoding="utf-8")
    kb = KnowledgeBase.open(home)
    kb.ingest()
    return kb


@pytest.mark.parametrize("engine", OTHERS)
@pytest.mark.parametrize("corpus", sorted(SOURCES))
def test_both_engines_return_the_same_notes(tmp_path: Path, corpus: str, engine: str) -> None:
    source = SOURCES[corpus]
    if not source.is_dir():
        pytest.skip(f"{source} is not here")
    if corpus == "notes":  # a copy: the bundled folder must not get an index beside it
        shutil.copytree(source, tmp_path / "notes")
        source = tmp_path / "notes"
    fts5 = _kb(tmp_path / "fts5", source, "fts5")
    other = _kb(tmp_path / engine, source, engine)
    queries = [q for q in QUERIES if q["corpus"] == corpus]
    assert len(queries) >= 15
    for query in queries:
        answers = []
        for kb in (fts5, other):
            hits = kb.search(query["query"], limit=10_000).hits
            answers.append(({h.path for h in hits if not h.missing}, {h.path for h in hits}))
        assert answers[0] == answers[1], query["query"]
