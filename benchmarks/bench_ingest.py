"""Time `kb ingest` as whole processes against a walk+read+hash baseline of the same run.

    python benchmarks/bench_ingest.py [--sizes 1000 10000 100000] [--workdir /tmp/kb-bench]
                                      [--repeat 3] [--seed 1] [--json-out FILE]

For each size it generates (or reuses) a corpus with generate_corpus.py, then runs each
measurement as its own child process and records wall-clock seconds and the child's peak
RSS: a full ingest, a no-op one, a whole ingest after one edit and `kb ingest PATH` of
one edited note. Goals are judged at 10,000 and 100,000 notes (issue 15). Seconds are
also shown as a ratio to the baseline, because absolute figures on shared machines drift
from run to run while ratios measured minutes apart mostly do not.
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

# Goals by size (issue 15): judged at these sizes only.
GOAL_FULL_SECONDS = {10_000: 20.0, 100_000: 200.0}
GOAL_NOOP_SECONDS = 1.0
GOAL_ONE_PATH_SECONDS = 0.5  # kb ingest PATH of one edited note
GOAL_ONE_EDIT_SECONDS = 1.5  # a whole kb ingest after one edit
GOAL_PEAK_MB = 500.0
GOAL_SIZES = (GOAL_NOTES, 100_000)

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
            goal=f"< {GOAL_FULL_SECONDS.get(notes, GOAL_FULL_SECONDS[GOAL_NOTES]):g} s",
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
    """One edited note, ingested by a whole `kb ingest`, then by `kb ingest PATH`."""
    files = notes_to_edit(note_files(kb_dir / "notes"), 2 * repeat)
    whole_name, whole = "whole ingest after one edit", []
    with editing([kb_dir], files[:repeat]) as originals:
        for number, path in enumerate(originals):
            whole.append(ingest_edited(kb_dir, path, number, notes, result.warnings, whole_name))
    run_ingest(kb_dir, "--json")  # the restored notes back in (not measured)
    path_name, by_path = "kb ingest PATH of one edited note", []
    with editing([kb_dir], files[repeat:]) as originals:
        for number, path in enumerate(originals):
            with path.open("a", encoding="utf-8") as note:
                note.write(f"\n追加的一行 benchmark edit {number}\n")
            run, counts = run_ingest(kb_dir, str(path), "--json")
            expect(result.warnings, path_name, counts, added=0, updated=1, moved=0, removed=0)
            by_path.append((run, counts))
    run_ingest(kb_dir, "--json")
    result.measurements += [
        ingest_measurement(
            "one_file",
            f"{whole_name} (median of {repeat})",
            whole,
            goal=f"< {GOAL_ONE_EDIT_SECONDS:g} s",
        ),
        ingest_measurement(
            "one_path",
            f"{path_name} (median of {repeat})",
            by_path,
            goal=f"< {GOAL_ONE_PATH_SECONDS:g} s",
        ),
    ]


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
    judged = result.notes in GOAL_SIZES
    keys = ("full", "noop", "one_file", "one_path")
    ingest_rows = [m for m in result.measurements if m.key in keys]
    limits = {
        "full": GOAL_FULL_SECONDS.get(result.notes),
        "noop": GOAL_NOOP_SECONDS,
        "one_file": GOAL_ONE_EDIT_SECONDS,
        "one_path": GOAL_ONE_PATH_SECONDS,
    }
    for row in ingest_rows:
        limit = limits.get(row.key)
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
    unjudged = [] if result.notes in GOAL_SIZES else not_judged(result.notes)
    return "\n".join(lines + unjudged + warning_lines(result.warnings))


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
