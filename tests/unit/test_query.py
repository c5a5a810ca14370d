"""The query plan: what each query becomes before an engine translates it. One row per
rule, query text in, plan out; both engines get exactly this."""

from __future__ import annotations

import pytest

from kb.query.plan import (
    AllOf,
    AnyOf,
    Bigrams,
    CharPrefix,
    InTitle,
    Prefix,
    Sequence,
    Term,
    Text,
    plan_query,
)
from kb.query.syntax import parse_query

REQUIRED: list[tuple[str, Text | None]] = [
    # Latin words are one token each, folded.
    ("Redis", Term("redis")),
    ("GPU Ｒｅｄｉｓ", AllOf((Term("gpu"), Term("redis")))),
    # An identifier: the whole token, or its parts in order.
    ("FlashAttention", AnyOf((Term("flashattention"), Sequence(("flash", "attention"))))),
    ("flash_attn", AnyOf((Term("flash_attn"), Sequence(("flash", "attn"))))),
    ("FP16", AnyOf((Term("fp16"), Sequence(("fp", "16"))))),
    ("C++", Term("c++")),
    # A Chinese run: its bigrams in order; a lone character is a prefix of them.
    ("显存带宽", Bigrams(("显存", "存带", "带宽"))),
    ("学习", Bigrams(("学习",))),
    ("锁", CharPrefix("锁")),
    # A word mixing scripts needs each of its runs.
    ("GPU的瓶颈", AllOf((Term("gpu"), Bigrams(("的瓶", "瓶颈"))))),
    ("GPU锁", AllOf((Term("gpu"), CharPrefix("锁")))),
    # prefix*: the last run of the word.
    ("roof*", Prefix("roof")),
    ("torch.dist*", Prefix("torch.dist")),
    # Phrases: main-stream tokens in order; a last lone character starts the next bigram.
    ('"arithmetic intensity"', Sequence(("arithmetic", "intensity"))),
    ('"显存带宽"', Sequence(("显存", "存带", "带宽"))),
    ('"显存带"', Sequence(("显存", "存带"))),
    ('"GPU 显"', Sequence(("gpu", "显"), open_end=True)),
    # Boolean structure.
    ("roofline OR 带宽", AnyOf((Term("roofline"), Bigrams(("带宽",))))),
    ("redis -cluster", AllOf((Term("redis"),), excluded=(Term("cluster"),))),
    ("redis NOT cluster lock", AllOf((Term("redis"), Term("lock")), (Term("cluster"),))),
    ("(a OR b) c", AllOf((AnyOf((Term("a"), Term("b"))), Term("c")))),
    # title: only the title streams; words each, or a phrase.
    ("title:roofline", InTitle(AllOf((Term("roofline"),)))),
    ("title:redis 笔记", AllOf((InTitle(AllOf((Term("redis"),))), Bigrams(("笔记",))))),
    ('title:"Redis 学习"', InTitle(Sequence(("redis", "学习")))),
    # Any other filter leaves the query to the engine's own filter evaluation.
    ("tag:gpu", None),
    ("redis tag:gpu", None),
    ("redis OR tag:gpu", None),
]


@pytest.mark.parametrize(("text", "required"), REQUIRED, ids=[row[0] for row in REQUIRED])
def test_required_plan(text: str, required: Text | None) -> None:
    assert plan_query(parse_query(text)).required == required


PREFIX_LAST: list[tuple[str, Text | None]] = [
    # As you type, a last Latin word of 3+ characters is a prefix; shorter or Chinese not.
    ("gpu roof", AllOf((Term("gpu"), Prefix("roof")))),
    ("gpu ro", AllOf((Term("gpu"), Term("ro")))),
    ("roof ", Term("roof")),
    ("显存", Bigrams(("显存",))),
    ("FlashAtt", Prefix("flashatt")),
]


@pytest.mark.parametrize(("text", "required"), PREFIX_LAST, ids=[row[0] for row in PREFIX_LAST])
def test_prefix_last_plan(text: str, required: Text | None) -> None:
    assert plan_query(parse_query(text, prefix_last=True)).required == required


RANKING: list[tuple[str, tuple[Text, ...], tuple[str, ...], str]] = [
    # Every positive term ranks (NOT ones do not); filters other than title: do not rank.
    ("redis -cluster", (Term("redis"),), (), "redis"),
    ("Redis tag:db", (Term("redis"),), (), "redis"),
    ("tag:db", (), (), ""),
    ("title:Roofline gpu", (InTitle(AllOf((Term("roofline"),))), Term("gpu")), (), "roofline gpu"),
    # Every 2+ character piece of a Chinese run, longest first: optional dictionary boosts.
    (
        "学习笔记",
        (Bigrams(("学习", "习笔", "笔记")),),
        ("学习笔记", "学习笔", "习笔记", "学习", "习笔", "笔记"),
        "学习笔记",
    ),
]


@pytest.mark.parametrize(
    ("text", "ranking", "boosts", "title_key"), RANKING, ids=[row[0] for row in RANKING]
)
def test_ranking_boosts_and_title_key(
    text: str, ranking: tuple[Text, ...], boosts: tuple[str, ...], title_key: str
) -> None:
    planned = plan_query(parse_query(text))
    assert (planned.ranking, planned.boosts, planned.title_key) == (ranking, boosts, title_key)
