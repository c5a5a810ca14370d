"""What search by meaning costs (kb/meaning): embedding time, one edited note, a query's
added cost, store growth; each as a ratio to the same run's words-only figure.

    python benchmarks/bench_meaning.py [--notes 10000] [--seed 1] [--workdir DIR]
                                       [--json-out FILE]

The corpus is benchmarks/generate_corpus.py's (cached under --workdir). In this process:

1. `kb ingest` with `KB_SEMANTIC=off` (the words only): seconds and store bytes.
2. `kb ingest` again with meaning on: only the embedding runs (the words are up to date):
   wall and CPU seconds, characters embedded, store growth against the notes' bytes.
3. One note edited, `kb ingest`: the embedding seconds of that one note.
4. Queries: each question of QUESTIONS searched with `--lexical` and with meaning, warm
   (the model loaded, as in the app or the servers), median of --repeat passes; the added
   milliseconds (the query's vector encoded anew each time, and kept), and the
   nearest-passage step alone, on the corpus and on its passages tiled up to about what
   100,000 generated notes hold (TILED_TO; the timing only: copies tie, so which notes
   it finds says nothing). The first query of a process also loads the model: reported.

CPU seconds are given beside wall seconds because the machine is shared: wall time there
says more about the neighbours than about kb.

    python benchmarks/bench_meaning.py --cold [--notes 1000] [--corpus DIR ...] [--runs 9]
                                       [--baseline-source CHECKOUT] [--json-out FILE]

With --cold: what one question costs from the shell, a whole `kb search "<question>"`
process with meaning against the same with `--lexical`, on the generated corpus of --notes
notes and on each --corpus folder (its Markdown copied under --workdir and ingested with
meaning there). The modes are run in turn, --runs times, each run a fresh process (the
operating system's file cache warm, as for a user's second search); medians of wall and of
CPU seconds (user + system, the child's own), and each mode's ratio to `--lexical`.
--baseline-source runs the same searches with another checkout's kb (e.g. the last landed
main) in the same rotation, so that before and after are measured together.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
sys.path.insert(0, str(BENCH_DIR))

TILED_TO = 1_170_000  # passages: about what 100,000 generated notes hold (117,205 per 10,000)

QUESTIONS = [
    "怎么让分布式缓存在节点宕机后仍然可用",
    "how do I make a slow database query faster",
    "为什么训练的时候显存会不够用",
    "what happens when two writers update the same row",
    "如何减少服务之间调用的延迟",
    "which tools help to find a memory leak",
]


def store_bytes(kb_dir: Path) -> int:
    """The store's size with its write-ahead log folded in (a WAL of a few MB left by the
    last ingest would otherwise count on one side of the comparison and not the other)."""
    import sqlite3

    conn = sqlite3.connect(kb_dir / "index" / "kb.sqlite")
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return sum(p.stat().st_size for p in (kb_dir / "index").glob("kb.sqlite*"))


def table_bytes(kb_dir: Path, *tables: str) -> int:
    """Pages of these tables and their indexes (SQLite's dbstat), in bytes."""
    import sqlite3

    conn = sqlite3.connect(kb_dir / "index" / "kb.sqlite")
    try:
        marks = ",".join("?" * len(tables))
        row = conn.execute(
            f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({marks}) OR name IN "
            f"(SELECT name FROM sqlite_master WHERE tbl_name IN ({marks}))",
            (*tables, *tables),
        ).fetchone()
        return int(row[0] or 0)
    finally:
        conn.close()


def notes_bytes(kb_dir: Path) -> int:
    return sum(p.stat().st_size for p in (kb_dir / "notes").rglob("*.md"))


def timed(call):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    value = call()
    return value, time.perf_counter() - wall, time.process_time() - cpu


# --cold: one question a process. A question, so that meaning joins the ranking.
COLD_QUESTIONS = {
    "generated": "how do I make a slow database query faster",
    "advanced-java-zh": "怎么保证消息队列里的消息不会丢失",
}
COLD_DEFAULT_QUESTION = "how do I make a slow database query faster"
# A launcher that reports the child's own CPU seconds beside its wall seconds.
COLD_LAUNCHER = """\
import json, os, sys, time
argv = sys.argv[1:]
devnull = os.open(os.devnull, os.O_WRONLY)
actions = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
start = time.perf_counter()
pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime,
                  "code": os.waitstatus_to_exitcode(status)}))
"""


def generated_corpus(workdir: Path, notes: int, seed: int) -> Path:
    import subprocess

    kb_dir = workdir / f"gen-{notes}-{seed}"
    if not (kb_dir / "corpus.json").exists():
        subprocess.run(
            [sys.executable, str(BENCH_DIR / "generate_corpus.py"), str(kb_dir), "--notes",
             str(notes), "--seed", str(seed), "--quiet"],
            check=True,
        )  # fmt: skip
    return kb_dir


def copied_corpus(workdir: Path, folder: Path) -> Path:
    """The folder's Markdown copied under workdir (kb ingest writes index/ beside the
    notes: the shared corpora are only read)."""
    import shutil

    kb_dir = workdir / f"corpus-{folder.name}"
    if not (kb_dir / "kb.yaml").exists():
        for note in folder.rglob("*.md"):
            target = kb_dir / "notes" / note.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(note, target)
        (kb_dir / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    return kb_dir


def cold_env(source: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("KB_SEMANTIC", "PYTHONPATH")}
    env["PYTHONPATH"] = str(source)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as an installed kb has it
    import tempfile

    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / f"kb-cold-{source.name}")
    return env


def cold_run(source: Path, kb_dir: Path, *search: str) -> tuple[float, float]:
    import subprocess

    argv = [sys.executable, "-m", "kb", "--kb", str(kb_dir), "search", *search]
    # From the checkout's folder: `python -m` puts the current folder first on the path.
    done = subprocess.run(
        [sys.executable, "-c", COLD_LAUNCHER, *argv],
        cwd=source, env=cold_env(source), capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(done.stdout)
    if report["code"] not in (0, 1):  # 1: nothing found, which a question may be
        raise SystemExit(f"kb search {' '.join(search)} exited with {report['code']}")
    return report["wall"], report["cpu"]


def cold_main(args: argparse.Namespace) -> int:
    import subprocess

    this = BENCH_DIR.parent
    corpora = [("generated", generated_corpus(args.workdir, args.notes, args.seed))]
    corpora += [(folder.name, copied_corpus(args.workdir, folder)) for folder in args.corpus]
    results = []
    for label, kb_dir in corpora:
        ingest = [sys.executable, "-m", "kb", "--kb", str(kb_dir), "ingest"]
        subprocess.run(ingest, cwd=this, env=cold_env(this), check=True, capture_output=True)
        question = COLD_QUESTIONS.get(label, COLD_DEFAULT_QUESTION)
        modes = {"lexical": (this, ("--lexical", question)), "meaning": (this, (question,))}
        if args.baseline_source:
            modes["meaning (baseline)"] = (args.baseline_source, (question,))
            modes["lexical (baseline)"] = (args.baseline_source, ("--lexical", question))
        for source, search in modes.values():
            cold_run(source, kb_dir, *search)  # bytecode compiled, the model's cache made
        times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
        for turn in range(args.runs):
            names = list(modes)
            for mode in names[turn % len(names) :] + names[: turn % len(names)]:
                source, search = modes[mode]
                times[mode].append(cold_run(source, kb_dir, *search))
        notes = sum(1 for _ in (kb_dir / "notes").rglob("*.md"))
        wall = {mode: statistics.median(t[0] for t in runs) for mode, runs in times.items()}
        cpu = {mode: statistics.median(t[1] for t in runs) for mode, runs in times.items()}
        for mode in modes:
            lexical = "lexical (baseline)" if "baseline" in mode else "lexical"
            results.append({
                "corpus": label, "notes": notes, "question": question, "mode": mode,
                "wall_s": round(wall[mode], 3), "cpu_s": round(cpu[mode], 3),
                "wall_vs_lexical": round(wall[mode] / wall[lexical], 2),
                "cpu_vs_lexical": round(cpu[mode] / cpu[lexical], 2),
            })  # fmt: skip
    print(f"cold kb search, median of {args.runs} runs each, modes in turn; load average "
          f"{os.getloadavg()[0]:.1f} at the end")  # fmt: skip
    print("| corpus | notes | mode | wall s | CPU s | wall / lexical | CPU / lexical |")
    print("|---|---|---|---|---|---|---|")
    for row in results:
        print(f"| {row['corpus']} | {row['notes']} | {row['mode']} | {row['wall_s']:.2f} | "
              f"{row['cpu_s']:.2f} | {row['wall_vs_lexical']:.2f}x | "
              f"{row['cpu_vs_lexical']:.2f}x |")  # fmt: skip
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--notes", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kb-bench-meaning"))
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--cold", action="store_true", help="one question a process")
    parser.add_argument("--corpus", type=Path, action="append", default=[])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--baseline-source", type=Path)
    args = parser.parse_args(argv)
    if args.cold:
        args.notes = args.notes or 1_000
        return cold_main(args)
    args.notes = args.notes or 10_000

    kb_dir = generated_corpus(args.workdir, args.notes, args.seed)
    for stale in (kb_dir / "index").glob("kb.sqlite*"):
        stale.unlink()

    from kb.knowledge_base import KnowledgeBase

    os.environ["KB_SEMANTIC"] = "off"
    kb = KnowledgeBase.open(kb_dir)
    words, words_wall, words_cpu = timed(kb.ingest)
    lexical_bytes = store_bytes(kb_dir)
    os.environ.pop("KB_SEMANTIC")
    embedded, embed_wall, embed_cpu = timed(kb.ingest)
    from kb.meaning.index import VectorIndex, vector_index

    meaning = kb.by_meaning.configured()
    assert meaning is not None, "the semantic extra is not installed"
    embedder = meaning.embedder()
    store = kb._store  # the benchmark reads the store's counts directly
    passages = store.vectors.count()
    meaning_bytes = store_bytes(kb_dir)
    vector_bytes = table_bytes(kb_dir, "passages", "embedded")

    note = sorted((kb_dir / "notes").rglob("*.md"))[len(words.changes) // 2]
    original = note.read_bytes()
    try:
        note.write_bytes(original + "\n\n补一段：缓存击穿时先加互斥锁再回源。\n".encode())
        edited, edited_wall, _ = timed(kb.ingest)
    finally:
        note.write_bytes(original)
        kb.ingest()

    def median_ms(call, repeat: int) -> float:  # type: ignore[no-untyped-def]
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            call()
            times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times)

    first = time.perf_counter()
    kb.search(QUESTIONS[0])
    first_ms = (time.perf_counter() - first) * 1000
    from kb.meaning.hybrid import Meaning

    def asked_anew(q: str) -> None:  # the query's vector not yet kept: encoded here
        Meaning._queries.clear()
        kb.search(q)

    lexical_ms = [median_ms(lambda q=q: kb.search(q, lexical=True), args.repeat) for q in QUESTIONS]
    hybrid_ms = [median_ms(lambda q=q: asked_anew(q), args.repeat) for q in QUESTIONS]
    cached_ms = [median_ms(lambda q=q: kb.search(q), args.repeat) for q in QUESTIONS]
    encode_ms = median_ms(lambda: embedder.encode_query(QUESTIONS[1]), args.repeat)
    index = vector_index(store, embedder)
    assert index is not None
    query = embedder.encode_query(QUESTIONS[1])
    nearest_ms = median_ms(lambda: index.nearest(query, 30), args.repeat)
    import copy

    import numpy as np

    scaled = {}  # the nearest-passage step over the passages tiled up to TILED_TO, by signs
    for times in [round(TILED_TO / passages)] if 0 < passages * 2 <= TILED_TO else []:
        big = copy.copy(VectorIndex(store, embedder.dimensions, exact_at_most=0))
        assert big.codes is not None and big.signs is not None
        big.codes = np.tile(big.codes, (times, 1))
        big.signs = np.tile(big.signs, (1, times))
        big.notes = np.tile(big.notes, times)
        big.positions = np.tile(big.positions, times)
        scaled[times] = median_ms(lambda big=big: big.nearest(query, 30), args.repeat)
        del big
    lex = statistics.mean(lexical_ms)
    hyb = statistics.mean(hybrid_ms)
    size = notes_bytes(kb_dir)
    chars = sum(len(p.read_text(encoding="utf-8")) for p in (kb_dir / "notes").rglob("*.md"))
    result = {
        "notes": words.added,
        "notes_mb": round(size / 1e6, 1),
        "characters": chars,
        "words_ingest_s": round(words_wall, 1),
        "words_ingest_cpu_s": round(words_cpu, 1),
        "embed_s": round(embed_wall, 1),
        "embed_cpu_s": round(embed_cpu, 1),
        "embed_vs_words_cpu": round(embed_cpu / words_cpu, 2),
        "embedded_notes": embedded.embedded,
        "passages": passages,
        "chars_per_cpu_s": round(chars / embed_cpu),
        "edited_note_embed_s": round(edited.embed_seconds, 3),
        "edited_ingest_s": round(edited_wall, 3),
        "store_lexical_mb": round(lexical_bytes / 1e6, 1),
        "store_meaning_mb": round(meaning_bytes / 1e6, 1),
        "store_growth_vs_notes": round((meaning_bytes - lexical_bytes) / size, 2),
        "vector_tables_mb": round(vector_bytes / 1e6, 2),
        "vector_tables_vs_notes": round(vector_bytes / size, 2),
        "first_query_ms (loads the model)": round(first_ms),
        "lexical_query_ms": round(lex, 1),
        "hybrid_query_ms": round(hyb, 1),
        "hybrid_vs_lexical": round(hyb / lex, 2),
        "hybrid_query_ms (vector kept)": round(statistics.mean(cached_ms), 1),
        "encode_query_ms": round(encode_ms, 1),
        "nearest_ms": round(nearest_ms, 1),
    }
    for times, ms in scaled.items():
        result[f"nearest_ms_at_{passages * times}_passages (tiled)"] = round(ms, 1)
    width = max(map(len, result))
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=1), encoding="utf-8")
    kb.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
