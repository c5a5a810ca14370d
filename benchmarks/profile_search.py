"""Where a warm query's time goes, per query class: plan, engine, page rules, proximity,
snippets (issue 40). bench_search.py's queries on one knowledge base, in this process.

    python benchmarks/profile_search.py KB_DIR [--queries 60] [--rounds 3] [--seed 1] [--tree DIR]

The parts are timed by wrapping kb.search.run's own functions (nothing else changes):
plan is reading and planning the query (with the engine's counts the reading asks for),
engine the engine's ranked searches, page rules the ordering of the candidates (the engine
asked which of them hold each word, the title rules, hubs) less proximity, proximity the
nearness of the query's words in the candidates, and snippets building the page's hits
(the rest of the query's time: the hits' rows read and unpacked, snippets, tags).
Each cell is the mean over the class's queries of each query's median over rounds, in ms of
the searching thread's CPU time (SQLite runs in it), which a busy machine disturbs far less
than wall time.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_search import LIMIT, QueryMaker
from common import REPO_ROOT, percentile

PARTS = ("plan", "engine", "page rules", "proximity", "snippets", "total")


class Timer:
    """Sums the seconds spent inside wrapped functions, by part, a part's outermost calls only."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.inside: dict[str, bool] = {}

    def wrap(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if self.inside.get(part):  # called from a function of the same part
                return function(*args, **kwargs)
            self.inside[part] = True
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.inside[part] = False
                self.seconds[part] += time.thread_time() - start

        return timed


def instrument(timer: Timer) -> None:
    import kb.search.run as search

    search.read_query = timer.wrap("plan", search.read_query)
    search.Reading.plan = timer.wrap("plan", search.Reading.plan)
    search._order = timer.wrap("order", search._order)
    search._nearness = timer.wrap("proximity", search._nearness)
    for name in ("make_snippet", "highlight_spans"):
        setattr(search, name, timer.wrap("snippets", getattr(search, name)))


def wrap_engine(kb: Any, timer: Timer) -> None:
    engine = kb.engine()
    for name in ("search", "search_and_titled"):  # the second only where kb has it
        if hasattr(engine, name):
            setattr(engine, name, timer.wrap("engine", getattr(engine, name)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kb_dir", type=Path)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--tree", type=Path, default=REPO_ROOT, help="the kb source to profile (a worktree)"
    )
    args = parser.parse_args()
    os.environ.setdefault("KB_SEMANTIC", "off")
    sys.path.insert(0, str(args.tree))
    from kb.knowledge_base import KnowledgeBase

    timer = Timer()
    instrument(timer)
    kb = KnowledgeBase.open(args.kb_dir)
    wrap_engine(kb, timer)
    queries = QueryMaker(random.Random(args.seed)).queries(args.queries)
    for query in queries:  # untimed: caches
        kb.search(query.text, limit=LIMIT, prefix=query.prefix)
    runs: dict[int, list[dict[str, float]]] = defaultdict(list)
    for _ in range(args.rounds):
        for number, query in enumerate(queries):
            timer.seconds.clear()
            start = time.thread_time()
            kb.search(query.text, limit=LIMIT, prefix=query.prefix)
            total = time.thread_time() - start
            parts = dict(timer.seconds)
            # The snippets' own time is inside the page loop; the loop's rows are the rest.
            parts["page rules"] = parts.pop("order", 0.0) - parts.get("proximity", 0.0)
            parts["total"] = total
            accounted = sum(parts.get(p, 0.0) for p in PARTS[:4])
            parts["snippets"] = max(total - accounted, 0.0)  # the hits' rows, snippets, tags
            runs[number].append(parts)
    by_class: dict[str, list[dict[str, float]]] = defaultdict(list)
    for number, query in enumerate(queries):
        medians = {p: statistics.median(r.get(p, 0.0) for r in runs[number]) for p in PARTS}
        by_class[query.kind].append(medians)
    print(
        f"load average (1 min): {os.getloadavg()[0]:.1f}; {len(queries)} queries, median of "
        f"{args.rounds} rounds each; mean CPU ms per class"
    )
    print("| class | n | " + " | ".join(PARTS) + " |")
    print("|---|---:|" + "---:|" * len(PARTS))
    every = [m for rows in by_class.values() for m in rows]
    for kind, rows in [*sorted(by_class.items()), ("all", every)]:
        cells = " | ".join(f"{statistics.mean(r[p] for r in rows) * 1000:.1f}" for p in PARTS)
        print(f"| {kind} | {len(rows)} | {cells} |")
    engine = [m["engine"] for m in every]
    over = sum(seconds > 0.010 for seconds in engine)
    print(
        f"the engine alone: median {statistics.median(engine) * 1000:.1f} ms, "
        f"p95 {percentile(engine, 95) * 1000:.1f} ms, over 10 ms for {over} of {len(engine)}"
    )
    totals = [m["total"] for m in every]
    print(
        f"warm median {statistics.median(totals) * 1000:.1f} ms, "
        f"p95 {percentile(totals, 95) * 1000:.1f} ms, max {max(totals) * 1000:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
