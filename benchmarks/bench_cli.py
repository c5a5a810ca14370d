"""Time cold `kb list -n 20`, `kb tags`, `kb show`, `kb recent` and `kb stats`, each a whole
process, against `python -c pass` run in the same loop.

    python benchmarks/bench_cli.py [--sizes 1000 10000] [--workdir /tmp/kb-bench] [--repeat 7]

The corpora are bench_ingest.py's, under --workdir (generated when missing, then ingested).
The goal (issue 14): a cold `kb list -n 20` on 10,000 notes takes less than 200 ms more
than starting Python. Commands and the baseline alternate, so a slow moment of the machine
falls on both.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass, field

from common import (
    GOAL_NOTES,
    BenchError,
    add_repeat,
    bench_parser,
    corpus_for,
    folder_bytes,
    header_lines,
    kb_argv,
    last_line,
    not_judged,
    parse_bench_args,
    run_ingest,
    run_measured,
    run_sizes,
    run_startup,
    show_seconds,
    status,
    table_heading,
    warning_lines,
)

GOAL_OVER_BASELINE = 0.200  # seconds a cold `kb list -n 20` may take beyond `python -c pass`


@dataclass
class CommandRow:
    command: str
    median: float
    over_baseline: float
    ratio: float
    passed: bool | None = None


@dataclass
class SizeResult:
    notes: int
    notes_bytes: int
    baseline: float = 0.0
    rows: list[CommandRow] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def commands(note: str) -> dict[str, list[str]]:
    return {
        "kb list -n 20": ["list", "-n", "20"],
        "kb list --tag … -n 20 --json": ["list", "--tag", "gpu", "-n", "20", "--json"],
        "kb tags": ["tags"],
        "kb recent": ["recent"],
        "kb show NOTE": ["show", note],
        "kb stats": ["stats"],
    }


def bench_size(args: argparse.Namespace, notes: int) -> SizeResult:
    kb_dir, _ = corpus_for(args, notes)
    result = SizeResult(notes=notes, notes_bytes=folder_bytes(kb_dir / "notes"))
    print(f"ingest {notes} notes (brings the store up to date; not measured) ...", flush=True)
    run_ingest(kb_dir, "--json")
    first = run_measured(kb_argv(kb_dir, "list", "-n", "1"))
    if first.exit_code != 0 or not first.stdout.strip():
        raise BenchError(f"kb list exited with {first.exit_code}: {last_line(first.stderr)}")
    note = first.stdout.strip()
    timed = commands(note)
    seconds: dict[str, list[float]] = {name: [] for name in timed}
    baseline: list[float] = []
    print(f"measuring {notes} notes ...", flush=True)
    for _ in range(args.repeat):
        for name, argv in timed.items():
            baseline.append(run_startup())
            run = run_measured(kb_argv(kb_dir, *argv))
            if run.exit_code != 0:
                raise BenchError(f"{name} exited with {run.exit_code}: {last_line(run.stderr)}")
            seconds[name].append(run.seconds)
    result.baseline = statistics.median(baseline)
    for name, runs in seconds.items():
        median = statistics.median(runs)
        row = CommandRow(name, median, median - result.baseline, median / result.baseline)
        if name == "kb list -n 20" and notes <= GOAL_NOTES:
            row.passed = row.over_baseline < GOAL_OVER_BASELINE
        result.rows.append(row)
    return result


def format_table(result: SizeResult) -> str:
    header = f"{'command':<30} {'median':>10} {'- pass':>10} {'x pass':>7}  goal"
    lines = [
        table_heading(result.notes, result.notes_bytes / 1e6),
        *header_lines(header),
        f"{'python -c pass':<30} {show_seconds(result.baseline):>10} {'':>10} {'1.0':>7}",
    ]
    for row in result.rows:
        goal = f"< {GOAL_OVER_BASELINE * 1000:.0f} ms over pass" if row.passed is not None else ""
        lines.append(
            f"{row.command:<30} {show_seconds(row.median):>10} "
            f"{show_seconds(row.over_baseline):>10} {row.ratio:>7.1f}  {goal} {status(row.passed)}"
        )
    return "\n".join(lines + not_judged(result.notes) + warning_lines(result.warnings))


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__)
    add_repeat(parser, 7, "cold runs of each command, each beside a python -c pass (default 7)")
    return run_sizes(parse_bench_args(parser, argv), bench_size, format_table)


if __name__ == "__main__":
    sys.exit(main())
