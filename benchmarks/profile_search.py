"""Where a warm query's time goes, per query class: plan, engine, page rules, proximity,
snippets (issue 40). bench_search.py's queries on one knowledge base, in this process.

    python benchmarks/profile_search.py KB_DIR [--queries 60] [--rounds 3] [--seed 1]

The parts are timed by wrapping kb.query.search's own functions (nothing else changes):
plan is reading and planning the query (with the engine's counts the reading asks for),
engine the engine's ranked searches, page rules the ordering of the candidates (the engine
asked which of them hold each word, the title rules, hubs) less proximity, proximity the
nearness of the query's words in the candidates, and snippets building the page's hits.
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
    """Sums the seconds spent inside wrapped functions, by part, outermost calls only."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.depth = 0

    def wrap(self, part: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.depth += 1
            start = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                self.depth -= 1
                self.seconds[part] += time.thread_time() - start

        return timed


def instrument(timer: Timer) -> None:
    import kb.query.search as search

    search.read_query = timer.wrap("plan", search.read_query)
    search.plan_query = timer.wrap("plan", search.plan_query)
    search._order = timer.wrap("order", search._order)
    search._nearness = timer.wrap("proximity", search._nearness)
    for name in ("make_snippet", "highlight_spans"):
        setattr(search, name, timer.wrap("snippets", getattr(search, name)))


def wrap_engine(kb: Any, timer: Timer) -> None:
    engine = kb.engine()
    engine.search = timer.wrap("engine", engine.search)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kb_dir", type=Path)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("KB_SEMANTIC", "off")
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
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
    totals = [m["total"] for m in every]
    print(
        f"warm median {statistics.median(totals) * 1000:.1f} ms, "
        f"p95 {percentile(totals, 95) * 1000:.1f} ms, max {max(totals) * 1000:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
