"""Kill `kb ingest` N times at random moments and check that kb recovers every time.

For each engine (FTS5, and whoosh and tantivy when installed), on generated notes: start a parallel
ingest (over 300 changed notes) or a `--rebuild`, kill it after a random delay with SIGKILL,
SIGTERM or SIGHUP, then check that

- the killed process returned with its pipes closed (no worker kept them open),
- it exited as documented (143 for SIGTERM, 129 for SIGHUP; or 0 if it finished first),
- no parse worker outlived it,
- the next `kb ingest` succeeds at once (`--wait 0`: no lock left behind, not exit 3),
- `PRAGMA integrity_check` says ok,
- searches find the same notes as a fresh build of the same notes in another folder (as sets:
  whoosh's and tantivy's scores count deleted documents until segments merge, so their
  order may differ).

    python benchmarks/faults.py 10          # about 3 minutes on 2 cores
"""

from __future__ import annotations

import argparse
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from common import (
    REPO_ROOT,
    BenchError,
    child_env,
    ensure_corpus,
    kb_argv,
    last_line,
    note_files,
    open_kb,
    run_child,
)

SIGNALS = (signal.SIGKILL, signal.SIGTERM, signal.SIGHUP)
QUERIES = ("GPU", "matmul", "显存", "pipeline OR raft", "tag:journal", "deb*")
CHANGED = 310  # notes edited between states: over the 300 from which workers parse
CHECKS = ("pipes closed", "documented exit", "no worker left", "next ingest ok", "integrity ok")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("kills", type=int, help="kills per engine")
    parser.add_argument("--notes", type=int, default=350, help="generated notes (default 350)")
    parser.add_argument("--seed", type=int, default=1, help="corpus and kill-timing seed")
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir(), "kb-bench"),
        help="where the generated corpus is kept between runs (shared with the benchmarks)",
    )
    parser.add_argument(
        "--engine",
        choices=["fts5", "whoosh", "tantivy"],
        help="only this engine (default: every installed one)",
    )
    args = parser.parse_args(argv)
    if args.kills < 1 or args.notes <= CHANGED:
        parser.error(f"kills must be at least 1 and --notes over {CHANGED}")
    engines = [args.engine] if args.engine else ["fts5", "whoosh", "tantivy"]
    for engine, package in (("whoosh", "whoosh"), ("tantivy", "tantivy")):
        if engine in engines and run_child([sys.executable, "-c", f"import {package}"]).returncode:
            print(f"{package} is not installed: no {engine} runs")
            engines.remove(engine)
    if not engines:
        return 1
    rng = random.Random(args.seed)
    try:
        corpus = args.workdir / f"corpus-{args.notes}-seed{args.seed}"
        ensure_corpus(corpus, args.notes, args.seed)
        with tempfile.TemporaryDirectory(prefix="kb-faults-") as tmp:
            states = make_states(corpus / "notes", Path(tmp))
            for engine in engines:
                held = run_engine(engine, states, Path(tmp), args.kills, rng)
                print(report(engine, args.kills, held), flush=True)
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


# -- the notes in two states --------------------------------------------------------------


def make_states(notes: Path, tmp: Path) -> dict[str, Path]:
    """State A: the generated notes; state B: the same with CHANGED notes edited."""
    a, b = tmp / "notes-A", tmp / "notes-B"
    shutil.copytree(notes, a)
    shutil.copytree(notes, b)
    for path in note_files(b)[:CHANGED]:
        with path.open("a", encoding="utf-8") as note:
            note.write("\n故障注入 fault injection edit\n")
    return {"A": a, "B": b}


def switch(notes: Path, state: Path) -> None:
    """Make the notes folder hold the given state (only the differing files are written)."""
    for source in note_files(state):
        target = notes / source.relative_to(state)
        data = source.read_bytes()
        if target.read_bytes() != data:
            target.write_bytes(data)


def make_kb(folder: Path, notes: Path, engine: str) -> float:
    """A knowledge base of a copy of the notes, built; returns the build's seconds."""
    folder.mkdir(parents=True)
    shutil.copytree(notes, folder / "notes")
    (folder / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    return must_ingest(folder, "--rebuild", "--engine", engine)


def must_ingest(kb_dir: Path, *args: str) -> float:
    started = time.perf_counter()
    result = run_child(kb_argv(kb_dir, "ingest", "--json", *args))
    if result.returncode != 0:
        raise BenchError(f"kb ingest {' '.join(args)} failed: {last_line(result.stderr)}")
    return time.perf_counter() - started


def answers(kb_dir: Path) -> dict[str, list[str]]:
    """The notes each query finds, sorted (in this process: no start-up per query)."""
    kb = open_kb(kb_dir)
    return {
        query: sorted(hit.path for hit in kb.search(query, limit=1000).hits) for query in QUERIES
    }


# -- one engine ---------------------------------------------------------------------------


def run_engine(
    engine: str, states: dict[str, Path], tmp: Path, kills: int, rng: random.Random
) -> Counter[str]:
    print(f"{engine}: fresh builds of both states ...", flush=True)
    expected = {}
    for name, notes in states.items():
        make_kb(tmp / f"ref-{engine}-{name}", notes, engine)
        expected[name] = answers(tmp / f"ref-{engine}-{name}")
    kb_dir = tmp / f"work-{engine}"
    build_seconds = make_kb(kb_dir, states["A"], engine)
    state, held = "A", Counter[str]()
    for number in range(1, kills + 1):
        rebuild = rng.random() < 0.3
        if not rebuild:
            state = "B" if state == "A" else "A"
            switch(kb_dir / "notes", states[state])
        signum = rng.choice(SIGNALS)
        delay = rng.uniform(0.3, max(0.5, build_seconds * 0.9))
        outcome = kill_once(kb_dir, rebuild, signum, delay)
        found = answers(kb_dir)
        outcome["result sets equal"] = found == expected[state]
        held.update(name for name, ok in outcome.items() if ok)
        held[f"{signal.Signals(signum).name} during {'--rebuild' if rebuild else 'ingest'}"] += 1
        failed = [name for name, ok in outcome.items() if not ok]
        print(
            f"  kill {number}: {signal.Signals(signum).name} after {delay:.1f} s of "
            f"{'--rebuild' if rebuild else 'an ingest'}: "
            f"{'all held' if not failed else 'FAILED ' + ', '.join(failed)}",
            flush=True,
        )
        for query, paths in found.items():
            fresh = expected[state][query]
            if paths != fresh:
                print(f"    {query!r}: {len(paths)} hits, a fresh build has {len(fresh)}")
    return held


def kill_once(kb_dir: Path, rebuild: bool, signum: int, delay: float) -> dict[str, bool]:
    argv = kb_argv(kb_dir, "ingest", *(["--rebuild"] if rebuild else []))
    process = subprocess.Popen(
        argv,
        cwd=REPO_ROOT,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    time.sleep(delay)
    workers = children(process.pid)
    finished_first = process.poll() is not None
    if not finished_first:
        process.send_signal(signum)
    try:
        process.communicate(timeout=30)
        pipes_closed = True
    except subprocess.TimeoutExpired:
        pipes_closed = False
        process.kill()
        process.communicate()
    code = process.returncode
    documented = code == 0 if finished_first else code in (-signum, 128 + signum)
    deadline = time.monotonic() + 5
    while alive(workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = alive(workers)
    for pid in left:  # never leave them for the next round
        subprocess.run(["kill", "-9", str(pid)], check=False)
    next_run = run_child(kb_argv(kb_dir, "ingest", "--wait", "0", "--json"))
    return {
        "pipes closed": pipes_closed,
        "documented exit": documented,
        "no worker left": not left,
        "next ingest ok": next_run.returncode == 0,
        "integrity ok": integrity(kb_dir / "index" / "kb.sqlite"),
    }


def children(pid: int) -> list[int]:
    """Child processes of pid (Linux /proc; none elsewhere)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def alive(pids: list[int]) -> list[int]:
    return [pid for pid in pids if Path(f"/proc/{pid}").exists()]


def integrity(store: Path) -> bool:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
            return conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    except sqlite3.Error:
        return False


def report(engine: str, kills: int, held: Counter[str]) -> str:
    lines = [f"== {engine}: {kills} kills =="]
    lines += [f"  {name}: {count}" for name, count in sorted(held.items()) if " during " in name]
    lines += [f"  {name}: held {held[name]}/{kills}" for name in (*CHECKS, "result sets equal")]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
