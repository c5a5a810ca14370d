"""The nearest passages of a query, exact and by signs, on knowledge bases already embedded.

    python benchmarks/bench_nearest.py --kb DIR [DIR ...] [--repeat 3] [--json-out FILE]

Each DIR is a built home with vectors (``kb ingest`` with the semantic extra: for example a
corpus of bench_engines' copies, embedded once). The queries are the relevance benchmark's
(benchmarks/relevance/queries.json), encoded once. For each knowledge base, both ways kb
can find a query's nearest passages, built from the same stored vectors in one run:

- exact: every passage a float32 row, scored with one product (kb's way up to
  ``EXACT_AT_MOST`` passages);
- signs: the packed vectors kept as they are stored, the passages whose signs differ
  least from the query's scored exactly (kb's way beyond: ``candidate_count`` of them).

Reported: the time to read the vectors, the memory they take, the median and p95 of one
query's nearest 30 notes (the ratio to exact in the same run), and how many of the exact
30 nearest notes the signs keep (mean and worst query; first 10 the same and in order).
Goals (issue 26): a query's added cost (encoding plus nearest passages) < 10 ms at 10,000
notes, < 40 ms at 100,000.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from common import BENCH_DIR, SEMANTIC_SET_BY_USER, open_kb, percentile, write_json

QUERIES = BENCH_DIR / "relevance" / "queries.json"
NOTES = 30  # kb.meaning.hybrid.NOTES: the nearest notes a search asks for


def timed(index: Any, queries: list[Any], repeat: int) -> list[float]:
    """Each query's median time over ``repeat`` runs, in ms."""
    times = []
    for query in queries:
        runs = []
        for _ in range(repeat):
            start = time.perf_counter()
            index.nearest(query, NOTES)
            runs.append((time.perf_counter() - start) * 1000)
        times.append(statistics.median(runs))
    return times


def measure(kb_dir: Path, repeat: int) -> dict[str, Any]:
    kb = open_kb(kb_dir)
    from kb.meaning.index import VectorIndex, candidate_count

    meaning = kb.by_meaning.configured()
    if meaning is None:
        raise SystemExit(f"{kb_dir}: meaning is off or the semantic extra is not installed")
    embedder = meaning.embedder()
    store = kb._store
    texts = [q["query"] for q in json.loads(QUERIES.read_text(encoding="utf-8"))]
    encode_ms = []
    queries = []
    for text in texts:
        start = time.perf_counter()
        queries.append(embedder.encode_query(text))
        encode_ms.append((time.perf_counter() - start) * 1000)
    result: dict[str, Any] = {
        "kb": str(kb_dir),
        "notes": store.notes.count(),
        "passages": store.vectors.count(),
        "queries": len(queries),
        "candidates": candidate_count(store.vectors.count()),  # what the signs hand on
        "encode_ms_median": round(statistics.median(encode_ms), 2),
    }
    built = {}
    for way, exact_at_most in (("exact", 2**62), ("signs", 0)):
        start = time.perf_counter()
        index = VectorIndex(store, embedder.dimensions, exact_at_most=exact_at_most)
        seconds = time.perf_counter() - start
        arrays = [index.matrix] if way == "exact" else [index.codes, index.signs]
        megabytes = sum(a.nbytes for a in arrays if a is not None) / 1e6
        times = timed(index, queries, repeat)
        result[way] = {
            "read_s": round(seconds, 2),
            "memory_mb": round(megabytes, 1),
            "median_ms": round(statistics.median(times), 2),
            "p95_ms": round(percentile(times, 95), 2),
        }
        built[way] = [[n.note_id for n in index.nearest(q, NOTES)] for q in queries]
        del index
    kept = [len(set(a) & set(b)) / max(1, len(a)) for a, b in zip(*built.values(), strict=True)]
    result["signs_keep_of_exact_30"] = round(statistics.mean(kept), 3)
    result["signs_worst_query"] = round(min(kept), 3)
    result["first_10_same"] = sum(a[:10] == b[:10] for a, b in zip(*built.values(), strict=True))
    for key in ("read_s", "memory_mb", "median_ms", "p95_ms"):
        result[f"signs/exact {key}"] = round(result["signs"][key] / result["exact"][key], 2)
    return result


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        "| notes (passages) | way | read | memory | median | p95 | ratio to exact (median) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        for way in ("exact", "signs"):
            m = r[way]
            ratio = "" if way == "exact" else f"{r['signs/exact median_ms']:.2f}x"
            lines.append(
                f"| {r['notes']:,} ({r['passages']:,}) | {way} | {m['read_s']} s | "
                f"{m['memory_mb']:,} MB | {m['median_ms']} ms | {m['p95_ms']} ms | {ratio} |"
            )
        lines.append(
            f"| | signs keep | {r['signs_keep_of_exact_30']:.1%} of the exact 30 (worst "
            f"{r['signs_worst_query']:.1%}), first 10 the same for {r['first_10_same']} of "
            f"{r['queries']}; encoding a query {r['encode_ms_median']} ms | | | | | |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kb", type=Path, nargs="+", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    if not SEMANTIC_SET_BY_USER:  # common turns meaning off for the speed benchmarks
        os.environ.pop("KB_SEMANTIC", None)
    results = [measure(kb_dir, args.repeat) for kb_dir in args.kb]
    print(table(results))
    if args.json_out:
        write_json(args.json_out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
