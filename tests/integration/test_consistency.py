"""Random edits, moves and deletions, ingested one after another: after every ingest the
FTS5 index must hold exactly the tokens of the stored notes, and every link must point
where a full resolution from scratch would point it."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from kb.engines.fts5 import COLUMNS, MARKS_TABLE, TABLE
from kb.knowledge_base import KnowledgeBase
from kb.names.resolve import LinkIndex
from kb.words.streams import document_streams

FOLDERS = ["", "a", "a/b", "c"]
STEMS = ["foo", "bar", "baz", "index", "README", "qux"]
TITLES = ["Foo", "Bar Title", "Baz", "Redis 学习笔记", "FlashAttention"]
TAGS = ["gpu", "GPU", "cache", "cs336/lec", "redis", "PyTorch", "pytorch"]
SITE = "https://b.example.com"


def random_note(rnd: random.Random) -> str:
    front = []
    if rnd.random() < 0.5:
        front.append(f"title: {rnd.choice(TITLES)}")
    if rnd.random() < 0.5:
        front.append(f"tags: [{', '.join(rnd.sample(TAGS, rnd.randint(1, 3)))}]")
    if rnd.random() < 0.3:
        front.append(f"aliases: [{rnd.choice(TITLES)}]")
    if rnd.random() < 0.3:
        front.append(f"related: [{rnd.choice(STEMS)}]")
    if rnd.random() < 0.2:
        front.append(f"slug: {rnd.choice(STEMS)}")
    if rnd.random() < 0.2:
        front.append(f"aliases: [/{rnd.choice(FOLDERS)}/{rnd.choice(STEMS)}/]")
    body = []
    for _ in range(rnd.randint(0, 4)):
        stem, folder = rnd.choice(STEMS), rnd.choice(FOLDERS)
        where = f"{folder}/" if folder else ""
        body.append(
            rnd.choice(
                [
                    f"[[{stem}]]",
                    f"[[{rnd.choice(TITLES)}#{rnd.choice(['h1', 'sec-two'])}]]",
                    f"[l]({'../' if rnd.random() < 0.3 else ''}{where}{stem}.md)",
                    f"[l](/{where}{stem}/)",
                    f"[l]({SITE}/{where}{stem}/)",
                    f"[[{where}{stem}]]",
                    f"## {rnd.choice(['H1', 'Sec Two', 'other'])}",
                    f"#{rnd.choice(TAGS)} text {rnd.choice(TITLES)}",
                ]
            )
        )
    head = "---\n" + "\n".join(front) + "\n---\n" if front else ""
    return head + "\n\n".join(body) + "\n"


def assert_consistent(kb: KnowledgeBase) -> None:
    store = kb._store
    conn = store.conn
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_i USING fts5vocab(main, {TABLE}, 'instance')"
    )
    actual = Counter(
        (term, doc, col)
        for term, doc, col, _ in conn.execute("SELECT term, doc, col, offset FROM temp.v_i")
    )
    expected: Counter[tuple[str, int, str]] = Counter()
    marks_expected: Counter[tuple[str, int]] = Counter()
    for note_id, document in store.notes.search_documents(store.notes.all_ids()):
        *streams, marks = document_streams(document)
        for column, stream in zip(COLUMNS, streams, strict=True):
            for term in stream.split():
                expected[(term, note_id, column)] += 1
        marks_expected.update((term, note_id) for term in marks.split())
    assert actual == expected, "the FTS5 index disagrees with the store"
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_m "
        f"USING fts5vocab(main, {MARKS_TABLE}, 'instance')"
    )
    marks_actual = Counter(
        (term, doc) for term, doc, _, _ in conn.execute("SELECT * FROM temp.v_m")
    )
    assert marks_actual == marks_expected, "the FTS5 marks disagree with the store"
    index = LinkIndex.build(store.notes.names(), SITE, store.notes.heading_slugs)
    stored = {
        row[0]: (row[1], row[2]) for row in conn.execute("SELECT id, target_id, status FROM links")
    }
    for link in store.links.to_resolve(None):
        fresh = index.resolve(link)
        assert stored[link.id] == (fresh.target_id, fresh.status), (
            f"link {link.target!r} ({link.kind}) from note {link.source_id} is stale"
        )


@pytest.mark.parametrize("seed", range(12))
def test_incremental_ingest_matches_a_fresh_one(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    notes = tmp_path / "notes"
    notes.mkdir()
    (tmp_path / "kb.yaml").write_text(f"roots: [notes]\nsite_url: {SITE}\n", encoding="utf-8")
    (notes / "seed.md").write_text("# seed\n", encoding="utf-8")

    def files() -> list[Path]:
        return sorted(p for p in notes.rglob("*.md") if p.name != "seed.md")

    for step in range(40):
        existing = files()
        choice = rnd.random()
        if choice < 0.4 or not existing:
            path = notes / rnd.choice(FOLDERS) / f"{rnd.choice(STEMS)}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(random_note(rnd), encoding="utf-8")
        elif choice < 0.6:
            rnd.choice(existing).unlink()
        elif choice < 0.8:
            target = notes / rnd.choice(FOLDERS) / f"{rnd.choice(STEMS)}.md"
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                rnd.choice(existing).rename(target)
        else:
            with rnd.choice(existing).open("a", encoding="utf-8") as handle:
                handle.write(rnd.choice(["\nmore\n", "\n## Sec Two\n", "\n[[foo]]\n"]))
        if rnd.random() < 0.6 or step == 39:
            with KnowledgeBase.open(tmp_path) as kb:
                kb.ingest()
                assert_consistent(kb)
