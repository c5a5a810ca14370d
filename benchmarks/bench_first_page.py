"""Is the first page the same when kb orders only the engine's best candidates?

    python benchmarks/bench_first_page.py --homes DIR ... [--pool 30] [--against 0]
                                          [--limit 20] [--rounds 1] [--generated 60]

kb's search asks the engine for its best ``POOL`` notes (kb.search.run.POOL, 30) and
orders only those by its own rules (every word held, title equal to the query, a title
holding every word, intact runs, hubs below, words as typed). Ordering every note that
matches instead would cost a holders look-up per word over all of them. This script runs
each query twice through ``run_search``, once as kb does and once with the pool set past
the number of notes, and counts the queries whose first ``--limit`` notes differ (as
lists, and as sets).

The queries are the relevance benchmark's (``benchmarks/relevance/queries.json``), on the
knowledge bases given with --homes (e.g. the stores bench_relevance.py keeps under its
--workdir: ``/tmp/kb-relevance/<corpus>-<engine>``); the bench_search.py query classes are
asked of the homes scale_engines.py keeps for generated notes (named ``corpus-*``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from common import open_kb, percentile

QUERIES = Path(__file__).resolve().parent / "relevance" / "queries.json"


def first_page(kb: Any, text: str, prefix: bool, limit: int) -> list[str]:
    return [hit.path for hit in kb.search(text, limit=limit, prefix=prefix).hits]


def compare(home: Path, queries: list[tuple[str, bool]], args: argparse.Namespace) -> dict:
    """First pages with the pool against first pages with ``--against`` (default: every
    note), and the seconds of each, timed in turns after one untimed pass."""
    import kb.search.run as search

    kb = open_kb(home)
    kept_pool = search.POOL
    pages: dict[str, dict[tuple[str, bool], list[str]]] = {"pool": {}, "against": {}}
    seconds: dict[str, list[float]] = {"pool": [], "against": []}
    try:
        total = kb._store.notes.count()
        pools = {"pool": args.pool, "against": args.against or max(total, args.pool) + 1}
        usable = []
        for query in queries:
            try:
                for name, size in pools.items():
                    search.POOL = size
                    pages[name][query] = first_page(kb, *query, args.limit)
            except Exception as error:  # a refused query: the same refusal both ways
                print(f"  {query[0]!r}: {type(error).__name__}: {error}", file=sys.stderr)
                continue
            usable.append(query)
        for _ in range(args.rounds):
            for query in usable:
                for name, size in pools.items():
                    search.POOL = size
                    start = time.perf_counter()
                    first_page(kb, *query, args.limit)
                    seconds[name].append(time.perf_counter() - start)
    finally:
        search.POOL = kept_pool
        kb.close()
    differ_order = [q[0] for q in usable if pages["pool"][q] != pages["against"][q]]
    differ_set = [q[0] for q in usable if set(pages["pool"][q]) != set(pages["against"][q])]
    return {
        "queries": len(usable),
        "same_order": len(usable) - len(differ_order),
        "same_set": len(usable) - len(differ_set),
        "differ_set": differ_set,
        "seconds_pool": sum(seconds["pool"]),
        "seconds_against": sum(seconds["against"]),
        "p95_pool": percentile(seconds["pool"], 95) if usable else 0.0,
        "p95_against": percentile(seconds["against"], 95) if usable else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--homes", type=Path, nargs="+", required=True)
    parser.add_argument("--pool", type=int, default=30)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("--against", type=int, default=0, help="the other pool (0: every note)")
    parser.add_argument("--rounds", type=int, default=1, help="timed passes")
    parser.add_argument("--generated", type=int, default=60, help="bench_search queries")
    args = parser.parse_args(argv)
    relevance = json.loads(QUERIES.read_text(encoding="utf-8"))
    total = {"queries": 0, "same_order": 0, "same_set": 0}
    for home in args.homes:
        name = home.name
        queries = [(q["query"], False) for q in relevance if name.startswith(q["corpus"] + "-")]
        if name.startswith("corpus-"):  # scale_engines.py's homes of generated notes
            from bench_search import QueryMaker

            made = QueryMaker(random.Random(1)).queries(args.generated)
            queries += [(q.text, q.prefix) for q in made]
        if not queries:
            print(f"{home}: no queries for it", file=sys.stderr)
            continue
        found = compare(home, queries, args)
        for key in total:
            total[key] += found[key]
        print(
            f"{name}: {found['same_set']}/{found['queries']} first pages the same as sets, "
            f"{found['same_order']} in order; time with pool {args.pool} / with "
            f"{args.against or 'every note'}: total {found['seconds_pool']:.2f} / "
            f"{found['seconds_against']:.2f} s, p95 {found['p95_pool'] * 1000:.1f} / "
            f"{found['p95_against'] * 1000:.1f} ms"
        )
        for text in found["differ_set"]:
            print(f"    differs: {text!r}")
    if total["queries"]:
        print(
            f"overall: {total['same_set']}/{total['queries']} "
            f"({100 * total['same_set'] / total['queries']:.1f}%) the same as sets, "
            f"{total['same_order']} ({100 * total['same_order'] / total['queries']:.1f}%) in order"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
