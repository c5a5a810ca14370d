"""What the benchmark scripts share: timed child processes, the corpora under --workdir,
editing notes and putting them back, the command line, the loop over sizes and the small
pieces every report table is made of.

Each script keeps its own measurements, rows, tables and goals; only what they would otherwise
all write again lives here.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from generate_corpus import GENERATOR_VERSION, read_marker

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
GENERATOR = BENCH_DIR / "generate_corpus.py"
DIRTY_MARKER = "bench-editing"  # present while notes are edited; a leftover forces regeneration
COUNT_KEYS = ("added", "updated", "moved", "removed", "unchanged", "warnings")

# Goals are set for 10,000 notes; smaller corpora must meet them too, larger ones are not judged.
GOAL_NOTES = 10_000
# The speed benchmarks measure kb's words. Search by meaning (the semantic extra, when it
# is installed) has its own costs, measured by bench_meaning.py; bench_relevance.py, which
# judges kb with and without it, turns it back on.
SEMANTIC_SET_BY_USER = "KB_SEMANTIC" in os.environ
os.environ.setdefault("KB_SEMANTIC", "off")
WARM_ROUNDS = 3  # timed passes over warm queries or notes; each reports its median

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

R = TypeVar("R")


class BenchError(Exception):
    """A measurement could not be made; the message says why, on one line."""


@dataclass
class Run:
    seconds: float
    peak_rss_mb: float
    exit_code: int
    stdout: str
    stderr: str


# ---------------------------------------------------------------------------
# Running children
# ---------------------------------------------------------------------------


def child_env() -> dict[str, str]:
    # The repo root first on the path, so `-m kb` finds the working tree even when not installed.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    # Bytecode cached as an installed kb has it (pip compiles it): with
    # PYTHONDONTWRITEBYTECODE set, as in some shells and containers, every cold run
    # compiled kb's modules again, 60-70 ms of a 0.23 s `kb search` at 100,000 notes. The
    # cache lives outside the repo, so the working tree gets no __pycache__ folders.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "kb-bench-pycache")
    return env


def run_child(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """argv from the repo root, as every child runs, with its output captured as text."""
    return subprocess.run(
        argv, cwd=REPO_ROOT, env=child_env(), capture_output=True, text=True, check=False
    )


def rss_to_mb(maxrss: int) -> float:
    # ru_maxrss is bytes on macOS and KiB on Linux and the BSDs.
    return maxrss / 1e6 if sys.platform == "darwin" else maxrss * 1024 / 1e6


def run_measured(argv: list[str]) -> Run:
    """Run argv as a grandchild of a small launcher; return its wall time and peak RSS."""
    with tempfile.TemporaryDirectory(prefix="kb-bench-") as tmp:
        out, err = Path(tmp, "stdout"), Path(tmp, "stderr")
        launcher = run_child([sys.executable, "-c", LAUNCHER, str(out), str(err), *argv])
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


def kb_argv(kb_dir: Path, command: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "kb", "--kb", str(kb_dir), command, *args]


def run_startup() -> float:
    """Seconds of one `python -c pass`, the baseline of cold runs."""
    run = run_measured([sys.executable, "-c", "pass"])
    if run.exit_code != 0:
        raise BenchError(f"python -c pass exited with {run.exit_code}: {last_line(run.stderr)}")
    return run.seconds


@contextmanager
def tiny_kb() -> Iterator[Path]:
    """A throwaway knowledge base with one note, to learn early whether kb runs at all."""
    with tempfile.TemporaryDirectory(prefix="kb-bench-check-") as tmp:
        kb_dir = Path(tmp)
        (kb_dir / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
        (kb_dir / "notes").mkdir()
        (kb_dir / "notes" / "hello.md").write_text("# Hello\n\n显存带宽\n", encoding="utf-8")
        yield kb_dir


def check_kb_runs() -> None:
    """Fail early, on one line, when kb cannot ingest even one note with this Python."""
    with tiny_kb() as kb_dir:
        result = run_child(kb_argv(kb_dir, "ingest", "--json"))
    if result.returncode != 0:
        hint = " (is kb installed in this Python?)" if "ModuleNotFound" in result.stderr else ""
        raise BenchError(
            f"`{Path(sys.executable).name} -m kb ingest` does not run from "
            f"{REPO_ROOT}: {last_line(result.stderr)}{hint}"
        )


# ---------------------------------------------------------------------------
# Ingests
# ---------------------------------------------------------------------------


def run_ingest(kb_dir: Path, *args: str) -> tuple[Run, dict | None]:
    run = run_measured(kb_argv(kb_dir, "ingest", *args))
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


def reported(counts: dict | None, key: str = "seconds") -> float | None:
    """A number kb put in its ingest JSON, or None when it did not."""
    value = (counts or {}).get(key)
    return float(value) if isinstance(value, int | float) else None


def expect(warnings: list[str], name: str, counts: dict | None, **expected: int) -> None:
    """Record a warning when kb's counts are not what this run must have produced."""
    if counts is None:
        warnings.append(f"{name}: no JSON object on stdout")
        return
    missing = [key for key in COUNT_KEYS if key not in counts]
    if missing:
        warnings.append(f"{name}: JSON lacks {', '.join(missing)}")
    wrong = [
        f"{key}={counts.get(key)} (expected {value})"
        for key, value in expected.items()
        if counts.get(key, value) != value
    ]
    if wrong:
        message = f"{name}: {', '.join(wrong)}"
        if message not in warnings:
            warnings.append(message)


# ---------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------


def corpus_dir(workdir: Path, notes: int, seed: int) -> Path:
    return workdir / f"corpus-{notes}-seed{seed}"


def corpus_for(args: argparse.Namespace, notes: int) -> tuple[Path, dict]:
    """The shared corpus of this size under --workdir, reused or generated, and its marker."""
    kb_dir = corpus_dir(args.workdir, notes, args.seed)
    return kb_dir, ensure_corpus(kb_dir, notes, args.seed)


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
    """Bytes of every file below folder; 0 when there is no such folder (yet)."""
    if not folder.is_dir():
        return 0
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


# ---------------------------------------------------------------------------
# Editing notes
# ---------------------------------------------------------------------------


def notes_to_edit(files: list[Path], count: int) -> list[Path]:
    # Spread over the corpus so each edit lands in a different folder and note.
    step = max(1, len(files) // (count + 1))
    return [files[(i + 1) * step % len(files)] for i in range(count)]


@contextmanager
def editing(kb_dirs: Iterable[Path], paths: Iterable[Path]) -> Iterator[dict[Path, bytes]]:
    """Mark the corpora as being edited and put the notes' bytes back afterwards, crash or not.

    Yields the original bytes by path. A marker left by a crash makes the next run start
    from a fresh corpus, since the notes may then differ from what the generator wrote.
    """
    originals = {path: path.read_bytes() for path in paths}
    markers = [kb_dir / DIRTY_MARKER for kb_dir in kb_dirs]
    for marker in markers:
        marker.touch()
    try:
        yield originals
    finally:
        for path, data in originals.items():
            path.write_bytes(data)
        for marker in markers:
            marker.unlink()


def not_restored(originals: dict[Path, bytes]) -> list[Path]:
    return [path for path, data in originals.items() if path.read_bytes() != data]


def ingest_edited(
    kb_dir: Path, path: Path, number: int, notes: int, warnings: list[str], name: str
) -> tuple[Run, dict | None]:
    """Append a line to one note and ingest; kb must update that note and nothing else."""
    with path.open("a", encoding="utf-8") as note:
        note.write(f"\n追加的一行 benchmark edit {number}\n")
    run, counts = run_ingest(kb_dir, "--json")
    expect(warnings, name, counts, added=0, updated=1, moved=0, removed=0, unchanged=notes - 1)
    return run, counts


# ---------------------------------------------------------------------------
# Warm: kb in this process
# ---------------------------------------------------------------------------


def open_kb(kb_dir: Path) -> Any:
    # The working tree first, as for the children (child_env).
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from kb.knowledge_base import KnowledgeBase

    return KnowledgeBase.open(kb_dir)


# ---------------------------------------------------------------------------
# Command line and the loop over sizes
# ---------------------------------------------------------------------------


def bench_parser(
    doc: str,
    workdir_help: str = (
        "where corpora and indexes are kept between runs (shared with bench_ingest.py)"
    ),
) -> argparse.ArgumentParser:
    """A parser with the options every script starts with; the script adds its own next."""
    parser = argparse.ArgumentParser(description=doc.partition("\n\n")[0])
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
        help=workdir_help,
    )
    return parser


def add_repeat(parser: argparse.ArgumentParser, default: int, meaning: str) -> None:
    # Every script repeats its runs, but what one repetition is and how many it takes differ.
    parser.add_argument("--repeat", type=int, default=default, help=meaning)


def parse_bench_args(
    parser: argparse.ArgumentParser,
    argv: list[str] | None,
    *,
    seed_help: str = "corpus seed (default 1)",
    at_least_one: Sequence[str] = ("repeat",),
) -> argparse.Namespace:
    """Add the options every script ends with, parse, and refuse counts below 1."""
    parser.add_argument("--seed", type=int, default=1, help=seed_help)
    parser.add_argument("--json-out", type=Path, help="also save the results as JSON here")
    args = parser.parse_args(argv)
    if min(args.sizes) < 1 or any(getattr(args, name) < 1 for name in at_least_one):
        options = [f"--{name.replace('_', '-')}" for name in [*at_least_one, "sizes"]]
        parser.error(f"{', '.join(options[:-1])} and {options[-1]} must be at least 1")
    return args


def machine_info(seed: int, repeat: int) -> dict:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "seed": seed,
        "repeat": repeat,
    }


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def run_sizes(
    args: argparse.Namespace,
    bench_size: Callable[[argparse.Namespace, int], R],
    format_table: Callable[[R], str],
    size_entry: Callable[[R], dict] = asdict,
    *,
    extra_info: dict | None = None,
    checks: Sequence[Callable[[], None]] = (check_kb_runs,),
    folder: Path | None = None,
    load_average: bool = True,
) -> int:
    """Check kb runs, bench each size and print its table, then save the JSON (--json-out).

    A BenchError ends the run with a one-line message and exit code 1. `folder` (by default
    --workdir) is created first; `size_entry` turns one size's result into its JSON object.
    """
    info = machine_info(args.seed, args.repeat) | (extra_info or {})
    if load_average:
        info["load_average"] = [os.getloadavg()[0]]
        print(f"load average {info['load_average'][0]:.2f} on {os.cpu_count()} CPUs", flush=True)
    try:
        for check in checks:
            check()
        (folder or args.workdir).mkdir(parents=True, exist_ok=True)
        results = []
        for notes in args.sizes:
            result = bench_size(args, notes)
            print(format_table(result), flush=True)
            results.append(result)
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if load_average:
        # Other work on a shared machine skews every figure; the load average says how much.
        info["load_average"].append(os.getloadavg()[0])
        print(f"load average {info['load_average'][1]:.2f} at the end", flush=True)
    if args.json_out:
        write_json(args.json_out, {**info, "sizes": [size_entry(r) for r in results]})
        print(f"saved {args.json_out}")
    return 0


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile: an observed value, never an interpolation."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


def show_seconds(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def status(passed: bool | None) -> str:
    return {True: "PASS", False: "MISS", None: ""}[passed]


def table_heading(notes: int, megabytes: float) -> str:
    return f"== {notes:,} notes ({megabytes:.1f} MB of Markdown) =="


def header_lines(header: str) -> list[str]:
    return [header, "-" * len(header)]


SCALE_NOTES = 100_000  # issue 15's goals are set for this size


def not_judged(notes: int) -> list[str]:
    if notes <= GOAL_NOTES:
        return []
    if notes == SCALE_NOTES:
        return [f"  at {SCALE_NOTES:,} notes only issue 15's goals are judged"]
    return [f"  goals are set for {GOAL_NOTES:,} notes and not judged at this size"]


def warning_lines(warnings: list[str]) -> list[str]:
    return [f"WARNING: {w}" for w in warnings]
