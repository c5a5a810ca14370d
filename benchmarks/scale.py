"""Every FTS5 benchmark at several sizes, one table: each measurement with its growth factor.

    python benchmarks/scale.py [--sizes 1000 10000 100000] [--workdir /tmp/kb-bench]
                               [--out DIR] [--only ingest search links] [--table-only]

Runs bench_ingest.py, bench_search.py and bench_links.py (each as its own process, one
after the other, never two at once) with ``--json-out DIR/<script>.json``, then prints
one row per measurement: its value at each size and how much it grew from one size to the
next. A cost that grows faster than the collection (more than 10x from 10,000 to 100,000
notes) is marked ``!``: that is where a per-note loop hides. The baselines of the same
runs (``python -c pass``, the walk+read+hash of the notes, grep) are rows too, so each
figure can be read against them. ``--table-only`` prints the table from the JSON files a
former run left in DIR.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
SCRIPTS = {"ingest": "bench_ingest.py", "search": "bench_search.py", "links": "bench_links.py"}
GROWTH_MARK = 1.5  # '!' when a cost grows this much more than the notes do


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000], help="corpus sizes"
    )
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kb-bench"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--out", type=Path, default=None, help="where the JSON files go (default WORKDIR/scale)"
    )
    parser.add_argument("--only", nargs="+", choices=sorted(SCRIPTS), default=sorted(SCRIPTS))
    parser.add_argument("--table-only", action="store_true", help="print the table, run nothing")
    args = parser.parse_args(argv)
    args.out = args.out or args.workdir / "scale"
    return args


def run_benchmarks(args: argparse.Namespace) -> None:
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only:
        argv = [
            sys.executable,
            str(BENCH_DIR / SCRIPTS[name]),
            "--sizes",
            *map(str, args.sizes),
            "--workdir",
            str(args.workdir),
            "--seed",
            str(args.seed),
            "--json-out",
            str(args.out / f"{name}.json"),
        ]
        print(f"running {' '.join(argv[1:])}", flush=True)
        if subprocess.run(argv, check=False).returncode != 0:
            print(f"{SCRIPTS[name]} failed; its rows are missing below", file=sys.stderr)


def measurements(name: str, data: dict) -> dict[str, dict[int, tuple[float, str]]]:
    """measurement name -> notes -> (value, unit), from one script's JSON."""
    found: dict[str, dict[int, tuple[float, str]]] = {}
    for size in data.get("sizes", []):
        notes = int(size["notes"])
        for row in size.get("measurements", []):  # bench_ingest
            if row.get("seconds") is not None:
                found.setdefault(f"{name}: {row['name']}", {})[notes] = (row["seconds"], "s")
            if row.get("peak_rss_mb"):
                key = f"{name}: {row['name']} (peak RSS)"
                found.setdefault(key, {})[notes] = (row["peak_rss_mb"], "MB")
        if size.get("index_mb"):
            found.setdefault(f"{name}: store + index size", {})[notes] = (size["index_mb"], "MB")
        if size.get("corpus_mb"):
            found.setdefault(f"{name}: notes size", {})[notes] = (size["corpus_mb"], "MB")
        for row in size.get("rows", []):  # bench_search, bench_links
            unit = row.get("unit", "s")
            found.setdefault(f"{name}: {row['name']}", {})[notes] = (row["value"], unit)
    return found


def shown(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"
    return f"{value:.1f} {unit}"


def table(rows: dict[str, dict[int, tuple[float, str]]], sizes: list[int]) -> str:
    width = max((len(name) for name in rows), default=20) + 2
    steps = list(itertools.pairwise(sizes))
    header = f"{'measurement':<{width}}" + "".join(f"{n:>12,}" for n in sizes)
    header += "".join(f"{f'x {b // a} notes':>14}" for a, b in steps)
    lines = [header, "-" * len(header)]
    for name, by_size in rows.items():
        line = f"{name:<{width}}"
        for notes in sizes:
            line += f"{shown(*by_size[notes]) if notes in by_size else '-':>12}"
        for small, large in steps:
            if small in by_size and large in by_size and by_size[small][0] > 0:
                growth = by_size[large][0] / by_size[small][0]
                mark = "!" if growth > GROWTH_MARK * large / small else " "
                line += f"{growth:>12.1f}x{mark}"
            else:
                line += f"{'-':>14}"
        lines.append(line.rstrip())
    lines.append(
        f"x N notes: growth from the size before; ! marks a cost growing more than "
        f"{GROWTH_MARK:g}x faster than the notes"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.table_only:
        run_benchmarks(args)
    rows: dict[str, dict[int, tuple[float, str]]] = {}
    for name in args.only:
        path = args.out / f"{name}.json"
        if path.is_file():
            rows.update(measurements(name, json.loads(path.read_text(encoding="utf-8"))))
        else:
            print(f"no {path}: {SCRIPTS[name]} did not finish", file=sys.stderr)
    sizes = sorted({n for by_size in rows.values() for n in by_size} | set(args.sizes))
    print(table(rows, sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
