"""The installed ``kb`` typed into real shells in tmux, as a new user would (issue 23,
items 2 and 3): with the completion script sourced, ``kb show Redis<Tab>`` then Enter shows
the note (the title's space and Chinese are escaped), ``tag:``, ``--tag`` and ``series:``
complete in bash too (COMP_WORDBREAKS holds ``:``), and ``kb list`` at 80 columns is a table
whose rows never wrap. bash always; zsh and fish where installed."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from kb.linebreak import cell_width
from tests.conftest import SAMPLE_NOTES

TMUX = shutil.which("tmux")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(TMUX is None, reason="tmux is not installed"),
]

# Each shell: how to start it bare, and how its user loads kb's completion.
SHELLS = {
    "bash": ("bash --norc --noprofile", 'eval "$(kb completion bash)"'),
    "zsh": ("zsh -f", 'autoload -U compinit && compinit -u && eval "$(kb completion zsh)"'),
    "fish": ("fish --no-config", "kb completion fish | source"),
}
NOTE_END = "*-max-*-entries"  # in the last paragraph of notes/engineering/redis-study.md


class Shell:
    """A shell in a tmux session on a private socket (a user's own tmux is never
    touched), in a knowledge base folder, with kb's completion loaded."""

    def __init__(self, name: str, home: Path, width: int = 80) -> None:
        start, setup = SHELLS[name]
        self.base = [TMUX or "tmux", "-L", f"kbshell{name}{os.getpid()}"]
        bin_dir = Path(sys.executable).parent
        env = (
            f"env -i HOME={shlex.quote(str(home))} TERM=xterm-256color LANG=C.UTF-8 "
            f"PATH={shlex.quote(str(bin_dir))}:/usr/bin:/bin PAGER=cat"
        )
        subprocess.run(
            [*self.base, "new-session", "-d", "-s", "kb", "-x", str(width), "-y", "50"],
            check=True,
        )
        self.send(f"{env} {start}", "Enter")
        # The marker is printed by the shell, so the typed line never matches it.
        self.send(f"cd {shlex.quote(str(home))}; {setup}; printf 'READY%s\\n' 42", "Enter")
        self.wait_for("READY42")
        self.send("clear", "Enter")

    def screen(self) -> str:
        return subprocess.run(
            [*self.base, "capture-pane", "-p", "-t", "kb"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout

    def send(self, *keys: str) -> None:
        subprocess.run([*self.base, "send-keys", "-t", "kb", *keys], check=True)

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{self.screen()}")

    def complete(self, typed: str, expected: str) -> None:
        """Type ``typed``, press Tab, and wait until the line reads ``expected``."""
        self.send("C-u", "clear", "Enter")
        self.send(typed)
        time.sleep(0.3)
        self.send("Tab")
        self.wait_for(expected)

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, check=False)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("shells")
    shutil.copytree(SAMPLE_NOTES, folder / "notes")
    (folder / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    KnowledgeBase.open(folder).ingest()
    return folder


@pytest.fixture(params=list(SHELLS))
def shell(request: pytest.FixtureRequest, home: Path):
    if shutil.which(request.param) is None:
        pytest.skip(f"{request.param} is not installed")
    if not shutil.which("kb", path=str(Path(sys.executable).parent)):
        pytest.skip("the kb command is not installed beside this Python")
    opened = Shell(request.param, home)
    yield opened
    opened.close()


def test_a_completed_title_with_a_space_and_chinese_runs(shell: Shell) -> None:
    shell.complete("kb show Redis", "kb show Redis\\ 学习笔记")
    shell.send("Enter")
    screen = shell.wait_for(NOTE_END)
    assert "unexpected extra argument" not in screen and "no note matches" not in screen


def test_tag_series_and_the_tag_option_complete(shell: Shell) -> None:
    shell.complete("kb list tag:gpu/me", "kb list tag:gpu/memory")
    shell.send("Enter")
    shell.wait_for("notes/posts/dtype-memory.md")
    shell.complete("kb list --tag roofl", "kb list --tag roofline")
    shell.send("Enter")
    shell.wait_for("flops-vs-latency.md")  # the table may cut the path in its middle
    shell.complete("kb list series:CS3", "kb list series:CS336")


def test_search_completes_filters_and_titles_as_list_does(shell: Shell) -> None:
    shell.complete("kb search tag:gpu/me", "kb search tag:gpu/memory")
    shell.complete("kb search series:CS3", "kb search series:CS336")
    shell.complete("kb search date:2024-0", "kb search date:2024-0")  # several months
    shell.complete("kb search -n 1 Redis", "kb search -n 1 Redis\\ 学习笔记")
    shell.send("Enter")
    shell.wait_for("engineering/redis-study.md")


def test_list_at_80_columns_never_wraps_a_row(shell: Shell) -> None:
    if "bash" not in shell.base[2]:
        pytest.skip("the layout is the same in every shell")
    shell.send("C-u", "clear", "Enter")
    shell.send("kb list --path papers/; printf 'LISTED%s\\n' 42", "Enter")
    screen = shell.wait_for("LISTED42")
    rows = [row for row in screen.splitlines() if "notes/papers/" in row]
    assert len(rows) == 3, screen  # one row a note
    assert all(row.rstrip().endswith(".md") and cell_width(row) <= 80 for row in rows), rows
    starts = {row.index("notes/") for row in rows}
    # padded by display width: the file column starts at the same cell on every row
    assert len({cell_width(row[:start]) for row, start in zip(rows, starts, strict=False)}) == 1
