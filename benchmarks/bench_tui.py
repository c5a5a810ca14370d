"""Time the terminal UI with Textual's pilot: first screen, keystroke to results, a long note.

    python benchmarks/bench_tui.py [--sizes 1000 10000] [--workdir /tmp/kb-bench] [--repeat 3]
                                   [--seed 1] [--before REV] [--json-out FILE]
                                   [--kb DIR [DIR ...]]

Each measurement runs in a fresh child process (so the first screen includes importing
Textual and opening the store, as a user's `kb` does), headless at 120x40, with the file
watcher running. Baselines from the same run: `python -c pass`, `python -c "import
textual.app"` (what any Textual app pays before it draws anything), and with --before REV
the same UI measurements of kb as committed at REV (its kb/ unpacked under --workdir),
each figure then also given as a ratio to REV's. With --kb, the knowledge bases named are
measured instead of the generated corpora, their runs alternating (such as
scale_engines.py's homes, one per engine over the same notes: the first is the baseline of
the others' ratios).

- first screen: process start until the result list shows the newest notes;
- command palette: ctrl+p once the first screen's work is done, until the palette is up;
  then `redis` typed into it, each key until the palette has gathered its hits;
- keystroke to results: type each query one key at a time (Chinese and English), and time
  from each key press until the results for exactly that text are on screen; median, p95;
- long note: open the ~30 KB `long/long-note-30k.md` and time until its first part is on
  screen (readable), and until the whole note is laid out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench_relevance import kb_source
from common import (
    add_repeat,
    bench_parser,
    corpus_for,
    parse_bench_args,
    run_ingest,
    run_measured,
    write_json,
)

GOAL_FIRST_SCREEN = 1.5
GOAL_KEYSTROKE_P95 = 0.100
GOAL_PALETTE_OPEN = 0.300
GOAL_LONG_NOTE = 0.300
GOAL_LONG_NOTE_ALL = 1.0
QUERIES = [
    "显存带宽",
    "roofline",
    "分布式锁",
    "FSDP",
    "tokenizer",
    "量化 int8",
    "时间窗口",
    "kernel fusion",
    "缓存",
    "attention",
]

CHILD = r"""
PALETTE_QUERY = "redis"
import time
started = time.perf_counter()
import asyncio, json, sys
from kb.knowledge_base import KnowledgeBase
from kb.tui.app import make_app
from kb.tui.search_screen import SearchScreen

kb_dir, queries = sys.argv[1], json.loads(sys.argv[2])
shown = {}
original = SearchScreen.show_outcome

def recording(self, text, outcome):
    original(self, text, outcome)
    if text == self.query_text:
        shown.setdefault(text, time.perf_counter())

SearchScreen.show_outcome = recording

async def idle(app):
    # Every worker but the file watcher, which runs as long as the app.
    from textual.worker import WorkerCancelled
    running = [w for w in app.workers if w.group != "watch"]
    try:
        if running:  # (an empty list would mean every worker)
            await app.workers.wait_for_complete(running)
    except WorkerCancelled:
        pass

async def main():
    app = make_app(KnowledgeBase.open(kb_dir))
    out = {}
    async with app.run_test(size=(120, 40)) as pilot:
        results = None
        while True:
            await asyncio.sleep(0.005)
            if app.screen.id == "search":
                results = app.screen.query_one("#results")
                if results.option_count:
                    break
        out["first_screen"] = time.perf_counter() - started
        # The command palette: opened once the first screen's work is done, then a title
        # typed into it; each key until the palette has gathered its hits.
        from textual.command import CommandPalette
        await idle(app)
        await pilot.pause()
        opened = time.perf_counter()
        await pilot.press("ctrl+p")
        while not isinstance(app.screen, CommandPalette):
            await asyncio.sleep(0.002)
        out["palette_open"] = time.perf_counter() - opened
        palette_keys = []
        for key in PALETTE_QUERY:
            pressed = time.perf_counter()
            await pilot.press(key)
            await asyncio.sleep(0.01)  # the palette starts gathering on the next tick
            while any(
                w.group == CommandPalette._GATHER_COMMANDS_GROUP and w.is_running
                for w in app.workers
            ):
                await asyncio.sleep(0.002)
            palette_keys.append(time.perf_counter() - pressed)
        out["palette_keys"] = palette_keys
        await pilot.press("escape")
        while isinstance(app.screen, CommandPalette):
            await asyncio.sleep(0.002)
        latencies = []
        for query in queries:
            app.screen.query_one("#query").value = ""
            await idle(app)
            await pilot.pause()
            typed = ""
            for key in query:
                typed += key
                shown.pop(typed.strip(), None)
                pressed = time.perf_counter()
                await pilot.press(key)
                while typed.strip() and typed.strip() not in shown:
                    await asyncio.sleep(0.001)
                if typed.strip():
                    latencies.append((typed, shown[typed.strip()] - pressed))
        out["keystrokes"] = latencies
        note = kb_dir and app.kb.find_note("long/long-note-30k.md")
        screen = app.get_screen("note")
        opened = time.perf_counter()
        app.post_message(__import__("kb.tui.messages", fromlist=["x"]).OpenNote(note.id))
        document = None
        while True:
            await asyncio.sleep(0.002)
            if app.screen.id == "note" and app.screen.query("#doc"):
                document = app.screen.query_one("#doc")
                if document.source.strip() and document.children:
                    break
        out["long_first"] = time.perf_counter() - opened
        await idle(app)
        while screen.page is None or len(document.source) < len(screen.shown) - 10:
            await asyncio.sleep(0.005)
        await pilot.pause()
        out["long_all"] = time.perf_counter() - opened
    print(json.dumps(out))

asyncio.run(main())
"""


def child(kb_dir: Path, source: Path | None) -> dict:
    """One UI run; with ``source``, of the kb package in that folder."""
    argv = [sys.executable, "-c", CHILD, str(kb_dir), json.dumps(QUERIES, ensure_ascii=False)]
    env = dict(os.environ, PYTHONPATH=str(source)) if source else None
    done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env, cwd=source)
    if done.returncode != 0:
        raise SystemExit(f"the UI benchmark child failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def baseline(code: str, repeat: int) -> float:
    return statistics.median(
        run_measured([sys.executable, "-c", code]).seconds for _ in range(repeat)
    )


def percentile(values: list[float], share: float) -> float:
    # Not common.percentile (nearest rank): this one takes the next value up when share * n
    # is whole, and is kept so keystroke figures compare with earlier runs.
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def bench(args: argparse.Namespace, notes: int) -> dict:
    kb_dir, _ = corpus_for(args, notes)
    run_ingest(kb_dir, "--json")
    python = baseline("pass", args.repeat)
    textual = baseline("import textual.app", args.repeat)
    before = kb_source(args.before, args.workdir) if args.before else None
    # Runs of the two versions alternate, so that a busy moment of the machine slows both.
    runs, runs_before = [], []
    for _ in range(args.repeat):
        runs.append(child(kb_dir, None))
        if before:
            runs_before.append(child(kb_dir, before))
    result = {"notes": notes, "python": python, "import_textual": textual, **summary(runs)}
    if before:
        result["before"] = {"rev": args.before, **summary(runs_before)}
    return result


def bench_homes(args: argparse.Namespace) -> list[dict]:
    """The UI measurements of existing knowledge bases, their runs alternating."""
    for home in args.kb:
        run_ingest(home, "--json")  # nothing to do when they are built; a store must exist
    python = baseline("pass", args.repeat)
    textual = baseline("import textual.app", args.repeat)
    runs: dict[Path, list[dict]] = {home: [] for home in args.kb}
    for _ in range(args.repeat):
        for home in args.kb:
            runs[home].append(child(home, None))
    return [
        {"notes": home.name, "python": python, "import_textual": textual, **summary(done)}
        for home, done in runs.items()
    ]


def summary(runs: list[dict]) -> dict:
    """The medians (and keystroke percentiles) of a version's UI runs."""
    keystrokes = [seconds for run in runs for _, seconds in run["keystrokes"]]
    slowest = sorted((s, q) for run in runs for q, s in run["keystrokes"])[-5:]
    return {
        "first_screen": statistics.median(r["first_screen"] for r in runs),
        "keystroke_median": statistics.median(keystrokes),
        "keystroke_p95": percentile(keystrokes, 0.95),
        "keystroke_max": max(keystrokes),
        "keystrokes": len(keystrokes),
        "slowest": slowest,
        "palette_open": statistics.median(r["palette_open"] for r in runs),
        "palette_key_median": statistics.median(k for r in runs for k in r["palette_keys"]),
        "palette_key_max": max(k for r in runs for k in r["palette_keys"]),
        "long_first": statistics.median(r["long_first"] for r in runs),
        "long_all": statistics.median(r["long_all"] for r in runs),
    }


def table(result: dict) -> str:
    before = result.get("before", {})

    def row(name: str, key: str, base: float | None = None, goal: float | None = None) -> str:
        seconds = result[key]
        ratio = f"{seconds / base:6.2f}x" if base else "       "
        verdict = ("PASS" if seconds < goal else "MISS") if goal else ""
        goal_text = f"< {goal * 1000:.0f} ms" if goal else ""
        line = f"{name:38} {seconds * 1000:9.1f} ms {ratio}  {goal_text:10} {verdict:4}"
        if key in before:
            line += f"  {before[key] * 1000:9.1f} ms {seconds / before[key]:6.2f}x"
        return line

    rev = f"  {'at ' + before['rev']:>12} {'x that':>7}" if before else ""
    lines = [
        f"== {result['notes']:,} notes, headless 120x40 =="
        if isinstance(result["notes"], int)
        else f"== {result['notes']}, headless 120x40 ==",
        f"{'measurement':38} {'value':>12} {'x base':>7}  {'goal':10} {'':4}{rev}",
        row("python -c pass", "python"),
        row("import textual.app (baseline)", "import_textual"),
        row(
            "first screen (process start)",
            "first_screen",
            result["import_textual"],
            GOAL_FIRST_SCREEN,
        ),
        row("command palette open", "palette_open", goal=GOAL_PALETTE_OPEN),
        row("palette: a key to its hits, median", "palette_key_median"),
        row("palette: a key to its hits, max", "palette_key_max"),
        row(f"keystroke to results, median of {result['keystrokes']}", "keystroke_median"),
        row("keystroke to results, p95", "keystroke_p95", goal=GOAL_KEYSTROKE_P95),
        row("keystroke to results, max", "keystroke_max"),
        row("30 KB note: first part on screen", "long_first", goal=GOAL_LONG_NOTE),
        row("30 KB note: all laid out", "long_all", goal=GOAL_LONG_NOTE_ALL),
    ]
    for label, version in (("", result), (f" at {before.get('rev')}", before)):
        if version:
            lines.append(
                f"slowest keystrokes{label}: "
                + ", ".join(f"{q!r} {s * 1000:.0f} ms" for s, q in version["slowest"])
            )
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = bench_parser(__doc__)
    add_repeat(
        parser,
        3,
        "UI runs, each in a fresh process, and runs of each baseline; medians are reported",
    )
    parser.add_argument(
        "--before",
        metavar="REV",
        help="also measure kb as committed at REV, in the same run (ratios to it)",
    )
    parser.add_argument(
        "--kb",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="measure these knowledge bases (already built) instead of the generated corpora",
    )
    return parse_bench_args(parser, argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    results = []
    if args.kb:
        results = bench_homes(args)
        for result in results:
            print(table(result), flush=True)
            print(
                f"  x {results[0]['notes']}: keystroke p95 "
                f"{result['keystroke_p95'] / results[0]['keystroke_p95']:.2f}x, max "
                f"{result['keystroke_max'] / results[0]['keystroke_max']:.2f}x",
                flush=True,
            )
    for notes in [] if args.kb else args.sizes:
        result = bench(args, notes)
        results.append(result)
        print(table(result), flush=True)
    if args.json_out:
        write_json(args.json_out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
