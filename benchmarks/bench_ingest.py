"""Time `kb ingest` as whole processes against a walk+read+hash baseline of the same run.

    python benchmarks/bench_ingest.py [--sizes 1000 10000] [--workdir /tmp/kb-bench]
                                      [--repeat 3] [--seed 1] [--json-out FILE]

For each size it generates (or reuses) a corpus with generate_corpus.py, then runs each
measurement as its own child process and records wall-clock seconds and the child's peak
RSS. Seconds are also shown as a ratio to the baseline, because absolute figures on shared
machines drift from run to run while ratios measured minutes apart mostly do not.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from common import (
    COUNT_KEYS,
    GOAL_NOTES,
    BenchError,
    Run,
    add_repeat,
    bench_parser,
    corpus_for,
    editing,
    expect,
    folder_bytes,
    header_lines,
    ingest_edited,
    last_line,
    not_judged,
    note_files,
    notes_to_edit,
    parse_bench_args,
    reported,
    run_ingest,
    run_measured,
    run_sizes,
    status,
    table_heading,
    warning_lines,
)

GOAL_FULL_SECONDS = 30.0
GOAL_NOOP_SECONDS = 1.0
GOAL_PEAK_MB = 500.0

# What any ingest must at least do: find every note, read its bytes, hash them.
WALK_READ_HASH = """\
import hashlib, os, sys
count = 0
for folder, subfolders, names in os.walk(sys.argv[1]):
    subfolders.sort()
    for name in sorted(names):
        if name.endswith(".md"):
            with open(os.path.join(folder, name), "rb") as f:
                hashlib.blake2b(f.read()).digest()
            count += 1
print(count)
"""


@dataclass
class Measurement:
    key: str  # stable id for scripts comparing saved results
    name: str
    runs: list[float]
    peak_rss_mb: float
    counts: dict | None = None
    kb_seconds: float | None = None
    goal: str = ""
    passed: bool | None = None

    @property
    def seconds(self) -> float:
        return statistics.median(self.runs)


@dataclass
class SizeResult:
    notes: int
    corpus_mb: float
    baseline_seconds: float = 0.0
    measurements: list[Measurement] = field(default_factory=list)
    index_mb: float = 0.0
    warnings: list[str] = field(default_factory=list)
    broken_links: int = 0


# ---------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------


def repeated(argv: list[str], repeat: int) -> tuple[list[float], float, Run]:
    runs = [run_measured(argv) for _ in range(repeat)]
    for run in runs:
        if run.exit_code != 0:
            raise BenchError(
                f"{' '.join(argv[:3])} exited with {run.exit_code}: {last_line(run.stderr)}"
            )
    return [r.seconds for r in runs], max(r.peak_rss_mb for r in runs), runs[-1]


def measure_baselines(notes_dir: Path, notes: int, repeat: int, result: SizeResult) -> None:
    walk = [sys.executable, "-c", WALK_READ_HASH, str(notes_dir)]
    run_measured(walk)  # warm the page cache, so the baseline and kb read the same way
    seconds, rss, _ = repeated([sys.executable, "-c", "pass"], repeat)
    result.measurements.append(Measurement("startup", "python -c pass", seconds, rss))
    seconds, rss, last = repeated(walk, repeat)
    if last.stdout.strip() != str(notes):
        result.warnings.append(f"baseline saw {last.stdout.strip()} notes, expected {notes}")
    result.measurements.append(Measurement("baseline", "walk+read+hash (baseline)", seconds, rss))
    result.baseline_seconds = statistics.median(seconds)


def measure_full(kb_dir: Path, notes: int, result: SizeResult) -> None:
    shutil.rmtree(kb_dir / "index", ignore_errors=True)
    run, counts = run_ingest(kb_dir, "--rebuild", "--json")
    expect(result.warnings, "full ingest", counts, added=notes, updated=0, moved=0, removed=0)
    result.measurements.append(
        Measurement(
            "full",
            "full ingest --rebuild",
            [run.seconds],
            run.peak_rss_mb,
            counts,
            reported(counts),
            goal=f"< {GOAL_FULL_SECONDS:g} s",
        )
    )


def measure_noop(kb_dir: Path, notes: int, repeat: int, result: SizeResult) -> None:
    nothing = {"added": 0, "updated": 0, "moved": 0, "removed": 0, "unchanged": notes}
    runs = []
    for _ in range(repeat):
        run, counts = run_ingest(kb_dir, "--json")
        expect(result.warnings, "no-op re-ingest", counts, **nothing)
        runs.append((run, counts))
    result.measurements.append(
        ingest_measurement(
            "noop", f"no-op re-ingest (median of {repeat})", runs, goal=f"< {GOAL_NOOP_SECONDS:g} s"
        )
    )


def measure_one_file(kb_dir: Path, notes: int, repeat: int, result: SizeResult) -> None:
    name, runs = "one-file re-ingest", []
    with editing([kb_dir], notes_to_edit(note_files(kb_dir / "notes"), repeat)) as originals:
        for number, path in enumerate(originals):
            runs.append(ingest_edited(kb_dir, path, number, notes, result.warnings, name))
    # Bring the index back in line with the restored notes (not measured).
    run_ingest(kb_dir, "--json")
    result.measurements.append(
        ingest_measurement("one_file", f"one-file re-ingest (median of {repeat})", runs)
    )


def ingest_measurement(
    key: str, name: str, runs: list[tuple[Run, dict | None]], goal: str = ""
) -> Measurement:
    seconds = [run.seconds for run, _ in runs]
    middle = runs[len(runs) // 2][1]  # counts shown are from one representative run
    return Measurement(
        key,
        name,
        seconds,
        max(run.peak_rss_mb for run, _ in runs),
        middle,
        reported(middle),
        goal=goal,
    )


def judge(result: SizeResult) -> None:
    """Mark goals PASS/MISS where they apply, and add the peak-memory row."""
    judged = result.notes <= GOAL_NOTES
    ingest_rows = [m for m in result.measurements if m.key in ("full", "noop", "one_file")]
    for row in ingest_rows:
        limit = {"full": GOAL_FULL_SECONDS, "noop": GOAL_NOOP_SECONDS}.get(row.key)
        if limit is not None and judged:
            row.passed = row.seconds < limit
    peak = max((m.peak_rss_mb for m in ingest_rows), default=0.0)
    result.measurements.append(
        Measurement(
            "peak_rss",
            "peak RSS of any ingest",
            [],
            peak,
            goal=f"< {GOAL_PEAK_MB:g} MB",
            passed=(peak < GOAL_PEAK_MB) if judged else None,
        )
    )


def bench_size(args: argparse.Namespace, notes: int) -> SizeResult:
    kb_dir, marker = corpus_for(args, notes)
    notes_dir = kb_dir / "notes"
    result = SizeResult(notes=notes, corpus_mb=folder_bytes(notes_dir) / 1e6)
    links = marker.get("links", {})
    result.broken_links = links.get("broken_target", 0) + links.get("broken_anchor", 0)
    print(f"measuring {notes} notes ...", flush=True)
    measure_baselines(notes_dir, notes, args.repeat, result)
    measure_full(kb_dir, notes, result)
    measure_noop(kb_dir, notes, args.repeat, result)
    measure_one_file(kb_dir, notes, args.repeat, result)
    index_dir = kb_dir / "index"
    if not index_dir.is_dir():
        result.warnings.append(f"no index folder at {index_dir}")
    result.index_mb = folder_bytes(index_dir) / 1e6
    judge(result)
    return result


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def format_table(result: SizeResult) -> str:
    header = (
        f"{'measurement':<34}{'seconds':>9}{'x baseline':>12}{'kb says s':>11}"
        f"{'peak RSS MB':>13}  {'goal':<10}{'status':<6}"
    )
    lines = [table_heading(result.notes, result.corpus_mb), *header_lines(header)]
    for m in result.measurements:
        seconds = f"{m.seconds:9.3f}" if m.runs else " " * 9
        ratio = f"{m.seconds / result.baseline_seconds:11.2f}x" if m.runs else " " * 12
        said = f"{m.kb_seconds:11.3f}" if m.kb_seconds is not None else " " * 11
        lines.append(
            f"{m.name:<34}{seconds}{ratio}{said}{m.peak_rss_mb:13.1f}  "
            f"{m.goal:<10}{status(m.passed)}".rstrip()
        )
    ratio = result.index_mb / result.corpus_mb if result.corpus_mb else 0.0
    lines.append(f"index size: {result.index_mb:.1f} MB ({ratio:.2f}x the notes)")
    for m in result.measurements:
        if m.counts:
            shown = ", ".join(f"{k}={m.counts[k]}" for k in COUNT_KEYS if k in m.counts)
            lines.append(f"  {m.name}: {shown}")
    lines.append(f"  the corpus has {result.broken_links} broken links by construction")
    return "\n".join(lines + not_judged(result.notes) + warning_lines(result.warnings))


def size_entry(result: SizeResult) -> dict:
    """One size in the JSON: every measurement with its median and ratio to the baseline."""
    entry = asdict(result)
    for row, m in zip(entry["measurements"], result.measurements, strict=True):
        row["seconds"] = m.seconds if m.runs else None
        row["ratio"] = m.seconds / result.baseline_seconds if m.runs else None
    return entry


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = bench_parser(__doc__, "where corpora and indexes are kept between runs")
    add_repeat(parser, 3, "runs of each repeated measurement; the median is reported")
    return parse_bench_args(parser, argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_sizes(args, bench_size, format_table, size_entry, load_average=False)


if __name__ == "__main__":
    sys.exit(main())
