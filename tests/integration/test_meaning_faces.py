"""Search by meaning through the faces and the facade's second round: ``kb mcp``'s search
tool (text and structured ``near``), embedding apart from the ingest (the app's worker),
and the query's vector kept per text. The small embedder of test_meaning.py stands in for
the model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from kb.knowledge_base import KnowledgeBase
from tests.integration.test_meaning import CONFIG, NOTES, FakeEmbedder, fake, vectors

__all__ = ["fake"]  # the fixture, shared with test_meaning.py

QUESTION = "how do I repair my car"


async def _search(kb: KnowledgeBase, **arguments: Any) -> tuple[bool, str, Any]:
    from mcp.client import Client

    from kb.mcp.server import build_server

    async with Client(build_server(kb)) as client:
        result = await client.call_tool("search", arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return bool(result.is_error), text, result.structured_content


async def test_mcp_search_shows_the_passage_found_by_meaning(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    pytest.importorskip("mcp")
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    error, text, data = await _search(kb, query=QUESTION)
    assert not error, text
    assert data["hits"][0]["path"] == "garage.md"
    assert data["hits"][0]["near"].startswith("How to mend a vehicle")
    assert "near: ≈ How to mend a vehicle at home" in text
    error, text, data = await _search(kb, query=QUESTION, lexical=True)
    assert not error and data["hits"] == [] and "≈" not in text
    error, text, data = await _search(kb, query="apple")  # the words decide: no near
    assert data["hits"][0]["path"] == "fruit.md" and data["hits"][0]["near"] == ""
    assert "snippet: Apples An apple a day" in text


def test_ingest_without_embedding_then_embed(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    stats = kb.ingest(embed=False)
    assert stats.added == 3 and stats.embedded == 0
    assert vectors(kb) == (0, 3)
    found = kb.search(QUESTION)  # the words work meanwhile; meaning is not there yet
    assert found.hits == [] and not found.meaning
    assert kb.embed(stop=lambda: True).embedded == 0  # asked to stop before a batch
    done = kb.embed()
    assert done.embedded == 3 and vectors(kb)[1] == 0
    found = kb.search(QUESTION)
    assert found.meaning and [h.path for h in found.hits][:1] == ["garage.md"]


def test_the_query_vector_is_kept_per_text(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    asked: list[str] = []

    class Counting(FakeEmbedder):
        def encode_query(self, text: str) -> np.ndarray:
            asked.append(text)
            return super().encode_query(text)

    fake(Counting())
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    asked.clear()  # the ingest asked its questions about nothing (kb.meaning.floor)
    first = [(h.path, h.near) for h in kb.search(QUESTION).hits]
    assert [(h.path, h.near) for h in kb.search(QUESTION).hits] == first
    assert asked == [QUESTION]
    kb.search("how do I fix an apple")
    assert asked == [QUESTION, "how do I fix an apple"]
    fake(Counting(signature="fake/2"))  # another embedder: never its predecessor's vectors
    kb.ingest()
    del asked[2:]  # its questions about nothing again
    kb.search(QUESTION)
    assert asked[-1] == QUESTION and len(asked) == 3


def test_a_large_batch_is_encoded_in_two_threads_with_the_same_vectors(
    fake: Callable[..., FakeEmbedder],
) -> None:
    from kb.meaning import index

    texts = [f"{word} {n}" for n in range(40) for word in ("car", "apple", "mend")]
    embedder = FakeEmbedder()
    alone = embedder.encode_passages(texts)
    calls = embedder.calls
    together = index._encode(embedder, texts)
    assert embedder.calls == calls + 2 and np.array_equal(alone, together)
    few = texts[: index.THREADS_FROM - 1]
    index._encode(embedder, few)
    assert embedder.calls == calls + 3  # a small batch: one call


def test_lsp_workspace_symbols_show_the_notes_nearest_in_meaning_when_the_words_find_none(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    from types import SimpleNamespace

    from lsprotocol import types

    from kb.lsp.outline import workspace_symbols

    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    server: Any = SimpleNamespace(kb=kb)
    found = workspace_symbols(server, types.WorkspaceSymbolParams(query=QUESTION)) or []
    assert [(s.name, s.container_name) for s in found][:1] == [
        ("≈ Looking after an automobile", "garage.md")
    ]
    words = workspace_symbols(server, types.WorkspaceSymbolParams(query="skiplist")) or []
    assert [s.name for s in words] == ["Redis"]  # the words found it: no ≈
