"""The installed `kb` in a real pseudo-terminal (tmux): type a query, open a note, quit."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_NOTES

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed")


class Terminal:
    """A tmux session on a private socket, so a user's own tmux is never touched."""

    def __init__(self, socket: str, command: str, size: tuple[int, int] = (120, 36)) -> None:
        self.base = [TMUX or "tmux", "-L", socket]
        subprocess.run(
            [
                *self.base,
                "new-session",
                "-d",
                "-s",
                "kb",
                "-x",
                str(size[0]),
                "-y",
                str(size[1]),
                command,
            ],
            check=True,
        )

    def screen(self) -> str:
        return subprocess.run(
            [*self.base, "capture-pane", "-p", "-t", "kb"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout

    def send(self, *keys: str) -> None:
        subprocess.run([*self.base, "send-keys", "-t", "kb", *keys], check=True)

    def wait_for(self, text: str, timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, check=False)


@pytest.mark.slow
def test_installed_kb_in_a_real_terminal(tmp_path: Path) -> None:
    kb = shutil.which("kb", path=str(Path(sys.executable).parent))
    assert kb, "the kb command is not installed beside this Python"
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    command = f"{shlex.quote(kb)} --kb {shlex.quote(str(tmp_path))}; echo KB_EXITED_$?; sleep 30"
    terminal = Terminal(f"kbtest{tmp_path.name}", command)
    try:
        terminal.wait_for("Indexed 44 notes")  # the first run ingests, with progress
        terminal.send("时间窗口")
        terminal.wait_for("计算平台：用 Redis ZSET 做全局时间窗口限流")
        terminal.send("Enter")
        terminal.wait_for("背景：为什么单机限流不够")  # the note, rendered
        terminal.send("C-b")  # the backlinks (below the note on a narrow terminal)
        terminal.wait_for("Backlinks 3")  # the notes that link to it (4 links from 3 notes)
        terminal.send("C-q")
        terminal.wait_for("KB_EXITED_0")
    finally:
        terminal.close()


@pytest.mark.slow
def test_the_app_on_400_notes_without_an_index_then_a_burst_of_500(tmp_path: Path) -> None:
    """The first opening of a big folder, then a checkout rewriting 500 notes: the app
    parses in worker processes both times, stays up, and finds the new text."""
    kb = shutil.which("kb", path=str(Path(sys.executable).parent))
    assert kb, "the kb command is not installed beside this Python"
    notes = tmp_path / "notes"
    notes.mkdir()
    for i in range(400):
        (notes / f"n{i:03}.md").write_text(f"# 笔记 {i}\n\nquokka w{i}x\n", encoding="utf-8")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    command = f"{shlex.quote(kb)} --kb {shlex.quote(str(tmp_path))}; echo KB_EXITED_$?; sleep 30"
    terminal = Terminal(f"kbbig{tmp_path.name}", command, size=(120, 30))
    try:
        terminal.wait_for("Indexed 400 notes", timeout=60)
        terminal.send("w123x")
        terminal.wait_for("笔记 123")
        terminal.send("C-u")
        terminal.send("checkout")  # nothing holds it yet
        terminal.wait_for("checkout  ", timeout=60)  # a loaded machine: the app may still be busy
        terminal.wait_for("\n 0 notes")
        for i in range(500):  # 100 new notes, 400 rewritten
            (notes / f"n{i:03}.md").write_text(f"# 笔记 {i}\n\ncheckout\n", encoding="utf-8")
        terminal.wait_for("30 notes", timeout=60)  # the results refreshed: the first 30
        assert "Traceback" not in terminal.screen()
        terminal.send("C-q")
        terminal.wait_for("KB_EXITED_0")
    finally:
        terminal.close()
