"""How a typed word is read, as pure functions over a stand-in vocabulary: the close
spellings of a typo, and a Chinese run or a mixed word split into the words kb knows."""

from __future__ import annotations

from typing import ClassVar

import pytest

from kb.query.splitting import close_spellings, one_edit, split_chinese, split_word


@pytest.mark.parametrize(
    ("word", "close"),
    [
        ("redsi", {"redis", "reds"}),
        ("elasticsaerch", set()),
        ("abcd", set()),
        # 3 and 4 letters: a swap of neighbours only, never another short word one edit off
        ("ebfp", {"ebpf"}),
        ("rdis", set()),
        ("sqll", set()),
        ("slq", {"sql"}),
        ("qsl", {"sql"}),
        ("ab", set()),
        ("form", set()),  # a word the notes hold is meant as typed, though `from` is a swap
        ("fomr", {"form"}),
    ],
)
def test_close_spellings(word: str, close: set[str]) -> None:
    class Vocabulary:
        words: ClassVar[set[str]] = {
            *("redis", "reds", "elasticsearch", "ebpf", "ebp", "sql", "ba", "form", "from")
        }

        def known(self, words):
            return self.words & set(words)

        def latin_of_length(self, low, high, first):
            return [w for w in self.words if low <= len(w) <= high]

    found = set(close_spellings(word, Vocabulary()))  # type: ignore[arg-type]
    if word == "elasticsaerch":  # 9+ letters: two edits allowed
        close = {"elasticsearch"}
    assert found == close


def test_one_edit_covers_deletion_swap_replacement_insertion() -> None:
    variants = one_edit("redis")
    assert {"reis", "rdeis", "redix", "rediss"} <= variants


class _Words:
    def __init__(self, words: set[str]) -> None:
        self.words = words

    def known(self, words):
        return self.words & set(words)


@pytest.mark.parametrize(
    ("run", "known", "expected"),
    [
        ("怎样保证消息队列高可用", {"保证", "消息", "队列", "消息队列", "高可用"},
         ["怎样", "保证", "消息队列", "高可用"]),
        ("为什么要做分库分表", {"分库", "分表", "分库分表"}, ["为什么", "要", "做", "分库分表"]),
        ("魔改显卡", {"显卡"}, ["魔改", "显卡"]),
    ],
)  # fmt: skip
def test_split_chinese(run: str, known: set[str], expected: list[str]) -> None:
    assert split_chinese(run, _Words(known)) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("怎样保证消息队列高可用", ["保证", "消息队列", "高可用"]),
        ("显存带宽是GPU的瓶颈", ["显存", "带宽", "GPU", "瓶颈"]),
        ("B+树", ["B+树"]),
        ("C#编程", ["C#", "编程"]),
        ("Thread.sleep()", ["Thread.sleep"]),
    ],
)
def test_split_word(typed: str, expected: list[str]) -> None:
    known = {"保证", "消息队列", "高可用", "显存", "带宽", "瓶颈", "编程"}
    assert split_word(typed, _Words(known)) == expected  # type: ignore[arg-type]
