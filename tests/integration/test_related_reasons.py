"""Related notes' reasons a reader can check (issue 23, item 8): no reason rests on a word a
dictionary calls general (两个, 核心, 作为, 讨论, 表示, 时间) or on a piece of a URL (https), on
the bundled notes and on the shared corpora; the words that are shown stay the
distinctive ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import REPO

CORPORA = REPO.parent / "shared" / "corpora"
# The examples: words a reader cannot check as a shared subject.
EXAMPLES = {"两个", "核心", "作为", "讨论", "表示", "时间", "https"}
_CHINESE = re.compile("[\u3400-\u9fff]+")


def general_by_dictionary(word: str) -> bool:
    """What rjieba's dictionary says, asked directly: a frequency of 4,500 or more
    (everyday vocabulary), or a function class (numeral, pronoun, time word …) in use
    (1,000 or more)."""
    import rjieba

    if not (_CHINESE.fullmatch(word) and rjieba.has_word(word)):
        return False
    frequency = rjieba.suggest_freq(word)
    tagged = rjieba.tag(word, hmm=False)
    function = len(tagged) == 1 and tagged[0][1][:1] in set("mqrpcuyeoft")
    return frequency >= 4500 or (function and frequency >= 1000)


def reason_words(reason: str) -> list[str]:
    """The words of a reason's ``terms:`` and ``in both titles:`` parts."""
    words: list[str] = []
    for piece in reason.split(" · "):
        for head in ("terms: ", "in both titles: "):
            if piece.startswith(head):
                words.extend(piece[len(head) :].split(", "))
    return words


def open_kb(folder: Path, home: Path) -> KnowledgeBase:
    (home / "kb.yaml").write_text(f'roots: ["{folder}"]\n', encoding="utf-8")
    kb = KnowledgeBase.open(home)
    kb.ingest()
    return kb


def every_reason_word(kb: KnowledgeBase) -> dict[str, list[str]]:
    """word -> the notes whose related list gives it as a reason."""
    found: dict[str, list[str]] = {}
    for choice in kb.note_choices():
        note = kb.find_note(choice.path)
        for item in kb.links.related(note.id):
            for word in reason_words(item.reason):
                found.setdefault(word, []).append(choice.path)
    return found


def check(found: dict[str, list[str]]) -> None:
    assert found, "some related note has a word as its reason"
    general = {w: notes[:2] for w, notes in found.items() if general_by_dictionary(w)}
    assert general == {}
    assert not EXAMPLES & set(found)


def test_no_reason_rests_on_a_general_word_in_the_bundled_notes(tmp_path: Path) -> None:
    check(every_reason_word(open_kb(REPO / "notes", tmp_path)))


def test_a_note_sharing_only_general_words_is_not_related_by_them(tmp_path: Path) -> None:
    from tests.conftest import write_notes

    body_general = "作为核心问题，我们讨论两个时间表示的问题。作为核心，讨论时间。"
    write_notes(
        tmp_path / "notes",
        {
            "a.md": f"---\ntitle: 甲\n---\n\n{body_general} 鲸鱼迁徙。\n",
            "b.md": f"---\ntitle: 乙\n---\n\n{body_general} 火山喷发。\n",
            "c.md": "---\ntitle: 丙\n---\n\n鲸鱼迁徙的路线，鲸鱼在冬天南下。\n",
            "d.md": "---\ntitle: 丁\n---\n\n火山喷发之后的土壤，火山灰。\n",
            "e.md": "---\ntitle: 戊\n---\n\n访问 https://example.com/a 和 https://example.org/c\n",
            "f.md": "---\ntitle: 己\n---\n\n见 https://example.com/x 与 https://example.net/y\n",
        },
    )
    kb = open_kb(tmp_path / "notes", tmp_path)
    related = {item.path for item in kb.links.related(kb.find_note("a.md").id)}
    assert "c.md" in related  # 鲸鱼 and 迁徙: a subject they share
    assert "b.md" not in related  # 作为, 核心, 讨论, 时间: nothing to check
    reasons = [item.reason for item in kb.links.related(kb.find_note("e.md").id)]
    assert not any(w in {"https", "com", "example"} for r in reasons for w in reason_words(r))


@pytest.mark.slow
@pytest.mark.parametrize("corpus", ["hugo-site-zh", "jekyll-blog-zh", "advanced-java-zh"])
def test_no_reason_rests_on_a_general_word_in_the_shared_corpora(
    corpus: str, tmp_path: Path
) -> None:
    folder = CORPORA / corpus
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    check(every_reason_word(open_kb(folder, tmp_path)))
