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
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from generate_corpus import GENERATOR_VERSION, read_marker

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
GENERATOR = BENCH_DIR / "generate_corpus.py"
DIRTY_MARKER = "bench-editing"  # present while notes are edited; a leftover forces regeneration
COUNT_KEYS = ("added", "updated", "moved", "removed", "unchanged", "warnings")

# Goals are set for 10,000 notes; smaller corpora must meet them too, larger ones are not judged.
GOAL_NOTES = 10_000
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

# Children are started from this tiny launcher rather than from the benchmark itself: on
# Linux a child's ru_maxrss starts at its parent's peak RSS (exec records the high-water mark
# of the memory it replaces), so a direct child would report at least what this script uses.
LAUNCHER = """\
import json, os, sys, time
out, err, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
actions = [(os.POSIX_SPAWN_OPEN, 1, out, flags, 0o644), (os.POSIX_SPAWN_OPEN, 2, err, flags, 0o644)]
start = time.perf_counter()
pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "exit_code": os.waitstatus_to_exitcode(status),
                  "maxrss": usage.ru_maxrss}))
"""


class BenchError(Exception):
    """A measurement could not be made; the message says why, on one line."""


@dataclass
class Run:
    seconds: float
    peak_rss_mb: float
    exit_code: int
    stdout: str
    stderr: str


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
# Running children
# ---------------------------------------------------------------------------


def child_env() -> dict[str, str]:
    # The repo root first on the path, so `-m kb` finds the working tree even when not installed.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def rss_to_mb(maxrss: int) -> float:
    # ru_maxrss is bytes on macOS and KiB on Linux and the BSDs.
    return maxrss / 1e6 if sys.platform == "darwin" else maxrss * 1024 / 1e6


def run_measured(argv: list[str]) -> Run:
    """Run argv as a grandchild of a small launcher; return its wall time and peak RSS."""
    with tempfile.TemporaryDirectory(prefix="kb-bench-") as tmp:
        out, err = Path(tmp, "stdout"), Path(tmp, "stderr")
        launcher = subprocess.run(
            [sys.executable, "-c", LAUNCHER, str(out), str(err), *argv],
            cwd=REPO_ROOT,
            env=child_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if launcher.returncode != 0:
            raise BenchError(f"launcher failed: {last_line(launcher.stderr)}")
        report = json.loads(launcher.stdout)
        return Run(
            report["seconds"],
            rss_to_mb(report["maxrss"]),
            report["exit_code"],
            out.read_text(encoding="utf-8", errors="replace"),
            err.read_text(encoding="utf-8", errors="replace"),
        )


def last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


def kb_argv(kb_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "kb", "--kb", str(kb_dir), "ingest", *args]


def check_kb_runs() -> None:
    """Fail early, on one line, when kb cannot ingest even one note with this Python."""
    with tempfile.TemporaryDirectory(prefix="kb-bench-check-") as tmp:
        kb_dir = Path(tmp)
        (kb_dir / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
        (kb_dir / "notes").mkdir()
        (kb_dir / "notes" / "hello.md").write_text("# Hello\n\n显存带宽\n", encoding="utf-8")
        result = subprocess.run(
            kb_argv(kb_dir, "--json"),
            cwd=REPO_ROOT,
            env=child_env(),
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        hint = " (is kb installed in this Python?)" if "ModuleNotFound" in result.stderr else ""
        raise BenchError(
            f"`{Path(sys.executable).name} -m kb ingest` does not run from "
            f"{REPO_ROOT}: {last_line(result.stderr)}{hint}"
        )


def run_ingest(kb_dir: Path, *args: str) -> tuple[Run, dict | None]:
    run = run_measured(kb_argv(kb_dir, *args))
    if run.exit_code != 0:
        raise BenchError(
            f"`kb ingest {' '.join(args)}` exited with {run.exit_code}: {last_line(run.stderr)}"
        )
    return run, parse_counts(run.stdout)


def parse_counts(stdout: str) -> dict | None:
    """The JSON object kb prints; tolerate log lines around it."""
    candidates = [stdout, *reversed(stdout.splitlines())]
    for text in candidates:
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


# ---------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------


def ensure_corpus(kb_dir: Path, notes: int, seed: int) -> dict:
    """Reuse a finished corpus of the same size and seed; otherwise generate it."""
    marker = read_marker(kb_dir)
    reusable = (
        marker is not None
        and marker.get("notes") == notes
        and marker.get("seed") == seed
        and marker.get("generator_version") == GENERATOR_VERSION
        and not (kb_dir / DIRTY_MARKER).exists()
    )
    if reusable:
        print(f"reusing corpus {kb_dir}")
        return marker
    if kb_dir.exists():
        shutil.rmtree(kb_dir)  # only ever a folder this script named under --workdir
    print(f"generating {notes} notes into {kb_dir} ...", flush=True)
    # A separate process, so the generator's memory never inflates this one.
    generated = subprocess.run(
        [sys.executable, str(GENERATOR), str(kb_dir), "--notes", str(notes), "--seed", str(seed)],
        check=False,
    )
    marker = read_marker(kb_dir)
    if generated.returncode != 0 or marker is None:
        raise BenchError(f"generating {notes} notes into {kb_dir} failed")
    return marker


def note_files(notes_dir: Path) -> list[Path]:
    return sorted(notes_dir.rglob("*.md"))


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def notes_to_edit(files: list[Path], count: int) -> list[Path]:
    # Spread over the corpus so each edit lands in a different folder and note.
    step = max(1, len(files) // (count + 1))
    return [files[(i + 1) * step % len(files)] for i in range(count)]


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
    expect(result, "full ingest", counts, added=notes, updated=0, moved=0, removed=0)
    result.measurements.append(
        Measurement(
            "full",
            "full ingest --rebuild",
            [run.seconds],
            run.peak_rss_mb,
            counts,
            kb_seconds(counts),
            goal=f"< {GOAL_FULL_SECONDS:g} s",
        )
    )


def measure_noop(kb_dir: Path, notes: int, repeat: int, result: SizeResult) -> None:
    runs = []
    for _ in range(repeat):
        run, counts = run_ingest(kb_dir, "--json")
        expect(
            result,
            "no-op re-ingest",
            counts,
            added=0,
            updated=0,
            moved=0,
            removed=0,
            unchanged=notes,
        )
        runs.append((run, counts))
    result.measurements.append(
        ingest_measurement(
            "noop", f"no-op re-ingest (median of {repeat})", runs, goal=f"< {GOAL_NOOP_SECONDS:g} s"
        )
    )


def measure_one_file(kb_dir: Path, notes: int, repeat: int, result: SizeResult) -> None:
    files = note_files(kb_dir / "notes")
    originals = {path: path.read_bytes() for path in notes_to_edit(files, repeat)}
    dirty = kb_dir / DIRTY_MARKER
    dirty.touch()
    runs = []
    try:
        for number, path in enumerate(originals):
            with path.open("a", encoding="utf-8") as note:
                note.write(f"\n追加的一行 benchmark edit {number}\n")
            run, counts = run_ingest(kb_dir, "--json")
            expect(
                result,
                "one-file re-ingest",
                counts,
                added=0,
                updated=1,
                moved=0,
                removed=0,
                unchanged=notes - 1,
            )
            runs.append((run, counts))
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
        dirty.unlink()
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
        kb_seconds(middle),
        goal=goal,
    )


def kb_seconds(counts: dict | None) -> float | None:
    value = (counts or {}).get("seconds")
    return float(value) if isinstance(value, int | float) else None


def expect(result: SizeResult, name: str, counts: dict | None, **expected: int) -> None:
    """Record a warning when kb's counts are not what this run must have produced."""
    if counts is None:
        result.warnings.append(f"{name}: no JSON object on stdout")
        return
    missing = [key for key in COUNT_KEYS if key not in counts]
    if missing:
        result.warnings.append(f"{name}: JSON lacks {', '.join(missing)}")
    wrong = [
        f"{key}={counts.get(key)} (expected {value})"
        for key, value in expected.items()
        if counts.get(key, value) != value
    ]
    if wrong:
        message = f"{name}: {', '.join(wrong)}"
        if message not in result.warnings:
            result.warnings.append(message)


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


def bench_size(workdir: Path, notes: int, seed: int, repeat: int) -> SizeResult:
    kb_dir = workdir / f"corpus-{notes}-seed{seed}"
    marker = ensure_corpus(kb_dir, notes, seed)
    notes_dir = kb_dir / "notes"
    result = SizeResult(notes=notes, corpus_mb=folder_bytes(notes_dir) / 1e6)
    links = marker.get("links", {})
    result.broken_links = links.get("broken_target", 0) + links.get("broken_anchor", 0)
    print(f"measuring {notes} notes ...", flush=True)
    measure_baselines(notes_dir, notes, repeat, result)
    measure_full(kb_dir, notes, result)
    measure_noop(kb_dir, notes, repeat, result)
    measure_one_file(kb_dir, notes, repeat, result)
    index_dir = kb_dir / "index"
    if not index_dir.is_dir():
        result.warnings.append(f"no index folder at {index_dir}")
    result.index_mb = folder_bytes(index_dir) / 1e6 if index_dir.is_dir() else 0.0
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
    lines = [
        f"== {result.notes:,} notes ({result.corpus_mb:.1f} MB of Markdown) ==",
        header,
        "-" * len(header),
    ]
    for m in result.measurements:
        seconds = f"{m.seconds:9.3f}" if m.runs else " " * 9
        ratio = f"{m.seconds / result.baseline_seconds:11.2f}x" if m.runs else " " * 12
        said = f"{m.kb_seconds:11.3f}" if m.kb_seconds is not None else " " * 11
        status = {True: "PASS", False: "MISS", None: ""}[m.passed]
        lines.append(
            f"{m.name:<34}{seconds}{ratio}{said}{m.peak_rss_mb:13.1f}  "
            f"{m.goal:<10}{status}".rstrip()
        )
    ratio = result.index_mb / result.corpus_mb if result.corpus_mb else 0.0
    lines.append(f"index size: {result.index_mb:.1f} MB ({ratio:.2f}x the notes)")
    for m in result.measurements:
        if m.counts:
            shown = ", ".join(f"{k}={m.counts[k]}" for k in COUNT_KEYS if k in m.counts)
            lines.append(f"  {m.name}: {shown}")
    lines.append(f"  the corpus has {result.broken_links} broken links by construction")
    if result.notes > GOAL_NOTES:
        lines.append(f"  goals are set for {GOAL_NOTES:,} notes and not judged at this size")
    lines += [f"WARNING: {w}" for w in result.warnings]
    return "\n".join(lines)


def machine_info(seed: int, repeat: int) -> dict:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "seed": seed,
        "repeat": repeat,
    }


def save_json(path: Path, info: dict, results: list[SizeResult]) -> None:
    sizes = []
    for result in results:
        entry = asdict(result)
        for row, m in zip(entry["measurements"], result.measurements, strict=True):
            row["seconds"] = m.seconds if m.runs else None
            row["ratio"] = m.seconds / result.baseline_seconds if m.runs else None
        sizes.append(entry)
    path.write_text(
        json.dumps({**info, "sizes": sizes}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[1000, 10_000],
        help="corpus sizes in notes (default: 1000 10000)",
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir(), "kb-bench"),
        help="where corpora and indexes are kept between runs",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each repeated measurement; the median is reported",
    )
    parser.add_argument("--seed", type=int, default=1, help="corpus seed (default 1)")
    parser.add_argument("--json-out", type=Path, help="also save the results as JSON here")
    args = parser.parse_args(argv)
    if args.repeat < 1 or min(args.sizes) < 1:
        parser.error("--repeat and --sizes must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        check_kb_runs()
        args.workdir.mkdir(parents=True, exist_ok=True)
        results = []
        for notes in args.sizes:
            result = bench_size(args.workdir, notes, args.seed, args.repeat)
            print(format_table(result), flush=True)
            results.append(result)
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.json_out:
        save_json(args.json_out, machine_info(args.seed, args.repeat), results)
        print(f"saved {args.json_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
