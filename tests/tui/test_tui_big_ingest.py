"""The app and big ingests: from 300 changed files on, ingest parses in worker processes.

Those workers must work from the app (whose sys.stderr has no descriptor while Textual
runs) and must never hold the app's terminal; the status line counts their progress.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from textual.widgets import Static

from kb.knowledge_base import KnowledgeBase
from kb.tui.app import KbApp, make_app
from kb.tui.messages import IngestProgress
from tests.tui.pilot import result_titles, search, settle, wait_for

PROC = Path("/proc")


def numbered_notes(count: int, word: str, folder: str = "") -> dict[str, str]:
    return {f"{folder}n{i:03}.md": f"# 笔记 {i}\n\n{word} w{i}x 显存带宽\n" for i in range(count)}


@pytest.fixture
def status_lines(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the search screen's status line said after each progress message."""
    seen: list[str] = []
    shown = KbApp.on_ingest_progress

    def recording(app: KbApp, message: IngestProgress) -> None:
        shown(app, message)
        seen.append(str(app.screen.query_one("#status", Static).render()))

    monkeypatch.setattr(KbApp, "on_ingest_progress", recording)
    return seen


def ingest_elsewhere(kb: KnowledgeBase) -> None:
    """Index the notes in another process: one in this process would start
    multiprocessing's helper before the app runs, and hide what the app meets alone."""
    command = [sys.executable, "-m", "kb", "--kb", str(kb.home), "ingest"]
    subprocess.run(command, capture_output=True, timeout=120, check=True)


def notifications(app: KbApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_the_app_opens_400_notes_without_an_index(make_kb, status_lines) -> None:
    kb = make_kb({**numbered_notes(399, "quokka"), "bad.md": b"\x00\x01binary\x00"})
    assert not kb.config.store_path.exists()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert app.is_running
        assert "Indexed 399 notes (1 warning)" in notifications(app)
        await search(app, pilot, "w123x")
        assert result_titles(app) == ["笔记 123"]
    assert status_lines, "no progress was shown"
    assert status_lines[-1] == "indexing 400/400 notes …"
    assert all(re.fullmatch(r"indexing \d+/400 notes …", line) for line in status_lines)
    # The worker's warning reached the store, as from `kb ingest`: `kb check` tells it.
    assert [(p.path, p.kind) for p in kb.links.check()] == [("bad.md", "parse-warning")]


async def test_a_burst_of_500_changes_while_the_app_runs(make_kb, status_lines) -> None:
    """A git checkout or a sync: the watcher names 500 changed notes at once."""
    kb = make_kb(numbered_notes(500, "before"))
    ingest_elsewhere(kb)
    app = make_app(kb, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        root = kb.config.roots[0].path
        changed = []
        for i in range(500):
            note = root / f"n{i:03}.md"
            note.write_text(f"# 笔记 {i}\n\nafter w{i}y\n", encoding="utf-8")
            changed.append(note)
        app.reindex(False, changed)  # what one notification of the watcher does
        await settle(app, pilot)
        assert app.is_running
        await search(app, pilot, "w321y")
        assert result_titles(app) == ["笔记 321"]
        assert str(app.screen.query_one("#status", Static).render()) == "1 note"
    assert status_lines[-1] == "indexing 500/500 notes …"
    assert len(kb.search("after", limit=1000).hits) == 500
    assert kb.search("before", limit=10).hits == []


async def test_a_small_change_shows_no_count(make_kb, status_lines) -> None:
    kb = make_kb(numbered_notes(20, "before"))
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        note = kb.config.roots[0].path / "n001.md"
        note.write_text("# 笔记 1\n\nafter\n", encoding="utf-8")
        app.reindex(False, [note])
        await settle(app, pilot)
        await search(app, pilot, "after")
        assert result_titles(app) == ["笔记 1"]
    assert status_lines == []  # over before a count could be read


@pytest.mark.slow
async def test_a_renamed_folder_of_400_notes_while_the_app_watches(make_kb, tmp_path) -> None:
    pytest.importorskip("watchfiles")
    kb = make_kb(numbered_notes(400, "wombat", folder="old/"))
    ingest_elsewhere(kb)
    app = make_app(kb, watch=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert await wait_for(lambda: app.watching == "notifications", pilot)
        await pilot.pause(0.5)  # the watch is set up
        root = kb.config.roots[0].path
        (root / "old").rename(root / "new")

        def moved() -> bool:
            hits = KnowledgeBase.open(tmp_path).search("wombat", limit=1000).hits
            return len(hits) == 400 and all(h.path.startswith("new/") for h in hits)

        assert await wait_for(moved, pilot, seconds=30)
        await settle(app, pilot)
        assert app.is_running
        await search(app, pilot, "w7x")
        assert result_titles(app) == ["笔记 7"]


WORKERS_SCRIPT = """
import os, sys
from pathlib import Path
from kb.ingest.load import LoadJob, load_files
from kb.ingest.walk import NoteFile

root = Path(sys.argv[1])
jobs = [
    LoadJob(NoteFile(p.name, str(p), "notes", p.name, 0, 0, ""), "", 1 << 20, ())
    for p in sorted(root.glob("*.md"))
]
for done, _ in enumerate(load_files(jobs)):
    if done == 16:  # the workers are running: say what they hold
        me = os.getpid()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text().rpartition(")")[2].split()
                if int(stat[1]) != me:
                    continue
                fds = [str(fd.readlink()) for fd in (entry / "fd").iterdir()]
            except OSError:
                continue
            print(entry.name, stat[4], " ".join(fds), file=open(sys.argv[2], "a"))
"""


@pytest.mark.slow
@pytest.mark.skipif(not PROC.is_dir(), reason="reads the worker processes in /proc")
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: ingest starts no workers")
def test_workers_never_hold_the_terminal(tmp_path: Path) -> None:
    """No process an ingest starts has the caller's terminal: not as its controlling
    terminal, not as any open descriptor (Textual draws on that terminal)."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(400):
        (notes / f"n{i:03}.md").write_text(f"# {i}\n\nword\n", encoding="utf-8")
    report = tmp_path / "children.txt"
    leader, follower = os.openpty()
    terminal = os.ttyname(follower)
    try:
        done = subprocess.run(
            [sys.executable, "-c", WORKERS_SCRIPT, str(notes), str(report)],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),  # as a shell does
            timeout=120,
            check=False,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    children = report.read_text().splitlines()
    assert len(children) >= 2, children
    for child in children:
        pid, tty_nr, *fds = child.split()
        assert tty_nr == "0", f"worker {pid} has a controlling terminal"
        assert terminal not in fds, f"worker {pid} holds the terminal: {fds}"
