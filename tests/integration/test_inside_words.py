"""A Chinese word found only inside longer words of a note (限流 in 无限流量) weighs less
than the word itself, on every engine, as `kb search` shows it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import engine_params, run_cli

EVERY_ENGINE = engine_params()

TRAFFIC = (
    "---\ntitle: 无限流量套餐怎么选\n---\n\n"
    "这个月换了一个无限流量套餐，无限流量的意思是不限速。"
    "以前的套餐流量不够用，现在无限流量随便用。\n"
)
RATE_LIMITING = (
    "---\ntitle: 网关设计笔记\n---\n\n"
    "网关要做认证、路由和监控。这里记录一些设计上的取舍，包括超时、重试、熔断等等。\n\n"
    "当请求太多时，服务端需要限流，常用的算法有令牌桶和漏桶。\n\n"
    "重试要有退避，熔断要有半开状态，超时要比下游短。监控要看延迟分布而不只是平均值。\n"
)
# 求最短路 is 求|最|短路 to rjieba: 最短 is no word of it, but it starts one, so the note
# on shortest paths holds 最短; 世界之最|短期内 holds it only across two words.
SHORTEST_PATHS = (
    "---\ntitle: 图论笔记\n---\n\n"
    "图论里常见的问题有连通性、拓扑排序和生成树。这里记下几个模板题的做法。\n\n"
    "边权非负时用 Dijkstra 求单源最短路，用堆优化。\n"
)
AMBITION = (
    "---\ntitle: 成为世界之最短期内不现实\n---\n\n"
    "老板说要成为世界之最短期内不现实。成为世界之最短期内做不到，要慢慢来。\n"
)


def _paths(make_kb, engine: str, notes: dict[str, str], query: str) -> list[str]:
    kb = make_kb(notes, f"roots: [notes]\nengine: {engine}\n")
    kb.ingest()
    result = run_cli(kb, "search", "--json", "--", query)
    assert result.exit_code == 0, result.output
    return [hit["path"] for hit in json.loads(result.output)]


@pytest.mark.parametrize("engine", EVERY_ENGINE)
def test_rate_limiting_before_unlimited_traffic(make_kb, engine: str) -> None:
    notes = {"traffic.md": TRAFFIC, "gateway.md": RATE_LIMITING}
    # The traffic note says 限流 four times and in its title, but only inside 无限流量.
    assert _paths(make_kb, engine, notes, "限流") == ["gateway.md", "traffic.md"]


@pytest.mark.parametrize("engine", EVERY_ENGINE)
def test_a_word_that_starts_a_word_is_not_hidden(make_kb, engine: str) -> None:
    notes = {"graphs.md": SHORTEST_PATHS, "ambition.md": AMBITION}
    assert _paths(make_kb, engine, notes, "最短") == ["graphs.md", "ambition.md"]


@pytest.mark.parametrize("engine", EVERY_ENGINE)
def test_a_second_word_keeps_the_rule(make_kb, engine: str) -> None:
    notes = {"traffic.md": TRAFFIC + "\n套餐的算法很复杂。\n", "gateway.md": RATE_LIMITING}
    assert _paths(make_kb, engine, notes, "限流 算法") == ["gateway.md", "traffic.md"]
