"""kb mv killed while it rewrites links (SIGKILL, SIGTERM, SIGHUP), and a file saved
again and again while it moves: after the next kb command every file is wholly before or
wholly after the move, no link is broken and no saved line is lost."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase

pytestmark = pytest.mark.slow

BACKLINKS = 1500
BEFORE = "# l{n}\n\nsee [the target](t.md#t) and [[t]].\r\n"
AFTER = "# l{n}\n\nsee [the target](zz.md#t) and [[zz]].\r\n"


def _kb(make_kb) -> KnowledgeBase:
    notes: dict[str, str | bytes] = {"t.md": "# T\n\nthe target\n"}
    for n in range(BACKLINKS):
        notes[f"l{n:04}.md"] = BEFORE.format(n=n).encode()
    kb = make_kb(notes)
    kb.ingest()
    kb.close()
    return kb


def _kb_command(kb: KnowledgeBase, *args: str) -> list[str]:
    return [sys.executable, "-m", "kb", "--kb", str(kb.home), *args]


def _wait_until_rewritten(path: Path, process: subprocess.Popen, deadline: float) -> None:
    original = path.read_bytes()
    while time.monotonic() < deadline:
        try:
            if path.read_bytes() != original:
                return
        except FileNotFoundError:
            pass
        if process.poll() is not None:
            pytest.fail(f"kb mv ended before {path.name} was rewritten: {process.stderr}")
        time.sleep(0.0005)
    pytest.fail(f"{path.name} was never rewritten")


def _state(kb: KnowledgeBase) -> tuple[str, set[str]]:
    """Where the note is, and which version each linking file holds."""
    root = kb.notes_root
    where = "before" if (root / "t.md").exists() else "after"
    versions = set()
    for n in range(BACKLINKS):
        text = (root / f"l{n:04}.md").read_bytes().decode()
        if text == BEFORE.format(n=n):
            versions.add("before")
        elif text == AFTER.format(n=n):
            versions.add("after")
        else:
            versions.add(f"neither: l{n:04}.md {text!r}")
    return where, versions


@pytest.mark.parametrize(
    ("signum", "first_rewritten"),
    [
        (signal.SIGKILL, "l0000.md"),
        (signal.SIGKILL, "l0700.md"),
        (signal.SIGTERM, "l0000.md"),
        (signal.SIGHUP, "l0300.md"),
    ],
)
def test_a_killed_move_is_finished_or_undone_by_the_next_command(
    make_kb, signum: int, first_rewritten: str
) -> None:
    kb = _kb(make_kb)
    process = subprocess.Popen(
        _kb_command(kb, "mv", "t.md", str(kb.notes_root / "zz.md")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_until_rewritten(kb.notes_root / first_rewritten, process, time.monotonic() + 120)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    if signum == signal.SIGKILL:
        assert (kb.config.index_dir / "kb-mv.journal").exists()
    else:  # SIGTERM and SIGHUP put every file back, as Ctrl-C does
        assert process.returncode == 128 + signum
        assert "stopped by" in stderr
        assert not (kb.config.index_dir / "kb-mv.journal").exists()

    after = subprocess.run(
        _kb_command(kb, "check"), capture_output=True, text=True, timeout=120, check=False
    )
    where, versions = _state(kb)
    assert versions == {where}, versions
    if signum == signal.SIGKILL:
        assert f"an interrupted 'kb mv {kb.notes_root / 't.md'}" in after.stderr
        assert ("was undone" if where == "before" else "was finished") in after.stderr
    assert after.returncode == 0, after.stdout + after.stderr  # no broken link anywhere
    assert not (kb.config.index_dir / "kb-mv.journal").exists()
    assert not list(kb.notes_root.glob(".*.kb-mv"))  # no temporary file left


def test_a_file_saved_during_the_move_loses_no_line(make_kb) -> None:
    """An editor or a sync tool appends to a linking file every few milliseconds while a
    note with 1,500 backlinks moves: every appended line is there afterwards, whether the
    move went through or stopped."""
    kb = _kb(make_kb)
    busy = kb.notes_root / f"l{BACKLINKS - 1:04}.md"
    appended: list[str] = []
    stop = threading.Event()

    def append() -> None:
        n = 0
        while not stop.is_set():
            line = f"appended line {n}\n"
            with busy.open("a", encoding="utf-8") as out:
                out.write(line)
            appended.append(line)
            n += 1
            time.sleep(0.002)

    writer = threading.Thread(target=append)
    writer.start()
    try:
        result = subprocess.run(
            _kb_command(kb, "mv", "t.md", str(kb.notes_root / "zz.md")),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        stop.set()
        writer.join()
    text = busy.read_text(encoding="utf-8")
    assert all(line in text for line in appended), result.stderr
    assert len(appended) > 10
    if result.returncode == 0:
        assert "[the target](zz.md#t)" in text
    else:
        assert "changed while moving; nothing was moved" in result.stderr
        assert (kb.notes_root / "t.md").is_file()
        assert all(
            "(t.md#t)" in (kb.notes_root / f"l{n:04}.md").read_text(encoding="utf-8")
            for n in range(BACKLINKS)
        )
