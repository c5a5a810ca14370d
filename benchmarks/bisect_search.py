"""Compare warm search across commits, alternating, on one corpus (issue 40's bisect).

    python benchmarks/bisect_search.py CORPUS COMMIT [COMMIT ...] [--rounds 5] [--queries 60]
                                       [--workdir /tmp/kb-bisect] [--keep]

CORPUS is a folder made by generate_corpus.py (kb.yaml and notes/). Each commit is checked
out in a temporary git worktree and ingests its own copy of the corpus (the notes
hard-linked, the index its own); then each round runs every commit once, in a child process
with PYTHONPATH at its worktree, in an order that turns round each round, so a busy machine
weighs on all of them alike. A child times bench_search.py's warm queries (the same maker and
seed) after one untimed pass. Reported per commit: the median and p95 over the queries of
each query's median over rounds, and the ratio to the first commit, plus whether each query's
first page (paths in order) is the first commit's. Each figure is given twice: wall time, and
the searching thread's CPU time (SQLite runs in it), which a busy machine disturbs far less:
on a shared machine the CPU figures are the ones to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_search import LIMIT, QueryMaker
from common import REPO_ROOT, percentile

WORKER = """\
import json, sys, time
from kb.knowledge_base import KnowledgeBase
kb_dir, queries_file, passes = sys.argv[1], sys.argv[2], int(sys.argv[3])
queries = json.load(open(queries_file, encoding="utf-8"))
kb = KnowledgeBase.open(kb_dir)
pages = []
for text, prefix in queries:  # untimed: opens the store, fills caches
    try:
        pages.append([h.path for h in kb.search(text, limit=LIMIT, prefix=prefix).hits])
    except Exception as error:
        pages.append(repr(error))
seconds = [[] for _ in queries]
cpu = [[] for _ in queries]
for _ in range(passes):
    for number, (text, prefix) in enumerate(queries):
        start, start_cpu = time.perf_counter(), time.thread_time()
        try:
            kb.search(text, limit=LIMIT, prefix=prefix)
        except Exception:
            pass
        seconds[number].append(time.perf_counter() - start)
        cpu[number].append(time.thread_time() - start_cpu)
print(json.dumps({"seconds": seconds, "cpu": cpu, "pages": pages}))
""".replace("LIMIT", str(LIMIT))


def label(commit: str) -> str:
    return commit.partition("=")[0] if "=" in commit else git("rev-parse", "--short", commit)


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO_ROOT), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def prepare(commit: str, corpus: Path, workdir: Path) -> tuple[Path, Path]:
    """A worktree at commit and a knowledge base of its own over the corpus's notes. A
    folder instead of a commit (a working tree with changes) searches the knowledge base
    of the commit it names after '=' (``/work/wt=main``): its index must be the same."""
    if "=" in commit:
        tree, _, base = commit.partition("=")
        return Path(tree), prepare(base, corpus, workdir)[1]
    short = git("rev-parse", "--short", commit)
    tree = Path(f"/work/wt-speed-bisect-{short}")
    if not tree.exists():
        git("worktree", "add", "--detach", str(tree), commit)
    kb_dir = workdir / f"kb-{short}"
    if not (kb_dir / "index").exists():
        kb_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(corpus / "kb.yaml", kb_dir / "kb.yaml")
        if not (kb_dir / "notes").exists():
            subprocess.run(["cp", "-al", str(corpus / "notes"), str(kb_dir / "notes")], check=True)
        print(f"ingesting with {short} ...", file=sys.stderr, flush=True)
        subprocess.run(
            [sys.executable, "-m", "kb", "--kb", str(kb_dir), "ingest"],
            env=child_env(tree),
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return tree, kb_dir


def child_env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree), "KB_SEMANTIC": "off"}


def run_round(tree: Path, kb_dir: Path, queries_file: Path, passes: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, str(kb_dir), str(queries_file), str(passes)],
        env=child_env(tree),
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("commits", nargs="+")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--passes", type=int, default=1, help="timed passes per round")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kb-bisect"))
    parser.add_argument("--keep", action="store_true", help="keep the worktrees")
    args = parser.parse_args()

    queries = QueryMaker(random.Random(args.seed)).queries(args.queries)
    prepared = {c: prepare(c, args.corpus, args.workdir) for c in args.commits}
    times: dict[str, list[list[float]]] = {c: [[] for _ in queries] for c in args.commits}
    cpu: dict[str, list[list[float]]] = {c: [[] for _ in queries] for c in args.commits}
    pages: dict[str, list] = {}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump([[q.text, q.prefix] for q in queries], handle)
    queries_file = Path(handle.name)
    loads = []
    for number in range(args.rounds):
        order = (
            args.commits[number % len(args.commits) :] + args.commits[: number % len(args.commits)]
        )
        if number % 2:
            order.reverse()
        for commit in order:
            loads.append(os.getloadavg()[0])
            report = run_round(*prepared[commit], queries_file, args.passes)
            pages.setdefault(commit, report["pages"])
            for index, runs in enumerate(report["seconds"]):
                times[commit][index].extend(runs)
            for index, runs in enumerate(report["cpu"]):
                cpu[commit][index].extend(runs)
    queries_file.unlink()

    base = args.commits[0]
    print(f"load average (1 min) during the runs: {min(loads):.1f}-{max(loads):.1f}")
    print(f"{len(queries)} queries, {args.rounds} rounds x {args.passes} passes, alternating")
    print(
        "| commit | median ms | p95 ms | max ms | p95 / first "
        "| CPU median ms | CPU p95 ms | CPU p95 / first | pages as first |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    base_p95 = base_cpu = None
    for commit in args.commits:
        medians = [statistics.median(runs) for runs in times[commit]]
        cpu_medians = [statistics.median(runs) for runs in cpu[commit]]
        p95, cpu_p95 = percentile(medians, 95), percentile(cpu_medians, 95)
        base_p95, base_cpu = base_p95 or p95, base_cpu or cpu_p95
        same = sum(a == b for a, b in zip(pages[commit], pages[base], strict=True))
        print(
            f"| {label(commit)} | {statistics.median(medians) * 1000:.1f} "
            f"| {p95 * 1000:.1f} | {max(medians) * 1000:.1f} | {p95 / base_p95:.2f} "
            f"| {statistics.median(cpu_medians) * 1000:.1f} | {cpu_p95 * 1000:.1f} "
            f"| {cpu_p95 / base_cpu:.2f} | {same}/{len(queries)} |"
        )
    slow = sorted(
        range(len(queries)),
        key=lambda i: -statistics.median(cpu[args.commits[-1]][i]),
    )[:8]
    print("slowest queries of the last commit (CPU ms per commit):")
    for index in slow:
        cells = " / ".join(f"{statistics.median(cpu[c][index]) * 1000:.0f}" for c in args.commits)
        print(f"  {queries[index].kind:18} {queries[index].text!r:32} {cells}")
    if not args.keep:
        for tree, _ in prepared.values():
            if tree.name.startswith("wt-speed-bisect-") and tree.exists():
                git("worktree", "remove", "--force", str(tree))
    return 0


if __name__ == "__main__":
    sys.exit(main())
