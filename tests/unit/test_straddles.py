"""Straddle marks: the short Chinese pieces a document holds only across rjieba's words."""

from __future__ import annotations

import pytest

from kb.words.documents import SearchDocument
from kb.words.streams import MARKS, STREAMS, document_streams, vocabulary_words
from kb.words.tokenize import Straddles, index_streams, word_boundaries


def _marked(*fields: str) -> set[str]:
    straddles = Straddles()
    for text in fields:
        index_streams(text, straddles=straddles)
    return {mark.removeprefix("~") for mark in straddles.marks()}


# (why, the document's fields, a piece, whether the document holds it only straddled)
CASES = [
    ("across two words", ["这个月换了无限流量套餐"], "限流", True),  # 无限|流量
    ("a whole word", ["当请求太多时服务端需要限流"], "限流", False),
    ("a run of its own", ["限流"], "限流", False),
    ("whole once, straddled once", ["无限流量套餐", "服务端需要限流"], "限流", False),
    ("whole in another field", ["这个月换了无限流量套餐", "限流策略"], "限流", False),
    ("the start of a word's piece", ["用 Dijkstra 求最短路"], "最短", False),  # 求|最|短路
    ("inside one word", ["设计一个搜索引擎"], "索引", True),  # 搜索引擎
    ("the end of a word", ["用自动机匹配"], "动机", False),  # 自动机
    ("a run's edge", ["然后找后继"], "后继", False),
    ("then go on", ["然后继续处理下一位"], "后继", True),  # 然后|继续
    ("database storage", ["用数据库存储数据"], "库存", True),  # 数据库|存储
    ("parameter list", ["接收比参数列表的长度"], "数列", True),  # 参数|列表
    ("three characters", ["接收比参数列表的长度"], "数列表", False),  # ends a word
    ("three across", ["用数据库存储数据"], "据库存", True),
    ("not in the text", ["这个月换了无限流量套餐"], "算法", False),
    ("Latin only", ["rate limiting with a token bucket"], "限流", False),
]


@pytest.mark.parametrize(("why", "fields", "piece", "marked"), CASES, ids=[c[0] for c in CASES])
def test_a_piece_is_marked_when_every_occurrence_straddles(
    why: str, fields: list[str], piece: str, marked: bool
) -> None:
    assert (piece in _marked(*fields)) is marked


@pytest.mark.parametrize(
    ("size", "words", "expected"),
    [
        (4, [("无限", 0, 2), ("流量", 2, 4)], [True, False, True, False, True]),
        # a search-mode sub-word lies inside its word: 分布式 is one word
        (
            5,
            [("分布", 0, 2), ("布式", 1, 3), ("分布式", 0, 3), ("事务", 3, 5)],
            [True, False, False, True, False, True],
        ),
    ],
)
def test_word_boundaries(
    size: int, words: list[tuple[str, int, int]], expected: list[bool]
) -> None:
    assert word_boundaries(size, words) == expected


def test_marks_are_a_stream_of_their_own_and_no_vocabulary() -> None:
    document = SearchDocument("手机套餐", "", "", "这个月换了无限流量套餐", "")
    streams = dict(zip(STREAMS, document_streams(document), strict=True))
    # 手机|套餐, 无限|流量|套餐: 限流量 ends a word, so it is no mark
    assert streams[MARKS].split() == ["~机套", "~量套", "~限流"]
    assert not any(t.startswith("~") for n, s in streams.items() if n != MARKS for t in s.split())
    words = {word for word, _ in vocabulary_words(tuple(streams.values()))}
    assert not any(word.startswith("~") for word in words)
    assert "流量" in words
