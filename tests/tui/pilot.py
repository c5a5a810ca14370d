"""Helpers that drive the app under Textual's pilot and read its screen."""

from __future__ import annotations

import contextlib
import itertools
import re
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.geometry import Region
from textual.widgets import Input, Markdown, OptionList
from textual.worker import WorkerCancelled

from kb.tui.app import KbApp
from tests.conftest import FIXTURES


async def settle(app: KbApp, pilot) -> None:
    """Let workers finish and their results reach the screen."""
    for _ in range(3):
        await pilot.pause()
        # Not the file watcher: it runs as long as the app (and an empty list means all).
        if running := [w for w in app.workers if w.group != "watch"]:
            with contextlib.suppress(WorkerCancelled):  # a newer keystroke replaced it
                await app.workers.wait_for_complete(running)
    await pilot.pause()


def result_titles(app: KbApp) -> list[str]:
    results = app.screen.query_one("#results", OptionList)
    return [
        str(results.get_option_at_index(i).prompt).split("\n")[0]
        for i in range(results.option_count)
    ]


async def search(app: KbApp, pilot, text: str) -> None:
    app.screen.query_one("#query", Input).value = ""
    await pilot.press(*text)
    await settle(app, pilot)


async def open_note(app: KbApp, pilot, text: str) -> None:
    await search(app, pilot, text)
    await pilot.press("enter")
    await settle(app, pilot)


def current_title(app: KbApp) -> str:
    return app.screen.page.title  # type: ignore[attr-defined]


def use_stand_in_editor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str) -> None:
    """$EDITOR becomes a script that appends ``text`` to the file it is given."""
    script = tmp_path / "editor.py"
    script.write_text(
        f"import sys\nwith open(sys.argv[1], 'a', encoding='utf-8') as f:\n    f.write({text!r})\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)


# A long mixed Chinese/English note: Latin glued to Chinese, numbers with units, closing
# punctuation, a table wider than the page, a formula and a long code line.
MIXED_NOTE = (FIXTURES / "mixed-note.md").read_text(encoding="utf-8")


def screen_lines(app: KbApp, region: Region | None = None) -> list[str]:
    """The screen (or a region of it) as text, one string per terminal line."""
    strips = app.screen._compositor.render_strips()
    if region is None:
        return [strip.text for strip in strips]
    return [strip.crop(region.x, region.right).text for strip in strips[region.y : region.bottom]]


def broken_words(lines: list[str], text: str, width: int) -> list[str]:
    """Latin words of ``text`` that the lines split in two although they fit on a line: a
    line ending in letters that continue at the start of the next one to make the word.
    Table rows are compared cell by cell, a cell's width being its line; the last cell of
    a table wider than the page is cut by the page's edge (it scrolls sideways), not broken,
    and is left out. (A word in a run of ASCII wider than its line, such as raw LaTeX, may
    be split.)"""
    # A word with the closing punctuation that may not start a line is what must fit.
    runs = re.findall(r"[!-~]+[。，、；：！？）」』]?", text)
    broken = []
    for line, after in itertools.pairwise(lines):
        cells, next_cells = line.split("│"), after.split("│")
        pairs = (
            [(a, b, cell_len(a) - 2) for a, b in zip(cells, next_cells, strict=True)]
            if len(cells) == len(next_cells) > 1
            else [(line, after, width)]
        )
        if len(pairs) > 1 and not line.rstrip().endswith("│"):
            pairs.pop()  # cut by the page's edge
        for end_of, start_of, room in pairs:
            head = re.search(r"([A-Za-z0-9]+)\s*$", end_of)
            tail = re.match(r"\s*([A-Za-z0-9]+)", start_of)
            if not (head and tail):
                continue
            joined = head[1] + tail[1]
            holding = [r for r in runs if joined in re.findall(r"[A-Za-z][A-Za-z0-9]+", r)]
            if holding and all(cell_len(run) <= room for run in holding):
                broken.append(joined)
    return broken


async def read_whole_note(app: KbApp, pilot) -> list[str]:
    """Every line of the open note's text, as the reader shows it, scrolling through it."""
    document = app.screen.query_one("#document")
    screen = app.screen
    while len(screen.query_one("#doc", Markdown).source) < len(screen.shown) - 10:
        await pilot.pause(0.05)
    await settle(app, pilot)
    lines: list[str] = []
    height = document.content_region.height
    for y in range(0, document.max_scroll_y + height, height):
        document.scroll_to(y=y, animate=False)
        await pilot.pause()
        lines += screen_lines(app, document.content_region)
    return lines


async def wait_for(condition, pilot, seconds: float = 10.0) -> bool:
    for _ in range(int(seconds / 0.1)):
        if condition():
            return True
        await pilot.pause(0.1)
    return condition()
