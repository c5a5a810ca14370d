"""Related notes with meaning (kb/links/related.py over kb/meaning/neighbours.py), as
``kb links`` shows them: a note near in meaning that shares no word is listed with the two
passages that are close; with meaning off the list is the words' alone; a genre word
(``notes`` in titles of notes that share nothing else) is never a reason. The small
embedder of test_meaning.py stands in for the model."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import run_cli
from tests.integration.test_meaning import CONFIG, FakeEmbedder, fake

__all__ = ["fake"]  # the fixture, shared with test_meaning.py

# garage.md and car-repair.md share no word but their subject (car, repair in the fake
# embedder's concepts); the others are about other things.
NOTES = {
    "garage.md": "# Looking after an automobile\n\nHow to mend a vehicle at home: tyres, oil.\n",
    "car-repair.md": "# Fixing my car\n\nRepair the car engine yourself.\n",
    "fruit.md": "# Apples\n\nAn apple a day. Fruit keeps well in a cold room.\n",
    "orchard.md": "# Orchard\n\nPlanting trees in spring, pruning in winter.\n",
    "redis.md": "# Redis\n\nRedis keeps a skiplist for sorted sets: `zadd`, `ZRANGE`.\n",
    "api.md": "# Retries\n\nAn idempotent endpoint can be retried safely.\n",
}


def related_lines(kb: KnowledgeBase, note: str) -> list[str]:
    result = run_cli(kb, "links", note)
    assert result.exit_code == 0, result.output
    return result.output.split("Related (", 1)[1].splitlines()[1:]


def test_a_note_near_in_meaning_is_related_with_the_two_passages(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    lines = related_lines(kb, "garage.md")
    assert "car-repair.md" in lines[0]
    assert lines[1].strip() == (
        "close in meaning: «How to mend a vehicle at home: tyres, o…»"
        " ~ «Repair the car engine yourself.»"
    )
    found = kb.links.related(kb.find_note("car-repair.md").id)
    assert [r.path for r in found][:1] == ["garage.md"]


def test_with_meaning_off_related_notes_are_the_words_alone(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    monkeypatch.setenv("KB_SEMANTIC", "off")
    off = KnowledgeBase.open(kb.home)
    lines = related_lines(off, "garage.md")
    assert not any("car-repair.md" in line or "close in meaning" in line for line in lines)


def test_notes_not_yet_embedded_are_related_by_their_words(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest(embed=False)
    assert [r.path for r in kb.links.related(kb.find_note("garage.md").id)] == []
    kb.embed()
    assert [r.path for r in kb.links.related(kb.find_note("garage.md").id)][:1] == ["car-repair.md"]


# Three notes titled "... notes" in three folders, sharing nothing else, among others.
GENRE = {
    "db/redis.md": "# Redis notes\n\nSorted sets, skiplists and the ZADD command.\n",
    "ops/docker.md": "# Docker notes\n\nImages, layers and the build cache of containers.\n",
    "lang/rust.md": "# Rust notes\n\nOwnership, borrowing and lifetimes of references.\n",
    "db/zset-limiter.md": "# Rate limiter on a sorted set\n\nZADD and skiplists keep windows.\n",
    **{
        f"misc/topic-{i}.md": f"# Topic {word}\n\nAbout {word} and {word}s, little else.\n"
        for i, word in enumerate(
            ["kayak", "violin", "granite", "saffron", "glacier", "lantern", "meadow",
             "harbour", "compass", "falcon", "quartz"]
        )
    },
}  # fmt: skip


def test_a_genre_word_is_never_a_reason(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb(GENRE)
    kb.ingest()
    lines = related_lines(kb, "db/redis.md")
    listed = " ".join(lines)
    assert "ops/docker.md" not in listed and "lang/rust.md" not in listed
    reasons = listed.replace(str(kb.config.roots[0].path), "")  # paths print whole here
    assert "notes" not in reasons.replace("Redis notes", "")
    assert "db/zset-limiter.md" in lines[0]


def test_beyond_pairing_every_passage_the_nearest_notes_are_paired(
    make_kb: Callable[..., KnowledgeBase],
    fake: Callable[..., FakeEmbedder],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kb.meaning import neighbours

    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    note = kb.find_note("garage.md").id
    everywhere = kb.links.related(note)
    monkeypatch.setattr(neighbours, "PAIRS_EVERYWHERE", 0)  # a large knowledge base's way
    monkeypatch.setattr(neighbours, "PAIRED_SAMPLE_EVERY", 2)
    kb.links.forget()
    assert [(r.path, r.reason) for r in kb.links.related(note)][:1] == [
        (r.path, r.reason) for r in everywhere
    ][:1]
