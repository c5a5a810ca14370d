"""FTS5 answers a query's best notes and the best of those titled with its words from one
pass over the matches (issue 40): the same pages, in the same order, as two searches."""

from __future__ import annotations

import json
import shutil

import pytest

from kb.engines.contract import two_searches
from kb.knowledge_base import KnowledgeBase
from kb.query.plan import InTitle, plan_query
from kb.query.syntax import parse_query
from tests.conftest import REPO, SAMPLE_NOTES

QUERIES = [
    q["query"]
    for q in json.loads((REPO / "benchmarks" / "relevance" / "queries.json").read_text("utf-8"))
    if q["corpus"] == "notes"
]


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    home = tmp_path_factory.mktemp("one-pass")
    shutil.copytree(SAMPLE_NOTES, home / "notes")
    (home / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    kb = KnowledgeBase.open(home)
    kb.ingest()
    return kb


@pytest.mark.parametrize("limit", [3, 30])
def test_one_pass_gives_the_pages_of_two_searches(kb: KnowledgeBase, limit: int) -> None:
    engine = kb.engine()
    assert engine.name == "fts5"
    compared = 0
    for text in [*QUERIES, "GPU OR 显存", "kernel -triton"]:
        planned = plan_query(parse_query(text))
        if planned.required is None:
            continue
        titles = InTitle(planned.required)
        one = engine.search_and_titled(planned, titles, limit)
        two = two_searches(engine, planned, titles, limit)
        pages = [[(h.note_id, round(h.score, 9)) for h in page] for page in one]
        assert pages == [[(h.note_id, round(h.score, 9)) for h in page] for page in two], text
        compared += bool(one[1])
    assert compared >= 5  # queries with titled notes, not only empty second pages
