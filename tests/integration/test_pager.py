"""Long pages go through the pager, as git's do: ``kb help TOPIC`` and ``kb show`` render on a
terminal and page when taller than it; piped output and ``--no-pager`` print plainly.

The pager is a script that records what it was given. The terminal is real where it counts:
the slow tests run kb in a pseudo-terminal of a set size; the quick ones run kb in this
process with kb's one terminal check (``kb.cli.pager.stdout_is_terminal``) answering yes and
the screen's height given by ``LINES``, as a terminal would report it.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from kb.cli import pager
from tests.conftest import REPO, run_cli

LONG_NOTE = "---\ntitle: 长笔记\ntags: [pager]\n---\n\n" + "\n\n".join(
    f"## 第 {n} 节\n\n这一段讲 roofline 模型的第 {n} 个要点。" for n in range(1, 41)
)
# Note text that a terminal would act on, or Rich would read as markup, were it not data.
HOSTILE_NOTE = (
    "# [bold red]not markup[/]\n\n"
    "title set: \x1b]0;owned\x07 colour: \x1b[31mred\x1b[0m clear: \x1b[2J\n\n"
    + "\n\n".join(f"line {n} [link=file:///etc/passwd]x[/link]" for n in range(60))
)


@pytest.fixture
def fake_pager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PAGER is a script that writes what it read, then its LESS, to a file."""
    record = tmp_path / "paged.txt"
    script = tmp_path / "pager.sh"
    script.write_text(f'#!/bin/sh\ncat > "{record}"\nprintf "LESS=%s" "$LESS" >> "{record}"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PAGER", str(script))
    monkeypatch.delenv("LESS", raising=False)
    return record


@pytest.fixture
def notes_kb(make_kb):
    short = "# 短笔记\n\n一行。\n"
    kb = make_kb({"long.md": LONG_NOTE, "short.md": short, "evil.md": HOSTILE_NOTE})
    kb.ingest()
    return kb


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """kb asks its one question about the terminal and is told yes, 24 lines by 80."""
    monkeypatch.setattr(pager, "stdout_is_terminal", lambda: True)
    monkeypatch.setenv("LINES", "24")
    monkeypatch.setenv("COLUMNS", "80")


# -- which pager, and when ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "command"),
    [
        (None, ["less"]),
        ("less -R", ["less", "-R"]),
        ("  most  ", ["most"]),
        ("", None),
        ("cat", None),
        ("less 'unclosed", None),
    ],
)
def test_the_pager_is_PAGER_else_less(monkeypatch, value, command) -> None:
    if value is None:
        monkeypatch.delenv("PAGER", raising=False)
    else:
        monkeypatch.setenv("PAGER", value)
    assert pager.pager_command() == command


def test_piped_help_is_the_pages_markdown(notes_kb, fake_pager: Path) -> None:
    result = run_cli(notes_kb, "help", "query")
    assert result.exit_code == 0
    assert result.stdout == (REPO / "docs" / "query.md").read_text(encoding="utf-8")
    assert not fake_pager.exists()


def test_piped_show_is_the_file_as_written(notes_kb, fake_pager: Path) -> None:
    result = run_cli(notes_kb, "show", "长笔记")
    assert result.stdout.rstrip("\n") == LONG_NOTE.rstrip("\n")
    assert not fake_pager.exists()


def test_a_long_help_page_on_a_terminal_goes_to_the_pager(
    notes_kb, fake_pager: Path, terminal: None
) -> None:
    result = run_cli(notes_kb, "help", "query")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""  # all of it went to the pager
    paged = fake_pager.read_text(encoding="utf-8")
    assert paged.endswith("LESS=FRX")
    assert "The query language" in paged and "# The query language" not in paged  # rendered
    assert "roofline OR 带宽" in paged


def test_a_long_note_on_a_terminal_goes_to_the_pager(
    notes_kb, fake_pager: Path, terminal: None
) -> None:
    result = run_cli(notes_kb, "show", "长笔记")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    paged = fake_pager.read_text(encoding="utf-8")
    assert paged.startswith("长笔记\n") and "第 40 节" in paged and "title:" not in paged


def test_the_users_LESS_is_kept(notes_kb, fake_pager: Path, terminal: None, monkeypatch) -> None:
    monkeypatch.setenv("LESS", "-S")
    run_cli(notes_kb, "show", "长笔记")
    assert fake_pager.read_text(encoding="utf-8").endswith("LESS=-S")


def test_a_page_that_fits_the_screen_is_printed_not_paged(
    notes_kb, fake_pager: Path, terminal: None
) -> None:
    result = run_cli(notes_kb, "show", "短笔记")
    assert "短笔记" in result.stdout and "一行。" in result.stdout
    assert not fake_pager.exists()


def test_no_pager_prints_the_help_markdown_and_the_note_rendered(
    notes_kb, fake_pager: Path, terminal: None
) -> None:
    helped = run_cli(notes_kb, "help", "query", "--no-pager")
    assert helped.stdout.startswith("# The query language\n")
    shown = run_cli(notes_kb, "show", "长笔记", "--no-pager")
    assert shown.stdout.startswith("长笔记\n") and "第 40 节" in shown.stdout
    assert "title:" not in shown.stdout  # rendered, not the file
    assert not fake_pager.exists()


def test_a_pager_that_cannot_start_says_so_and_the_page_is_printed(
    notes_kb, terminal: None, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PAGER", str(tmp_path / "no-such-pager"))
    result = run_cli(notes_kb, "show", "长笔记")
    assert result.exit_code == 0
    assert "第 40 节" in result.stdout
    assert result.stderr.startswith("kb: cannot run the pager ")
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr


def test_note_text_reaches_the_pager_as_text_never_markup_or_escapes(
    notes_kb, fake_pager: Path, terminal: None
) -> None:
    run_cli(notes_kb, "--color", "never", "show", "evil")
    paged = fake_pager.read_text(encoding="utf-8")
    assert "[bold red]not markup[/]" in paged  # shown as written, not made bold and red
    assert "[link=file:///etc/passwd]x[/link]" in paged
    assert "\x1b" not in paged and "\x07" not in paged  # no colour asked, no escape of the note's
    assert "owned" in paged  # the text around the stripped controls stays


def test_with_colour_only_kbs_own_styles_reach_the_pager(
    notes_kb, fake_pager: Path, terminal: None
) -> None:
    run_cli(notes_kb, "--color", "always", "show", "evil")
    paged = fake_pager.read_text(encoding="utf-8")
    assert "\x1b[" in paged  # Rich's styles: the title is bold
    assert "\x1b]0;" not in paged and "\x07" not in paged and "\x1b[2J" not in paged
    assert "\x1b[31mred" not in paged


# -- a real terminal ----------------------------------------------------------------------


def _run_in_terminal(args: list[str], rows: int, env: dict[str, str]) -> str:
    """Run ``python -m kb ARGS`` with a pseudo-terminal of ``rows`` x 80 as its stdin,
    stdout and stderr; return what it wrote there."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", rows, 80, 0, 0))
    clean = {k: v for k, v in os.environ.items() if k not in ("LINES", "COLUMNS", "LESS")}
    process = subprocess.Popen(
        [sys.executable, "-m", "kb", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**clean, **env},
        close_fds=True,
    )
    os.close(follower)
    written = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            process.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: every writer has ended
            break
        if not chunk:
            break
        written += chunk
    process.wait(timeout=30)
    os.close(leader)
    return written.decode("utf-8", errors="replace")


@pytest.mark.slow
def test_in_a_real_terminal_a_long_page_is_paged_and_a_short_one_printed(
    notes_kb, fake_pager: Path
) -> None:
    env = {"PAGER": os.environ["PAGER"], "NO_COLOR": "1"}
    home = ["--kb", str(notes_kb.home)]
    shown = _run_in_terminal([*home, "help", "query"], rows=24, env=env)
    paged = fake_pager.read_text(encoding="utf-8")
    assert "roofline OR 带宽" in paged and paged.endswith("LESS=FRX")
    assert "roofline OR 带宽" not in shown  # the terminal got nothing but the pager's screen
    fake_pager.unlink()

    shown = _run_in_terminal([*home, "show", "短笔记"], rows=24, env=env)
    assert "一行。" in shown and not fake_pager.exists()

    shown = _run_in_terminal([*home, "show", "长笔记"], rows=200, env=env)
    assert "第 40 节" in shown and not fake_pager.exists()  # it fits 200 lines

    shown = _run_in_terminal([*home, "help", "query", "--no-pager"], rows=24, env=env)
    assert "# The query language" in shown and not fake_pager.exists()
