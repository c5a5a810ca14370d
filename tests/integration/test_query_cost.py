"""A query's cost is bounded by its terms: repeats are folded, the different terms capped."""

from __future__ import annotations

import random
import string
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.engines.whoosh import available as whoosh_available
from kb.query.syntax import (
    EXPANDING_COST,
    MAX_TERMS,
    And,
    Field,
    Not,
    Or,
    Phrase,
    QuerySyntaxError,
    Word,
    parse_query,
    query_cost,
)

ENGINES = [
    "fts5",
    pytest.param(
        "whoosh",
        marks=pytest.mark.skipif(not whoosh_available(), reason="whoosh-reloaded is not installed"),
    ),
]


@pytest.mark.parametrize(
    ("query", "tree"),
    [
        ("gpu gpu", Word("gpu")),
        ("a b a b a", And((Word("a"), Word("b")))),
        ("GPU gpu Gpu", Word("GPU")),  # one word in any case
        ("a OR a OR b", Or((Word("a"), Word("b")))),
        ("(a b) a", And((Word("a"), Word("b")))),  # a nested AND joins its parent
        ("a OR (b OR a)", Or((Word("a"), Word("b")))),
        ("roof* roof*", Word("roof", prefix=True)),
        ('"显存 带宽" "显存 带宽"', Phrase("显存 带宽")),
        ("显存 -cluster -cluster", And((Word("显存"), Not(Word("cluster"))))),
        ("tag:gpu tag:gpu redis", And((Field("tag", "gpu"), Word("redis")))),
        (" ".join(["显存"] * 166), Word("显存")),
        # Not the same search, so both stay:
        ("roof roof*", And((Word("roof"), Word("roof", prefix=True)))),
        # FlashAttention also matches by its parts; flashattention has none.
        ("FlashAttention flashattention", And((Word("FlashAttention"), Word("flashattention")))),
        ('"显存 带宽" "显存带宽"', And((Phrase("显存 带宽"), Phrase("显存带宽")))),
        (
            "a (b OR c) (c OR b)",
            And((Word("a"), Or((Word("b"), Word("c"))), Or((Word("c"), Word("b"))))),
        ),
    ],
)
def test_repeated_terms_are_searched_once(query: str, tree: object) -> None:
    assert parse_query(query).root == tree


@pytest.mark.parametrize(
    ("query", "cost"),
    [
        ("a b a", 2),
        ("redis -cluster tag:db", 3),
        ("roof*", EXPANDING_COST),  # a prefix expands over the vocabulary
        ("锁 树", 2 * EXPANDING_COST),  # so does a lone Chinese character
        ('"GPU 的"', EXPANDING_COST),  # the phrase's last character starts bigrams
        ('"的 GPU"', 1),
        (" ".join(string.ascii_lowercase * 9)[:499], 26),
    ],
    ids=lambda value: value[:24] if isinstance(value, str) else str(value),
)
def test_query_cost_counts_different_terms(query: str, cost: int) -> None:
    assert query_cost(parse_query(query).root) == cost


def test_too_many_terms_is_refused_naming_the_cap() -> None:
    words = " ".join(f"w{i}" for i in range(MAX_TERMS + 1))
    parse_query(" ".join(f"w{i}" for i in range(MAX_TERMS)))  # at the cap: fine
    with pytest.raises(QuerySyntaxError, match=rf"\({MAX_TERMS + 1},.*at most {MAX_TERMS} "):
        parse_query(words)
    prefixes = " ".join(f"p{i}*" for i in range(MAX_TERMS // EXPANDING_COST + 1))
    with pytest.raises(QuerySyntaxError, match="prefix"):
        parse_query(prefixes)


def test_cli_refuses_too_many_terms_with_exit_2(make_kb, tmp_path: Path) -> None:
    make_kb({"a.md": "# A\n\nw1 w2\n"}).ingest()
    words = " ".join(f"w{i}" for i in range(MAX_TERMS + 1))
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "search", words])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and f"at most {MAX_TERMS} are allowed" in lines[0]
    assert "Traceback" not in result.output


def _notes(count: int) -> dict[str, str]:
    """Notes dense in the words the worst queries use: every letter, 显存, common chars."""
    rng = random.Random(9)
    words = [*string.ascii_lowercase, "显存", "带宽", "缓存", "gpu", "redis", "kernel"]
    words += [a + b for a in "trcm" for b in "aeio"]
    notes = {}
    for n in range(count):
        body = " ".join(rng.choice(words) for _ in range(400))
        notes[f"n{n:03d}.md"] = f"# note {n}\n\n{body}\n\n显存带宽与缓存存储的存取。\n"
    return notes


WORST = {
    "one letter x250": " ".join((string.ascii_lowercase * 10)[:250]),
    "a x250": " ".join(["a"] * 250),
    "显存 x166": " ".join(["显存"] * 166),
    "letters OR": " OR ".join(string.ascii_lowercase),
    "prefixes": " ".join(f"{a}{b}*" for a in "trcm" for b in "ae"),
    "lone characters OR": " OR ".join("显存带宽缓储取与"),
    "deep OR": "(a OR (b OR (c OR (d OR (e OR (f OR (g OR (h OR (i OR (j OR k))))))))))",
}


# Each takes under 0.4 s on either engine here (before the fix: 1.1 to 3 s on FTS5, 22 to
# 76 s on whoosh); the bound leaves room for a loaded machine.
SLOW_SECONDS = 2.0


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_worst_queries_finish_quickly(make_kb, engine: str) -> None:
    kb = make_kb(_notes(300), config=f"roots: [notes]\nengine: {engine}\n")
    kb.ingest()
    kb.search("warm")
    slow = {}
    for name, query in WORST.items():
        start = time.perf_counter()
        kb.search(query)
        seconds = time.perf_counter() - start
        if seconds > SLOW_SECONDS:
            slow[name] = round(seconds, 2)
    assert not slow


def test_snippet_of_a_note_full_of_matches_is_linear() -> None:
    from kb.search.snippets import make_snippet, term_patterns

    text = "gpu redis " * 20_000 + "kernel gpu redis"
    start = time.perf_counter()
    snippet, spans = make_snippet(
        text, term_patterns(parse_query("gpu redis kernel").positive_terms())
    )
    assert time.perf_counter() - start < 1.0
    assert "kernel" in snippet  # the window with all three terms
    assert len(spans) >= 3
