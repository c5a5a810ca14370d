"""The bundled notes/ is the demo and the test bed: it must hold every form kb understands."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from kb.parse.frontmatter import split_front_matter
from kb.parse.note import parse_note
from tests.conftest import SAMPLE_NOTES


def _notes() -> dict[str, str]:
    return {
        p.relative_to(SAMPLE_NOTES).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(SAMPLE_NOTES.rglob("*.md"))
    }


@pytest.fixture(scope="module")
def sample_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    home = tmp_path_factory.mktemp("sample")
    (home / "kb.yaml").write_text(f"roots: [{json.dumps(str(SAMPLE_NOTES))}]\n")
    kb = KnowledgeBase.open(home)
    kb.ingest()
    return kb


def test_at_least_forty_notes_ingest_cleanly_and_twice_is_a_no_op(sample_kb) -> None:
    assert sample_kb._store.notes.count() >= 40
    assert sample_kb._store.problems.all() == []
    assert sample_kb.ingest().changed == 0


def test_front_matter_forms() -> None:
    notes = _notes()
    formats = Counter(split_front_matter(text).format for text in notes.values())
    assert formats["toml"] == 1
    assert formats[""] >= 1  # one note with no front matter at all
    raw_tags = [split_front_matter(t).data.get("tags") for t in notes.values()]
    strings = [t for t in raw_tags if isinstance(t, str)]
    assert any("," in t for t in strings), "tags as a comma-separated string"
    assert any("," not in t and " " in t for t in strings), "tags as a space-separated string"
    parsed = {path: parse_note(path, text) for path, text in notes.items()}
    assert any("/" in tag for note in parsed.values() for tag in note.tags)
    assert any(note.name_aliases for note in parsed.values())
    assert any(note.url_aliases for note in parsed.values())
    assert any(note.draft for note in parsed.values())
    dated = [p for p in notes if Path(p).name[:4].isdigit()]
    assert any("date" not in split_front_matter(notes[p]).data for p in dated)
    names = {Path(p).name for p in notes}
    assert {"_index.md", "index.md", "README.md"} <= names
    inline = [
        tag
        for path, note in parsed.items()
        for tag in note.tags
        if f"#{tag}" in split_front_matter(notes[path]).body
    ]
    assert inline, "inline #tags in a body"


def test_every_link_form_is_present() -> None:
    links = [link for path, text in _notes().items() for link in parse_note(path, text).links]
    kinds = Counter(link.kind for link in links)
    for kind in (
        "markdown",
        "wikilink",
        "embed",
        "hugo-ref",
        "reference",
        "url",
        "image",
        "front-matter",
    ):
        assert kinds[kind], f"no {kind} link in notes/"
    markdown = [link.target for link in links if link.kind == "markdown"]
    assert any(t.endswith(".md") for t in markdown)
    assert any(t and "." not in Path(t).name and not t.endswith("/") for t in markdown)
    assert any(t.endswith("/") for t in markdown)
    assert any(t.endswith(".html") for t in markdown)
    assert any(t.startswith("/") for t in markdown)
    assert any("%" in t for t in markdown)
    assert any(link.anchor and not link.anchor.isascii() for link in links)
    assert any(link.kind == "wikilink" and link.text for link in links)
    assert any(link.kind == "wikilink" and link.anchor for link in links)
    assert any(link.kind == "wikilink" and not link.target.isascii() for link in links)
    assert any(
        t.startswith("https://blog.example.com/")
        for t in (link.target for link in links if link.kind == "url")
    )
    assert {link.rel for link in links if link.kind == "front-matter"} >= {
        "related",
        "uses",
        "lecture",
    }


def test_code_look_alikes_are_neither_tags_nor_links() -> None:
    notes = _notes()
    parsed = {path: parse_note(path, text) for path, text in notes.items()}
    assert any("#include" in note.code for note in parsed.values())
    assert any("[[ -f" in note.code for note in parsed.values())
    tags = {tag.lower() for note in parsed.values() for tag in note.tags}
    assert "include" not in tags
    targets = {link.target for note in parsed.values() for link in note.links}
    assert not any(t.startswith("-f") for t in targets)
    assert "name" not in targets  # `[[name]]` in inline code


def test_search_finds_the_demo_notes(sample_kb) -> None:
    titles = [hit.title for hit in sample_kb.search("roof", prefix=True).hits]
    assert any("Roofline" in title for title in titles)
    paths = [hit.path for hit in sample_kb.search("时间窗口").hits]
    assert paths[0] == "engineering/compute-platform-time-window.md"
    assert sample_kb.search("Redis 学习笔记").hits[0].title == "Redis 学习笔记"
