"""Completion's name index (kb/notes/name_index.py) answers exactly as the naming rule's
ranking (``rank_notes``) does, on the bundled notes and on a corpus when present: every
prefix of every title and stem, typos, pinyin, width- and case-folded text. And its
pinyin speller spells as ``title_pinyin`` does."""

from __future__ import annotations

from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from kb.names.resolve import NoteName
from kb.notes.editor import name_keys, rank_notes
from kb.notes.name_index import PinyinSpeller, index_names
from kb.notes.naming import title_pinyin
from tests.conftest import REPO

CORPUS = Path("/work/shared/corpora/hugo-site-zh")


@pytest.fixture(scope="module")
def names(tmp_path_factory: pytest.TempPathFactory) -> list:
    import shutil

    home = tmp_path_factory.mktemp("kb")
    shutil.copytree(REPO / "notes", home / "notes")
    shutil.copy(REPO / "kb.yaml", home / "kb.yaml")
    with KnowledgeBase.open(home) as kb:
        kb.ingest()
        return kb.editor.names()


def queries(names: list) -> list[str]:
    found = ["", "a", "的", "xcgs", "xiancun", "redis studdy", "Ｒｅｄｉｓ", "LECTURE", "zz"]
    for note in names:
        for name in (note.title, note.stem):
            found += [name[:cut] for cut in range(1, len(name) + 1)]
            if len(name) > 4:
                found.append(name[1] + name[0] + name[2:])  # two letters swapped
    return list(dict.fromkeys(found))


def pinyin_of(note: NoteName) -> tuple[str, str]:
    return title_pinyin(note.title)


def test_the_index_ranks_as_the_naming_rule_on_the_bundled_notes(names: list) -> None:
    index = index_names(names)
    keys = name_keys(names)
    for typed in queries(names):
        expected = [(r.note.id, r.rule) for r in rank_notes(keys, typed, pinyin_of, 50)]
        assert [(r.note.id, r.rule) for r in index.rank(typed, pinyin_of, 50)] == expected, typed


def test_a_rebuilt_index_reuses_the_folded_names_and_answers_the_same(names: list) -> None:
    folded: dict = {}
    first = index_names(names, folded)
    assert len(folded) == len(names)
    again = index_names(names, folded)
    for typed in ("显存", "lec", "xcgs"):
        assert again.rank(typed, pinyin_of) == first.rank(typed, pinyin_of)


def test_the_speller_spells_as_title_pinyin(names: list) -> None:
    speller = PinyinSpeller()
    titles = [n.title for n in names] + ["Redis 学习笔记", "行为与银行", "重要的重复", "😀显存"]
    assert [speller(t) for t in titles] == [title_pinyin(t) for t in titles]


@pytest.mark.slow
def test_the_index_ranks_as_the_naming_rule_on_a_corpus(tmp_path: Path) -> None:
    if not CORPUS.exists():
        pytest.skip("the shared corpora are not on this machine")
    import shutil

    shutil.copytree(CORPUS, tmp_path / "site", ignore=shutil.ignore_patterns(".git"))
    site = tmp_path / "site"
    if not (site / "kb.yaml").exists():
        KnowledgeBase.init(site)
    with KnowledgeBase.open(site) as kb:
        kb.ingest()
        names = kb.editor.names()
    index = index_names(names)
    keys = name_keys(names)
    speller = PinyinSpeller()
    assert [speller(n.title) for n in names] == [title_pinyin(n.title) for n in names]
    for typed in queries(names)[:3000]:
        expected = [r.note.id for r in rank_notes(keys, typed, pinyin_of, 50)]
        assert [r.note.id for r in index.rank(typed, pinyin_of, 50)] == expected, typed
