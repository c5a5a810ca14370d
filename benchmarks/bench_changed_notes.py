"""What looking for changed notes costs a command that reads notes (kb.yaml's
`changed_notes`): the stat walk of the notes roots and the store's stamps, against a cold
`kb recent -n 5` with the look turned off, alternating in one loop.

    python benchmarks/bench_changed_notes.py --kb DIR [--kb DIR ...] [--repeat 7]

Each DIR is a knowledge base made by generate_corpus.py. With a store (`kb ingest` run),
every figure is measured; without one, only the walk (it dominates: the stamps are one
SQLite scan), so a 100,000-note corpus can be measured without its long ingest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

CHECK = """
import sys, time
from kb import KnowledgeBase
from kb.ingest.walk import collector_paused, scan_root
kb = KnowledgeBase.open(sys.argv[1])
started = time.perf_counter()
with collector_paused():
    files = sum(len(scan_root(root, kb.config).files) for root in kb.config.roots)
walked = time.perf_counter() - started
if kb.config.store_path.exists():
    started = time.perf_counter()
    changes = kb.changes_since_ingest()
    print(files, walked, time.perf_counter() - started, changes.total)
else:
    print(files, walked, -1, -1)
"""


def kb_command() -> str:
    return str(Path(sys.executable).parent / "kb")


def timed(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True)
    return time.perf_counter() - started


def with_setting(home: Path, setting: str) -> None:
    config = home / "kb.yaml"
    kept = [line for line in config.read_text().splitlines() if "changed_notes" not in line]
    config.write_text("\n".join([*kept, f"changed_notes: {setting}", ""]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, action="append", required=True)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    env = {**os.environ, "KB_SEMANTIC": "off"}
    for home in args.kb:
        original = (home / "kb.yaml").read_text()
        walks, checks, offs, ons = [], [], [], []
        files = 0
        try:
            for _ in range(args.repeat):
                out = subprocess.run(
                    [sys.executable, "-c", CHECK, str(home)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()
                files, walk, check = int(out[0]), float(out[1]), float(out[2])
                walks.append(walk)
                if check < 0:
                    continue
                checks.append(check)
                recent = [kb_command(), "--kb", str(home), "recent", "-n", "5"]
                with_setting(home, "off")
                offs.append(timed(recent, env))
                with_setting(home, "ingest")
                ons.append(timed(recent, env))
        finally:
            (home / "kb.yaml").write_text(original)
        line = f"{home}: {files:,} notes; the walk {statistics.median(walks) * 1000:.0f} ms"
        if checks:
            off, on = statistics.median(offs), statistics.median(ons)
            line += (
                f", walk and stamps {statistics.median(checks) * 1000:.0f} ms; cold kb recent "
                f"{off * 1000:.0f} ms without the look, {on * 1000:.0f} ms with it "
                f"({on / off:.2f}x)"
            )
        print(line, flush=True)


if __name__ == "__main__":
    main()
