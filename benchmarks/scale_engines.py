"""kb's search engines side by side at several sizes, in one run, on the same notes.

    python benchmarks/scale_engines.py [--sizes 10000 100000] [--engines fts5 whoosh tantivy]
                                       [--workdir /tmp/kb-bench] [--homes /tmp/kb-bench-engines]
                                       [--queries 60] [--cold 5] [--seed 1] [--json-out FILE]
                                       [--searches-only]

For each size it reuses (or generates) the corpus the other benchmarks share under
--workdir; each engine gets its own knowledge base under --homes whose kb.yaml points at
that one notes folder (no copies), so every engine reads the same files. Per engine:

- full ingest: `kb ingest --rebuild --engine E --json`, wall time and peak memory;
- no-op re-ingest: `kb ingest --json` again, nothing changed;
- index: the store file plus the engine's folder, in MB;
- cold search: `kb search -n 20 WORD` as a new process, median and max over --cold words,
  beside `python -c pass` of the same run;
- warm search: bench_search.py's query classes (--queries of them, drawn with the seed),
  one untimed pass, then WARM_ROUNDS timed passes through the facade; each query's median,
  then p50, p95 and max over the queries, and the slowest class;
- the engine alone: the same queries read and planned once, ``engine.search(plan, 30)``
  timed, to tell the engine's cost from the rest of a search (tiers, snippets);
- agreement: for each warm query, whether the engine's first 20 notes are FTS5's (as a
  set, and in order).

With --searches-only the homes of an earlier run are reused as they are and only the
searches are measured again (the ingest rows then read 0).

Figures are also shown as ratios to the same run's FTS5 (the machine is shared: compare
ratios between runs, not seconds). Run under `nice`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_search import LIMIT, BenchQuery, QueryMaker, time_query
from common import (
    WARM_ROUNDS,
    BenchError,
    corpus_dir,
    ensure_corpus,
    folder_bytes,
    kb_argv,
    last_line,
    open_kb,
    percentile,
    run_ingest,
    run_measured,
    run_startup,
)

ENGINES = ("fts5", "whoosh", "tantivy")
FOLDERS = {"whoosh": "whoosh", "tantivy": "tantivy"}


@dataclass
class EngineResult:
    engine: str
    ingest_seconds: float = 0.0
    ingest_rss_mb: float = 0.0
    noop_seconds: float = 0.0
    index_mb: float = 0.0
    cold_median: float = 0.0
    cold_max: float = 0.0
    warm_p50: float = 0.0
    warm_p95: float = 0.0
    warm_max: float = 0.0
    engine_p50: float = 0.0
    engine_p95: float = 0.0
    engine_max: float = 0.0
    slowest: str = ""
    per_class_max: dict[str, float] = field(default_factory=dict)
    tops: dict[str, list[str]] = field(default_factory=dict)
    same_set: int = 0
    same_order: int = 0
    compared: int = 0


@dataclass
class SizeResult:
    notes: int
    startup: float
    engines: dict[str, EngineResult] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def home_for(args: argparse.Namespace, notes: int, engine: str) -> Path:
    """A knowledge base for this engine whose only root is the shared corpus's notes."""
    source = corpus_dir(args.workdir, notes, args.seed)
    home = args.homes / f"{source.name}-{engine}"
    home.mkdir(parents=True, exist_ok=True)
    config = f"roots: [{json.dumps(str(source / 'notes'))}]\n"
    path = home / "kb.yaml"
    if not path.is_file() or path.read_text(encoding="utf-8") != config:
        path.write_text(config, encoding="utf-8")
    return home


def index_mb(home: Path, engine: str) -> float:
    index = home / "index"
    store = sum(p.stat().st_size for p in index.glob("kb.sqlite*") if p.is_file())
    folder = FOLDERS.get(engine)
    extra = folder_bytes(index / folder) if folder and (index / folder).is_dir() else 0
    return (store + extra) / 1e6


def measure_ingest(home: Path, engine: str, er: EngineResult) -> None:
    print(f"  {engine}: full ingest ...", flush=True)
    run, _ = run_ingest(home, "--rebuild", "--engine", engine, "--json")
    er.ingest_seconds, er.ingest_rss_mb = run.seconds, run.peak_rss_mb
    run, counts = run_ingest(home, "--json")
    er.noop_seconds = run.seconds
    if counts and counts.get("added", 0) + counts.get("updated", 0):
        raise BenchError(f"{engine}: the no-op re-ingest wrote notes: {counts}")
    er.index_mb = index_mb(home, engine)


def measure_cold(home: Path, words: list[str], er: EngineResult, warnings: list[str]) -> None:
    run_measured(kb_argv(home, "search", "--", words[0]))  # untimed: bytecode, disk cache
    seconds = []
    for word in words:
        run = run_measured(kb_argv(home, "search", "-n", str(LIMIT), "--", word))
        if run.exit_code not in (0, 1):  # 1: no note matches
            warnings.append(f"{er.engine}: kb search {word!r}: {last_line(run.stderr)}")
        seconds.append(run.seconds)
    er.cold_median, er.cold_max = statistics.median(seconds), max(seconds)


def measure_warm(home: Path, queries: list[BenchQuery], er: EngineResult) -> None:
    from kb.errors import KbError

    kb = open_kb(home)
    try:
        usable = []
        for query in queries:  # untimed: opens the store and index, fills the caches
            try:
                _, results = time_query(kb, query)
            except KbError:
                continue
            usable.append(query)
            er.tops[f"{query.text}\0{query.prefix}"] = [h.path for h in results.hits]
        seconds: dict[BenchQuery, list[float]] = {q: [] for q in usable}
        for _ in range(WARM_ROUNDS):
            for query in usable:
                seconds[query].append(time_query(kb, query)[0])
        engine_only = engine_seconds(kb, usable)
    finally:
        kb.close()
    er.engine_p50, er.engine_p95 = percentile(engine_only, 50), percentile(engine_only, 95)
    er.engine_max = max(engine_only)
    medians = {q: statistics.median(s) for q, s in seconds.items()}
    values = list(medians.values())
    er.warm_p50, er.warm_p95 = percentile(values, 50), percentile(values, 95)
    er.warm_max = max(values)
    worst = max(medians, key=lambda q: medians[q])
    er.slowest = f"{worst.kind}: {worst.text!r}" + (" (typed)" if worst.prefix else "")
    for query, value in medians.items():
        er.per_class_max[query.kind] = max(er.per_class_max.get(query.kind, 0.0), value)


def engine_seconds(kb: Any, queries: list[BenchQuery]) -> list[float]:
    """The engine's part alone: each query read and planned once, then
    ``engine.search(plan, POOL)`` timed (median of WARM_ROUNDS); no tiers, no snippets."""
    from kb.query.reading import FEW_MATCHES, read_query
    from kb.query.syntax import parse_query
    from kb.search.run import POOL

    engine = kb.engine()
    store = kb._store
    plans = []
    for query in queries:
        parsed = parse_query(query.text, prefix_last=query.prefix)
        reading = read_query(
            parsed, store.vocabulary, lambda t: engine.count(t, FEW_MATCHES), kb.glossary()
        )
        plans.append(reading.plan(parsed))
    for planned in plans:  # untimed
        engine.search(planned, POOL)
    medians = []
    for planned in plans:
        times = []
        for _ in range(WARM_ROUNDS):
            start = time.perf_counter()
            engine.search(planned, POOL)
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
    return medians


def bench_size(args: argparse.Namespace, notes: int) -> SizeResult:
    source = corpus_dir(args.workdir, notes, args.seed)
    ensure_corpus(source, notes, args.seed)
    rng = random.Random(args.seed)
    maker = QueryMaker(rng)
    queries = maker.queries(args.queries)
    words = maker.cold_words(args.cold)
    result = SizeResult(notes, run_startup())
    for engine in args.engines:
        home = home_for(args, notes, engine)
        er = EngineResult(engine)
        result.engines[engine] = er
        if args.searches_only:
            run_ingest(home, "--json")  # built already: nothing to do
            er.index_mb = index_mb(home, engine)
        else:
            measure_ingest(home, engine, er)
        print(f"  {engine}: cold and warm searches ...", flush=True)
        measure_cold(home, words, er, result.warnings)
        measure_warm(home, queries, er)
    base = result.engines.get("fts5")
    if base is not None:
        for er in result.engines.values():
            for key, top in er.tops.items():
                if key in base.tops:
                    er.compared += 1
                    er.same_set += set(top) == set(base.tops[key])
                    er.same_order += top == base.tops[key]
    return result


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


ROWS = (
    ("full ingest", "ingest_seconds", ms),
    ("full ingest peak memory", "ingest_rss_mb", lambda v: f"{v:.0f} MB"),
    ("no-op re-ingest", "noop_seconds", ms),
    ("index (store + engine folder)", "index_mb", lambda v: f"{v:.1f} MB"),
    ("cold `kb search` median", "cold_median", ms),
    ("cold `kb search` max", "cold_max", ms),
    ("warm search p50", "warm_p50", ms),
    ("warm search p95", "warm_p95", ms),
    ("warm search max", "warm_max", ms),
    ("engine.search alone p50", "engine_p50", ms),
    ("engine.search alone p95", "engine_p95", ms),
    ("engine.search alone max", "engine_max", ms),
)


def format_table(result: SizeResult) -> str:
    engines = list(result.engines)
    head = f"| {result.notes:,} notes | " + " | ".join(engines)
    head += " | " + " | ".join(f"{e}/fts5" for e in engines if e != "fts5") + " |"
    lines = [head, "|" + "---|" * (1 + len(engines) + len(engines) - 1)]
    base = result.engines.get("fts5")
    for name, key, show in ROWS:
        values = [getattr(result.engines[e], key) for e in engines]
        ratios = [
            f"{getattr(result.engines[e], key) / getattr(base, key):.2f}x"
            if base is not None and getattr(base, key)
            else "-"
            for e in engines
            if e != "fts5"
        ]
        lines.append(
            f"| {name} | " + " | ".join(show(v) for v in values) + " | " + " | ".join(ratios) + " |"
        )
    lines.append(
        f"| `python -c pass` (baseline) | {ms(result.startup)} |" + " |" * (len(engines) * 2 - 2)
    )
    lines.append("")
    for e in engines:
        er = result.engines[e]
        same = (
            f"; first {LIMIT} same as FTS5: {er.same_set}/{er.compared} as sets, "
            f"{er.same_order} in order"
            if e != "fts5"
            else ""
        )
        lines.append(f"- {e}: slowest query {er.slowest} ({ms(er.warm_max)}){same}")
    lines.extend(f"- warning: {w}" for w in result.warnings)
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kb-bench"))
    parser.add_argument("--homes", type=Path, default=Path("/tmp/kb-bench-engines"))
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--cold", type=int, default=5, help="cold `kb search` words")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json-out", type=Path)
    parser.add_argument(
        "--searches-only",
        action="store_true",
        help="the homes are built: measure the searches again, not the ingests (rows 0)",
    )
    args = parser.parse_args(argv)
    if "fts5" in args.engines:  # the baseline first
        args.engines = ["fts5", *(e for e in args.engines if e != "fts5")]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = []
    started = time.perf_counter()
    try:
        for notes in args.sizes:
            print(f"{notes:,} notes:", flush=True)
            results.append(bench_size(args, notes))
            print(format_table(results[-1]), flush=True)
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.json_out:
        data = [asdict(r) for r in results]
        for size in data:
            for er in size["engines"].values():
                er.pop("tops")
        args.json_out.write_text(json.dumps(data, indent=2), encoding="utf-8")
    print(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
