"""Compare kb's two search engines, FTS5 and whoosh, on the same corpus in the same run.

    python benchmarks/bench_engines.py [--sizes 1000 10000] [--workdir /tmp/kb-bench]
                                       [--engines-workdir /tmp/kb-bench-engines]
                                       [--repeat 3] [--queries 60] [--seed 1] [--json-out FILE]

For each size it reuses (or generates) the corpus the other benchmarks share under --workdir,
copies its notes into one folder per engine under --engines-workdir (so switching engines
never touches the shared indexes), then measures full and one-note ingests, cold `kb search`
processes, warm in-process queries and the index size for each engine, and checks that both
engines find the same notes. Each figure is shown for FTS5, for whoosh and as whoosh/FTS5:
the ratio is what to compare between runs on a shared machine.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_search import (
    LIMIT,
    SLOWEST,
    BenchQuery,
    QueryMaker,
    add_queries,
    engine_seconds,
    json_hits,
    run_checked,
    time_query,
)
from common import (
    DIRTY_MARKER,
    GOAL_NOTES,
    WARM_ROUNDS,
    BenchError,
    Run,
    add_repeat,
    bench_parser,
    check_kb_runs,
    corpus_dir,
    editing,
    ensure_corpus,
    expect,
    folder_bytes,
    header_lines,
    ingest_edited,
    kb_argv,
    last_line,
    not_judged,
    not_restored,
    note_files,
    notes_to_edit,
    open_kb,
    parse_bench_args,
    percentile,
    reported,
    run_child,
    run_ingest,
    run_sizes,
    run_startup,
    show_seconds,
    status,
    table_heading,
    tiny_kb,
    warning_lines,
)

ENGINES = ("fts5", "whoosh")

# Goals for whoosh, judged up to GOAL_NOTES notes like the other scripts' goals.
GOAL_COLD_SECONDS = 0.300
GOAL_WARM_P95_SECONDS = 0.100
GOAL_SLOW_SECONDS = 1.0  # no warm query may take longer than this, in any timed round

COMPARE_LIMIT = 1000  # kb.search(limit=...) for the same-paths check
LONG_RUN_SECONDS = 20 * 60  # a size taking longer than this is called out
SOURCE_WAIT_SECONDS = 120  # how long to wait for another benchmark editing the shared corpus

STARTED = time.perf_counter()


def progress(message: str) -> None:
    print(f"[{time.perf_counter() - STARTED:6.0f} s] {message}", flush=True)


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass
class IngestRun:
    wall_seconds: float  # the whole process
    kb_seconds: float | None  # what kb reports (the store's work; not the whoosh sync)
    peak_rss_mb: float
    note: str = ""  # the note edited before this run, if any
    counts: dict | None = None


@dataclass
class ColdRun:
    word: str
    seconds: float
    hits: int | None
    peak_rss_mb: float


@dataclass
class WarmTiming:
    kind: str
    text: str
    prefix: bool
    seconds: float  # median of WARM_ROUNDS
    max_seconds: float  # slowest of WARM_ROUNDS
    hits: int
    engine_seconds: float | None = None  # the engine alone, for the slowest queries


@dataclass
class EngineResult:
    engine: str
    kb_dir: str
    full: IngestRun | None = None
    one_note: list[IngestRun] = field(default_factory=list)
    cold: list[ColdRun] = field(default_factory=list)
    timings: list[WarmTiming] = field(default_factory=list)
    first_query_seconds: float | None = None  # the first search after KnowledgeBase.open
    sqlite_bytes: int = 0  # right after the full ingest
    whoosh_bytes: int = 0
    sqlite_bytes_after_edits: int = 0
    whoosh_bytes_after_edits: int = 0
    whoosh_segments_after_edits: int = 0


@dataclass
class Difference:
    kind: str
    text: str
    prefix: bool
    fts5_count: int
    whoosh_count: int
    only_fts5: list[str]  # a few examples
    only_whoosh: list[str]
    only_fts5_count: int
    only_whoosh_count: int
    full_sets: bool  # compared all matches through engine.search (the limit was reached)


@dataclass
class Row:
    key: str  # stable id for scripts comparing saved results
    name: str
    fts5: float | None
    whoosh: float | None
    unit: str = "s"  # "s", "MB" or "count"
    goal: str = ""  # for whoosh
    passed: bool | None = None

    @property
    def ratio(self) -> float | None:
        if self.fts5 and self.whoosh is not None and self.unit != "count":
            return self.whoosh / self.fts5
        return None


@dataclass
class SizeResult:
    notes: int
    notes_bytes: int = 0
    startup_seconds: list[float] = field(default_factory=list)
    cold_words: list[str] = field(default_factory=list)
    engines: dict[str, EngineResult] = field(default_factory=dict)
    compared: int = 0  # queries whose paths were compared
    compared_full: int = 0  # of which through engine.search, past the limit
    top_same_set: int = 0  # queries whose first LIMIT paths are the same set on both engines
    top_same_order: int = 0  # ... and in the same order
    differences: list[Difference] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    elapsed_seconds: float = 0.0


# ---------------------------------------------------------------------------
# Corpus copies, one per engine
# ---------------------------------------------------------------------------


def wait_until_clean(source: Path) -> None:
    """Another benchmark may be editing notes of the shared corpus: let it finish."""
    waited = 0
    while (source / DIRTY_MARKER).exists() and waited < SOURCE_WAIT_SECONDS:
        if waited == 0:
            progress(f"{source} is being edited by another benchmark; waiting ...")
        time.sleep(5)
        waited += 5
    # Still marked: a leftover from a crash, which ensure_corpus answers by regenerating.


def fingerprint(kb_dir: Path) -> list[tuple[str, int]]:
    notes = kb_dir / "notes"
    return [(p.relative_to(notes).as_posix(), p.stat().st_size) for p in note_files(notes)]


def engine_copy(source: Path, dest: Path) -> None:
    """notes/, kb.yaml and corpus.json of the shared corpus, copied unless already there."""
    marker = dest / "corpus.json"
    same = (
        marker.is_file()
        and marker.read_bytes() == (source / "corpus.json").read_bytes()
        and (dest / "notes").is_dir()
        and not (dest / DIRTY_MARKER).exists()
    )
    if same:
        progress(f"reusing copy {dest}")
        return
    if dest.exists():
        shutil.rmtree(dest)  # only ever a folder this script named under --engines-workdir
    progress(f"copying {source.name} to {dest} ...")
    dest.mkdir(parents=True)
    shutil.copytree(source / "notes", dest / "notes")
    shutil.copy2(source / "kb.yaml", dest / "kb.yaml")
    shutil.copy2(source / "corpus.json", marker)  # last: marks a finished copy


def prepare_copies(args: argparse.Namespace, notes: int) -> dict[str, Path]:
    source = corpus_dir(args.workdir, notes, args.seed)
    wait_until_clean(source)
    ensure_corpus(source, notes, args.seed)
    dirs = {e: args.engines_workdir / f"{source.name}-{e}" for e in ENGINES}
    for attempt in range(2):
        for dest in dirs.values():
            engine_copy(source, dest)
        prints = [fingerprint(d) for d in dirs.values()]
        if all(p == prints[0] for p in prints) and len(prints[0]) == notes:
            return dirs
        if attempt == 0:  # copied while another benchmark edited a note: copy again
            progress("the copies differ (a note edited meanwhile?); copying again")
            for dest in dirs.values():
                shutil.rmtree(dest)
    raise BenchError(f"could not make identical copies of {source} for both engines")


def check_whoosh_runs() -> None:
    """Fail early, on one line, when kb cannot build a whoosh index with this Python."""
    with tiny_kb() as kb_dir:
        result = run_child(kb_argv(kb_dir, "ingest", "--rebuild", "--engine", "whoosh", "--json"))
        built = (kb_dir / "index" / "whoosh").is_dir()
    if result.returncode != 0 or not built:
        raise BenchError(
            f"`kb ingest --rebuild --engine whoosh` does not work here: "
            f"{last_line(result.stderr)} (is whoosh-reloaded installed in this Python?)"
        )


# ---------------------------------------------------------------------------
# Ingests (child processes)
# ---------------------------------------------------------------------------


def ingest_run(run: Run, counts: dict | None, note: str = "") -> IngestRun:
    return IngestRun(run.seconds, reported(counts), run.peak_rss_mb, note, counts)


def sqlite_bytes(kb_dir: Path) -> int:
    # The database and its -wal/-shm companions, whatever is left of them.
    return sum(p.stat().st_size for p in (kb_dir / "index").glob("kb.sqlite*") if p.is_file())


def whoosh_bytes(kb_dir: Path) -> int:
    return folder_bytes(kb_dir / "index" / "whoosh")


def whoosh_segments(folder: Path) -> int:
    """Segments in a whoosh index: each writes its files as MAIN_<segment id>.<ext>."""
    if not folder.is_dir():
        return 0
    return len({p.name.split(".")[0] for p in folder.glob("MAIN_*.*")})


def measure_full(dirs: dict[str, Path], notes: int, result: SizeResult) -> None:
    for engine, kb_dir in dirs.items():
        shutil.rmtree(kb_dir / "index", ignore_errors=True)
        progress(f"{engine}: full ingest --rebuild --engine {engine} ...")
        run, counts = run_ingest(kb_dir, "--rebuild", "--engine", engine, "--json")
        expect(result.warnings, f"{engine} full ingest", counts, added=notes, updated=0, removed=0)
        er = result.engines[engine]
        er.full = ingest_run(run, counts)
        er.sqlite_bytes, er.whoosh_bytes = sqlite_bytes(kb_dir), whoosh_bytes(kb_dir)
        progress(f"{engine}: full ingest took {run.seconds:.1f} s")
        if (kb_dir / "index" / "whoosh").is_dir() != (engine == "whoosh"):
            result.warnings.append(f"{engine}: unexpected state of {kb_dir / 'index' / 'whoosh'}")


def measure_one_note(dirs: dict[str, Path], notes: int, repeat: int, result: SizeResult) -> None:
    """Append a line to one note and ingest, a different note each time, engines in turn."""
    first = next(iter(dirs.values())) / "notes"
    rels = [p.relative_to(first) for p in notes_to_edit(note_files(first), repeat)]
    # The same notes on both copies; a marker left by a crash makes the next run recopy.
    shown = {d / "notes" / rel: f"{e}:{rel.as_posix()}" for e, d in dirs.items() for rel in rels}
    with editing(dirs.values(), shown) as originals:
        progress(f"one-note ingest x{len(rels)} per engine ...")
        for number, rel in enumerate(rels):
            for engine, kb_dir in dirs.items():
                name = f"{engine} one-note ingest"
                path = kb_dir / "notes" / rel
                run, counts = ingest_edited(kb_dir, path, number, notes, result.warnings, name)
                result.engines[engine].one_note.append(ingest_run(run, counts, rel.as_posix()))
    changed = [shown[path] for path in not_restored(originals)]
    if changed:
        result.warnings.append(f"notes not restored byte for byte: {', '.join(changed)}")
    # Bring each index back in line with the restored notes (not measured).
    for engine, kb_dir in dirs.items():
        _, counts = run_ingest(kb_dir, "--json")
        name = f"{engine} re-ingest after restoring"
        expect(result.warnings, name, counts, added=0, updated=len(rels))
        er = result.engines[engine]
        er.sqlite_bytes_after_edits = sqlite_bytes(kb_dir)
        er.whoosh_bytes_after_edits = whoosh_bytes(kb_dir)
        folder = kb_dir / "index" / "whoosh"
        er.whoosh_segments_after_edits = whoosh_segments(folder)


# ---------------------------------------------------------------------------
# Cold: `kb search` as whole processes
# ---------------------------------------------------------------------------


def search_argv(kb_dir: Path, word: str) -> list[str]:
    return kb_argv(kb_dir, "search", word, "--json")


def measure_cold(dirs: dict[str, Path], words: list[str], result: SizeResult) -> None:
    """Each word through both engines before the next word, so drift hits both alike."""
    progress(f"cold kb search x{len(words)} per engine ...")
    for kb_dir in dirs.values():  # untimed: page cache, .pyc files, index pages
        run_checked("kb_module", search_argv(kb_dir, words[0]))
    for word in words:
        result.startup_seconds.append(run_startup())
        for engine, kb_dir in dirs.items():
            run = run_checked("kb_module", search_argv(kb_dir, word))
            hits = json_hits(run.stdout)
            result.engines[engine].cold.append(ColdRun(word, run.seconds, hits, run.peak_rss_mb))
        found = {e: result.engines[e].cold[-1].hits for e in dirs}
        if len(set(found.values())) > 1:
            shown = ", ".join(f"{e} {n}" for e, n in found.items())
            result.warnings.append(f"cold search {word!r}: hits differ ({shown}; limit {LIMIT})")


# ---------------------------------------------------------------------------
# Warm: one KnowledgeBase per engine, in this process
# ---------------------------------------------------------------------------


def warm_up(kbs: dict[str, Any], queries: list[BenchQuery], result: SizeResult) -> list[BenchQuery]:
    """One untimed pass; keeps the queries both engines answer, warns about the others."""
    from kb.errors import KbError

    kept = []
    for query in queries:
        ok = True
        for engine, kb in kbs.items():
            try:
                seconds, results = time_query(kb, query)
            except KbError as error:  # kb's answer to the user, e.g. bad syntax
                result.warnings.append(f"{engine}: query {query.text!r} failed: {error}")
                ok = False
                continue
            except Exception as error:  # a crash inside kb: worth a warning, not the run
                result.warnings.append(
                    f"{engine}: kb.search({query.text!r}) raised {type(error).__name__}: {error}"
                )
                ok = False
                continue
            er = result.engines[engine]
            if er.first_query_seconds is None:
                er.first_query_seconds = seconds
            if results.warning:
                result.warnings.append(
                    f"{engine}: query {query.text!r}: kb warns {results.warning!r}"
                )
        if ok:
            kept.append(query)
    return kept


def measure_warm(kbs: dict[str, Any], queries: list[BenchQuery], result: SizeResult) -> None:
    progress(f"warm queries x{len(queries)}, {WARM_ROUNDS} rounds per engine ...")
    kept = warm_up(kbs, queries, result)
    seconds: dict[tuple[str, BenchQuery], list[float]] = {}
    hits: dict[tuple[str, BenchQuery], int] = {}
    # Whole passes, engines in turn for each query, so drift and caches hit both alike.
    for _ in range(WARM_ROUNDS):
        for query in kept:
            for engine, kb in kbs.items():
                elapsed, results = time_query(kb, query)
                seconds.setdefault((engine, query), []).append(elapsed)
                hits[engine, query] = len(results.hits)
    for engine, kb in kbs.items():
        er = result.engines[engine]
        er.timings = [
            WarmTiming(
                q.kind,
                q.text,
                q.prefix,
                statistics.median(seconds[engine, q]),
                max(seconds[engine, q]),
                hits[engine, q],
            )
            for q in kept
        ]
        for timing in sorted(er.timings, key=lambda t: -t.seconds)[:SLOWEST]:
            timing.engine_seconds = engine_seconds(kb, timing)


def path_sets(
    kbs: dict[str, Any], query: BenchQuery, notes: int, paths_by_id: dict[str, dict[int, str]]
) -> tuple[dict[str, set[str]], dict[str, list[str]], bool]:
    """Each engine's matched paths and its first LIMIT ranked paths. Matches are taken at
    COMPARE_LIMIT, or through engine.search without a limit when either engine reached it:
    past the limit, which notes make the cut is a question of ranking, not of matching."""
    from kb.query.syntax import parse_query

    ranked = {
        e: [h.path for h in kb.search(query.text, limit=COMPARE_LIMIT, prefix=query.prefix).hits]
        for e, kb in kbs.items()
    }
    tops = {e: paths[:LIMIT] for e, paths in ranked.items()}
    if all(len(paths) < COMPARE_LIMIT for paths in ranked.values()):
        return {e: set(paths) for e, paths in ranked.items()}, tops, False
    parsed = parse_query(query.text, prefix_last=query.prefix)
    matched = {}
    for engine, kb in kbs.items():
        if engine not in paths_by_id:
            paths_by_id[engine] = {note.id: note.path for note in kb.note_choices()}
        ids = [h.note_id for h in kb.engine().search(parsed, notes + 1)]
        matched[engine] = {paths_by_id[engine].get(i, f"?{i}") for i in ids}
    return matched, tops, True


def compare_engines(
    kbs: dict[str, Any], queries: list[BenchQuery], notes: int, result: SizeResult
) -> None:
    progress(f"comparing paths (limit {COMPARE_LIMIT}) ...")
    kept = {(t.text, t.prefix) for t in result.engines["fts5"].timings}
    paths_by_id: dict[str, dict[int, str]] = {}
    for query in queries:
        if (query.text, query.prefix) not in kept:
            continue
        try:
            matched, tops, full = path_sets(kbs, query, notes, paths_by_id)
        except Exception as error:  # the query ran in the warm rounds: this should not happen
            result.warnings.append(f"comparing {query.text!r}: {type(error).__name__}: {error}")
            continue
        result.compared += 1
        result.compared_full += int(full)
        if set(tops["fts5"]) == set(tops["whoosh"]):
            result.top_same_set += 1
            result.top_same_order += int(tops["fts5"] == tops["whoosh"])
        if matched["fts5"] != matched["whoosh"]:
            only_f = sorted(matched["fts5"] - matched["whoosh"])
            only_w = sorted(matched["whoosh"] - matched["fts5"])
            result.differences.append(
                Difference(
                    query.kind,
                    query.text,
                    query.prefix,
                    len(matched["fts5"]),
                    len(matched["whoosh"]),
                    only_f[:3],
                    only_w[:3],
                    len(only_f),
                    len(only_w),
                    full,
                )
            )


def run_warm(dirs: dict[str, Path], queries: list[BenchQuery], result: SizeResult) -> None:
    kbs = {e: open_kb(d) for e, d in dirs.items()}
    try:
        for engine, kb in kbs.items():
            name = kb.engine().name
            if name != engine:
                raise BenchError(f"{dirs[engine]} searches with {name}, not {engine}")
        measure_warm(kbs, queries, result)
        compare_engines(kbs, queries, result.notes, result)
    finally:
        for kb in kbs.values():
            kb.close()


# ---------------------------------------------------------------------------
# One size
# ---------------------------------------------------------------------------


def bench_size(args: argparse.Namespace, notes: int) -> SizeResult:
    started = time.perf_counter()
    progress(f"== {notes:,} notes ==")
    dirs = prepare_copies(args, notes)
    result = SizeResult(notes=notes, notes_bytes=folder_bytes(dirs["fts5"] / "notes"))
    result.engines = {e: EngineResult(e, str(d)) for e, d in dirs.items()}
    # The same words and queries as bench_search.py for the same seed.
    result.cold_words = QueryMaker(random.Random(f"cold {args.seed}")).cold_words(args.repeat)
    queries = QueryMaker(random.Random(args.seed)).queries(args.queries)

    measure_full(dirs, notes, result)
    measure_one_note(dirs, notes, args.repeat, result)
    measure_cold(dirs, result.cold_words, result)
    run_warm(dirs, queries, result)
    result.rows = make_rows(result)
    result.elapsed_seconds = time.perf_counter() - started
    progress(f"{notes:,} notes took {result.elapsed_seconds / 60:.1f} min")
    return result


def make_rows(result: SizeResult) -> list[Row]:
    e = result.engines
    judged = result.notes <= GOAL_NOTES

    def row(key: str, name: str, get: Any, unit: str = "s") -> Row:
        values = {}
        for engine in ENGINES:
            try:
                values[engine] = get(e[engine])
            except (TypeError, ValueError, statistics.StatisticsError):
                values[engine] = None  # a measurement that did not happen
        return Row(key, name, values["fts5"], values["whoosh"], unit)

    def median(values: list[float]) -> float:
        return statistics.median(values)

    repeat = len(result.cold_words)
    rows = [
        row("full_wall", "full ingest --rebuild: process", lambda r: r.full.wall_seconds),
        row("full_kb", "  kb's own seconds", lambda r: r.full.kb_seconds),
        row(
            "full_outside",
            "  outside them (start, whoosh, vacuum)",
            lambda r: r.full.wall_seconds - r.full.kb_seconds,
        ),
        row("full_rss", "full ingest: peak RSS", lambda r: r.full.peak_rss_mb, "MB"),
        row(
            "one_wall",
            f"one-note ingest: process (median {len(e['fts5'].one_note)})",
            lambda r: median([i.wall_seconds for i in r.one_note]),
        ),
        row(
            "one_kb",
            "  kb's own seconds (median)",
            lambda r: median([i.kb_seconds for i in r.one_note]),
        ),
        row(
            "one_rss",
            "one-note ingest: peak RSS",
            lambda r: max(i.peak_rss_mb for i in r.one_note),
            "MB",
        ),
        row(
            "cold_median",
            f"cold kb search (median of {repeat})",
            lambda r: median([c.seconds for c in r.cold]),
        ),
        row(
            "cold_max",
            f"cold kb search (max of {repeat})",
            lambda r: max(c.seconds for c in r.cold),
        ),
        row(
            "cold_rss",
            "cold kb search: peak RSS",
            lambda r: max(c.peak_rss_mb for c in r.cold),
            "MB",
        ),
    ]
    count = len(e["fts5"].timings)
    rows += [
        row(
            "warm_median",
            f"warm query (median of {count})",
            lambda r: median([t.seconds for t in r.timings]),
        ),
        row(
            "warm_p95",
            f"warm query (p95 of {count})",
            lambda r: percentile([t.seconds for t in r.timings], 95),
        ),
        row(
            "warm_max", f"warm query (max of {count})", lambda r: max(t.seconds for t in r.timings)
        ),
        row(
            "warm_over_1s",
            f"warm queries over {GOAL_SLOW_SECONDS:g} s (any round)",
            lambda r: sum(1 for t in r.timings if t.max_seconds > GOAL_SLOW_SECONDS),
            "count",
        ),
        row("warm_first", "first query after open (warm-up)", lambda r: r.first_query_seconds),
        row("index_sqlite", "index: sqlite file", lambda r: r.sqlite_bytes / 1e6, "MB"),
        row(
            "index_whoosh",
            "index: whoosh folder",
            lambda r: r.whoosh_bytes / 1e6 if r.engine == "whoosh" else None,
            "MB",
        ),
        row("index_total", "index: total", lambda r: (r.sqlite_bytes + r.whoosh_bytes) / 1e6, "MB"),
        row(
            "index_total_after",
            "index: total after the edits",
            lambda r: (r.sqlite_bytes_after_edits + r.whoosh_bytes_after_edits) / 1e6,
            "MB",
        ),
    ]
    goals = {
        "cold_median": (f"< {GOAL_COLD_SECONDS * 1000:g} ms", GOAL_COLD_SECONDS),
        "warm_p95": (f"< {GOAL_WARM_P95_SECONDS * 1000:g} ms", GOAL_WARM_P95_SECONDS),
        "warm_over_1s": ("none", 1),  # a count: fewer than one query
    }
    for r in rows:
        if r.key in goals:
            r.goal, limit = goals[r.key]
            if judged and r.whoosh is not None:
                r.passed = r.whoosh < limit
    return rows


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def show(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "MB":
        return f"{value:.1f} MB"
    if unit == "count":
        return str(int(value))
    return show_seconds(value)


def format_table(result: SizeResult) -> str:
    header = (
        f"{'measurement':<42}{'FTS5':>11}{'whoosh':>11}{'whoosh/FTS5':>13}  "
        f"{'goal (whoosh)':<14}status"
    )
    startup = statistics.median(result.startup_seconds) if result.startup_seconds else 0.0
    lines = [
        table_heading(result.notes, result.notes_bytes / 1e6),
        f"cold words: {' '.join(result.cold_words)};  python -c pass: {show_seconds(startup)}",
        *header_lines(header),
    ]
    for row in result.rows:
        ratio = f"{row.ratio:.2f}x" if row.ratio is not None else ""
        lines.append(
            f"{row.name:<42}{show(row.fts5, row.unit):>11}{show(row.whoosh, row.unit):>11}"
            f"{ratio:>13}  {row.goal:<14}{status(row.passed)}".rstrip()
        )
    whoosh = result.engines["whoosh"]
    ratio = (whoosh.sqlite_bytes + whoosh.whoosh_bytes) / result.notes_bytes
    fts5 = result.engines["fts5"].sqlite_bytes / result.notes_bytes
    lines.append(
        f"index vs notes: FTS5 {fts5:.2f}x, whoosh {ratio:.2f}x; whoosh has "
        f"{whoosh.whoosh_segments_after_edits} segment(s) after the edits"
    )
    for engine in ENGINES:
        lines += format_slowest(result.engines[engine])
    lines += format_classes(result)
    lines += format_comparison(result)
    lines += not_judged(result.notes)
    lines.append(f"this size took {result.elapsed_seconds / 60:.1f} min")
    if result.elapsed_seconds > LONG_RUN_SECONDS:
        lines.append(f"  (over {LONG_RUN_SECONDS // 60} minutes)")
    return "\n".join(lines + warning_lines(result.warnings))


def format_slowest(er: EngineResult) -> list[str]:
    slowest = sorted(er.timings, key=lambda t: -t.seconds)[:SLOWEST]
    lines = [f"{er.engine}: slowest {len(slowest)} warm queries (engine = no hits or snippets):"]
    for t in slowest:
        engine = show_seconds(t.engine_seconds) if t.engine_seconds is not None else "?"
        mode = "  [prefix mode]" if t.prefix else ""
        lines.append(
            f"  {show_seconds(t.seconds):>9}  max {show_seconds(t.max_seconds):>9}  "
            f"engine {engine:>9}  {t.hits:>2} hits  {t.kind:<18} {t.text}{mode}"
        )
    return lines


def format_classes(result: SizeResult) -> list[str]:
    kinds: dict[str, dict[str, list[WarmTiming]]] = {}
    for engine in ENGINES:
        for t in result.engines[engine].timings:
            kinds.setdefault(t.kind, {e: [] for e in ENGINES})[engine].append(t)
    lines = ["per query class:   n  FTS5 med  whoosh med  whoosh max  whoosh/FTS5"]
    for kind, by_engine in kinds.items():
        f = statistics.median(t.seconds for t in by_engine["fts5"])
        w = statistics.median(t.seconds for t in by_engine["whoosh"])
        top = max(t.seconds for t in by_engine["whoosh"])
        lines.append(
            f"  {kind:<18}{len(by_engine['fts5']):>2}{show_seconds(f):>10}{show_seconds(w):>12}"
            f"{show_seconds(top):>12}{w / f:>12.2f}x"
        )
    return lines


def format_comparison(result: SizeResult) -> list[str]:
    lines = [
        f"same paths: {result.compared - len(result.differences)} of {result.compared} queries "
        f"agree (limit {COMPARE_LIMIT}; {result.compared_full} reached it and were compared "
        f"on all matches); first {LIMIT}: same set for {result.top_same_set}, "
        f"same order for {result.top_same_order}"
    ]
    for d in result.differences:
        mode = " [prefix mode]" if d.prefix else ""
        scope = "all matches" if d.full_sets else f"limit {COMPARE_LIMIT}"
        lines.append(
            f"WARNING: engines differ on {d.kind}: {d.text!r}{mode} ({scope}): "
            f"FTS5 {d.fts5_count} paths, whoosh {d.whoosh_count}; "
            f"only FTS5 {d.only_fts5_count} {d.only_fts5}, "
            f"only whoosh {d.only_whoosh_count} {d.only_whoosh}"
        )
    return lines


def size_entry(result: SizeResult) -> dict:
    """One size in the JSON, each row with its whoosh/FTS5 ratio."""
    entry = asdict(result)
    for row, r in zip(entry["rows"], result.rows, strict=True):
        row["ratio"] = r.ratio
    return entry


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = bench_parser(__doc__, "the shared corpora (read only here, generated when missing)")
    parser.add_argument(
        "--engines-workdir",
        type=Path,
        default=Path(tempfile.gettempdir(), "kb-bench-engines"),
        help="this script's copies, one per size and engine",
    )
    add_repeat(parser, 3, "one-note ingests and cold searches per engine; the median is reported")
    add_queries(parser)
    return parse_bench_args(
        parser,
        argv,
        seed_help="corpus and query seed (default 1)",
        at_least_one=("repeat", "queries"),
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_sizes(
        args,
        bench_size,
        format_table,
        size_entry,
        extra_info={"queries": args.queries},
        checks=(check_kb_runs, check_whoosh_runs),
        folder=args.engines_workdir,
    )


if __name__ == "__main__":
    sys.exit(main())
