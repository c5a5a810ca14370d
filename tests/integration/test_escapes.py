"""Nothing from a note reaches the terminal raw: escape sequences in a file name and a body
go through every command, the TUI (pilot) and a real terminal (tmux), and arrive as text."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import kb
from kb.cli import cli
from kb.knowledge_base import KnowledgeBase
from kb.text import one_line, strip_controls

MARK = "ZmlsZW5hbWU="  # an OSC 52 payload: "filename" in base64, put on the clipboard
OSC52 = f"\x1b]52;c;{MARK}\x07"
NAME = f"{OSC52}\x1b[2Jna\u202eme\u2066.md"  # OSC 52, clear screen, bidi override, isolate
HOSTILE = f"sub/{NAME}"
BODY = (
    "---\n"
    # YAML's own escapes: \e is ESC, \a is BEL.
    f'title: "Hostile \\e]52;c;{MARK}\\a\\e[2J ti\\u202etle"\n'
    'aliases: ["hostile"]\n'
    'tags: ["\\e[31mred\\u2066", "hostile"]\n'
    'date: "\\e[2Jsoon\\u202e"\n'
    "---\n\n"
    "# Heading \x1b[2J \u202e\n\n"
    "hostile text: \x1b]8;;https://evil.example\x1b\\a live link\x1b]8;;\x1b\\ then "
    f"\x9b2J and a bell \x07 and {OSC52} reversed \u202eabc\u2066 isolate, "
    "entity &#x202e; end.\n\n"
    "See [gone](<gone\x1b[2J\u202e.md>) and [[other]].\n"
)
OTHER = "# Other\n\nPoints at [[hostile]] and the hostile note.\n"

# What must never reach a terminal from note text: C0 controls but newline (ESC, BEL),
# DEL, C1 controls (CSI 0x9b) and raw bidi controls.
RAW = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def assert_printable(text: str) -> None:
    assert not RAW.findall(text), f"raw control characters reached the output: {text!r}"


@pytest.fixture
def hostile(make_kb) -> KnowledgeBase:
    return make_kb({HOSTILE: BODY, "other.md": OTHER})


def run(home: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--kb", str(home), *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result
    return result.exit_code, result.output


# -- the sanitizer ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"a{OSC52}b", f"a]52;c;{MARK}b"),
        ("a\x1b[2Jb\x9b2Jc\x07d\x7f", "a[2Jb2Jcd"),
        ("\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\", "]8;;https://x\\link]8;;\\"),
        ("exe\u202efdp.md", "exe<U+202E>fdp.md"),
        (
            "\u2066a\u2069\u200e\u200f\u061c\u202a",
            "<U+2066>a<U+2069><U+200E><U+200F><U+061C><U+202A>",
        ),
        ("lines\n\tkept\r\n", "lines\n\tkept\n"),
        ("显存带宽 ｜ émigré", "显存带宽 ｜ émigré"),
    ],
)
def test_strip_controls_removes_controls_and_shows_bidi(text: str, shown: str) -> None:
    assert strip_controls(text) == shown


def test_one_line_is_the_same_rule_on_one_line() -> None:
    assert one_line(f"  a\n{OSC52}\u202eb\t c ") == f"a ]52;c;{MARK}<U+202E>b c"


def test_json_text_keeps_values_exact_and_escapes_what_a_terminal_acts_on() -> None:
    from kb.text import json_text

    value = {"path": f"sub/{NAME}\x7f\x9b 显存"}
    text = json_text(value, indent=1)
    assert_printable(text.replace("\n", ""))
    assert "显存" in text  # not ASCII-escaped: only the dangerous characters are
    assert json.loads(text) == value


# -- every command ----------------------------------------------------------------------


def test_every_command_prints_note_text_safely(hostile: KnowledgeBase) -> None:
    home = hostile.home
    outputs = {}
    code, outputs["ingest -v"] = run(home, "ingest", "-v")
    assert code == 0
    assert "warning: sub/]52;c;ZmlsZW5hbWU=[2Jna<U+202E>me<U+2066>.md" in outputs["ingest -v"]
    assert f"added    {one_line(HOSTILE)}" in outputs["ingest -v"]
    for args in (
        ["search", "hostile"],
        ["search", "--paths", "hostile"],
        ["links", "hostile"],
        ["check"],
        ["graph"],
        ["graph", "--format", "mermaid"],
    ):
        _, outputs[" ".join(args)] = run(home, *args)
    for command, output in outputs.items():
        assert_printable(output.replace("\n", ""))
        assert "<U+202E>" in output, command
    assert "ti<U+202E>tle" in outputs["search hostile"]  # the title
    assert "reversed <U+202E>abc<U+2066> isolate" in outputs["search hostile"]  # the snippet
    assert "#[31mred<U+2066>" in outputs["search hostile"]  # a tag
    assert f"notes/{one_line(HOSTILE)}" in outputs["search --paths hostile"]
    assert "gone[2J<U+202E>.md  :12  (unresolved)" in outputs["links hostile"]
    assert "broken-link: gone[2J<U+202E>.md (markdown)" in outputs["check"]
    assert f'tooltip="{one_line(HOSTILE)}"' in outputs["graph"]
    assert '["Hostile ]52;c;ZmlsZW5hbWU=[2J ti<U+202E>tle"]' in outputs["graph --format mermaid"]


@pytest.mark.parametrize(
    "args", [["search", "--json", "hostile"], ["links", "--json", "hostile"], ["check", "--json"]]
)
def test_json_keeps_exact_names_escaped(hostile: KnowledgeBase, args: list[str]) -> None:
    hostile.ingest()
    _, output = run(hostile.home, *args)
    assert_printable(output.replace("\n", ""))
    assert HOSTILE in strings(json.loads(output))


def strings(value: object) -> set[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return set().union(*(strings(item) for item in value))
    return set()


def test_graph_json_keeps_exact_names_escaped(hostile: KnowledgeBase) -> None:
    hostile.ingest()
    _, output = run(hostile.home, "graph", "--format", "json")
    assert_printable(output.replace("\n", ""))
    assert HOSTILE in {node["path"] for node in json.loads(output)["nodes"]}


def test_new_note_path_and_errors_are_printed_safely(hostile: KnowledgeBase) -> None:
    # The hostile notes stay out of the store (no catching up before kb links): the
    # error naming no note is the point here.
    (hostile.home / "kb.yaml").write_text("roots: [notes]\nchanged_notes: off\n", "utf-8")
    code, output = run(hostile.home, "new", "--no-edit", "--folder", f"in{OSC52}\u202e", "t")
    assert code == 0
    assert_printable(output.replace("\n", ""))
    assert f"in]52;c;{MARK}<U+202E>" in output
    code, output = run(hostile.home, "links", f"no{OSC52}\u202e")
    assert code == 2
    assert_printable(output.replace("\n", ""))


def kb_command(*args: str) -> list[str]:
    """This Python running the kb package under test (also when it is not the installed one)."""
    return [sys.executable, "-m", "kb", *args]


def kb_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(kb.__file__).resolve().parents[1])}


@pytest.mark.slow
def test_commands_through_a_pipe_send_no_control_bytes(hostile: KnowledgeBase) -> None:
    """A pipe is where OSC 52 passed before: click strips only CSI colour codes there."""
    hostile.ingest()
    for args in (["search", "--paths", "hostile"], ["search", "hostile"], ["graph"]):
        done = subprocess.run(
            kb_command("--kb", str(hostile.home), *args),
            capture_output=True,
            env=kb_env(),
            check=False,
        )
        assert done.returncode == 0, done.stderr
        text = done.stdout.decode("utf-8")
        assert_printable(text.replace("\n", ""))
        assert "<U+202E>" in text


# -- the terminal UI ----------------------------------------------------------------------


def terminal_output(app) -> str:
    """What the app writes to the terminal for a full redraw of its current screen: the
    same rendering App._display hands to the driver."""
    update = app.screen._compositor.render_update(full=True)
    return update.render_segments(app.console)


def assert_no_note_escapes(output: str) -> None:
    """Textual writes its own CSI sequences; none that a note carried may be among them."""
    for sequence in ("\x1b]", "\x1b[2J", "\x9b", "\x07", "\u202e", "\u2066"):
        assert sequence not in output, f"{sequence!r} reached the terminal"
    assert "<U+202E>" in output


@pytest.mark.slow
async def test_tui_shows_note_text_safely(hostile: KnowledgeBase) -> None:
    from textual.worker import WorkerCancelled

    from kb.tui.app import make_app

    hostile.ingest()
    app = make_app(hostile, watch=False)

    async def settle() -> None:
        for _ in range(3):
            await pilot.pause()
            with contextlib.suppress(WorkerCancelled):
                await app.workers.wait_for_complete()
        await pilot.pause()

    async with app.run_test(size=(140, 40)) as pilot:
        await settle()
        await pilot.press(*"isolate")  # a word only the hostile note has
        await settle()
        screen = terminal_output(app)  # the result list and the preview
        assert_no_note_escapes(screen)
        assert "ti<U+202E>tle" in screen
        # The snippet and the preview ("isolate", highlighted, is styled apart).
        assert "<U+202E>abc<U+2066> " in screen
        await pilot.press("ctrl+t")  # the tag tree
        await settle()
        assert "red<U+2066>" in terminal_output(app)
        assert_no_note_escapes(terminal_output(app))
        await pilot.press("ctrl+t")
        app.screen.query_one("#query").focus()
        await pilot.press("enter")  # the reader: breadcrumb, note, outline, links
        await settle()
        reader = terminal_output(app)
        assert_no_note_escapes(reader)
        assert "entity <U+202E>" in reader  # an entity the Markdown parser decoded
        assert "gone[2J<U+202E>.md" in reader  # the unresolved link in the link list
        await pilot.press("ctrl+p", *"Hostile")  # the command palette
        await settle()
        assert_no_note_escapes(terminal_output(app))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_real_terminal_receives_no_escape_from_a_note(
    hostile: KnowledgeBase, tmp_path: Path
) -> None:
    """In tmux with set-clipboard on, an OSC 52 that reaches the pane fills tmux's paste
    buffer: it must stay empty through the CLI (in colour, on a terminal) and the TUI."""
    home = hostile.home
    kb_line = shlex.join(kb_command("--kb", str(home)))
    script = tmp_path / "run.sh"
    script.write_text(
        f"export PYTHONPATH={shlex.quote(kb_env()['PYTHONPATH'])}; unset NO_COLOR\n"
        + "".join(
            f"{kb_line} {args}\n"
            for args in (
                "ingest -v",
                "search hostile",
                "search --paths hostile",
                "links hostile",
                "check",
                "graph",
            )
        )
        + f"echo CLI_DONE; read _; {kb_line}; echo KB_EXITED_$?; sleep 30\n",
        encoding="utf-8",
    )
    (tmp_path / "tmux.conf").write_text("set -g set-clipboard on\n", encoding="utf-8")
    base = ["tmux", "-L", f"kbesc{tmp_path.name}", "-f", str(tmp_path / "tmux.conf")]

    def screen() -> str:
        return subprocess.run(
            [*base, "capture-pane", "-p", "-t", "kb"], capture_output=True, text=True, check=False
        ).stdout

    def wait_for(text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in (shown := screen()):
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen()}")

    def clipboard() -> str:
        return subprocess.run(
            [*base, "show-buffer"], capture_output=True, text=True, check=False
        ).stdout

    subprocess.run(
        [*base, "new-session", "-d", "-s", "kb", "-x", "140", "-y", "40", f"sh {script}"],
        check=True,
    )
    try:
        shown = wait_for("CLI_DONE")
        assert clipboard() == "", "an OSC 52 from a note set the clipboard"
        assert "<U+202E>" in shown
        subprocess.run([*base, "send-keys", "-t", "kb", "Enter"], check=True)
        wait_for("modified last")  # the empty search lists the notes modified last
        subprocess.run([*base, "send-keys", "-t", "kb", "isolate"], check=True)
        # The search is done: only the hostile note has the word ("1 note" starts a line,
        # alone or beside the preview's first line).
        deadline = time.monotonic() + 20.0
        while not re.search(r"(?m)^ *1 note(?!s)", screen()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert re.search(r"(?m)^ *1 note(?!s)", screen()), screen()
        shown = wait_for("ti<U+202E>tle")
        subprocess.run([*base, "send-keys", "-t", "kb", "Enter"], check=True)
        shown = wait_for("See gone and other.")  # the note, rendered
        assert "<U+202E>abc<U+2066>" in shown
        assert not RAW.findall(shown.replace("\n", "")), shown
        assert clipboard() == "", "an OSC 52 from a note set the clipboard"
        subprocess.run([*base, "send-keys", "-t", "kb", "C-q"], check=True)
        wait_for("KB_EXITED_0")
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True, check=False)
