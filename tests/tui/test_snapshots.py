"""SVG snapshots of the main screens at 80x24 and 120x40 (pytest-textual-snapshot): the
search, a long mixed Chinese/English note with a table, a formula and code, and the help.

Update them after a deliberate change with `pytest tests/tui/test_snapshots.py --snapshot-update`
and look at the SVGs before committing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from textual.widgets import Input

from kb.knowledge_base import KnowledgeBase
from kb.tui.app import make_app
from tests.conftest import FIXTURES, SAMPLE_NOTES
from tests.tui.pilot import settle

MIXED_NOTE_FILE = FIXTURES / "mixed-note.md"

SIZES = [(80, 24), (120, 40)]


@pytest.fixture
def sample(tmp_path: Path) -> KnowledgeBase:
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    shutil.copy(MIXED_NOTE_FILE, tmp_path / "notes" / "gpu-bandwidth.md")
    # The empty search lists notes by file time: make it the same on every machine.
    for number, path in enumerate(sorted((tmp_path / "notes").rglob("*.md"))):
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    return kb


def steady(app) -> None:
    for field in app.screen.query(Input):
        field.cursor_blink = False


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_search_screen(snap_compare, sample, size) -> None:
    app = make_app(sample, watch=False)

    async def type_query(pilot) -> None:
        await settle(app, pilot)
        steady(app)
        await pilot.press(*"Redis")
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=size, run_before=type_query)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_note_screen(snap_compare, sample, size) -> None:
    app = make_app(sample, watch=False)

    async def open_note(pilot) -> None:
        await settle(app, pilot)
        steady(app)
        await pilot.press(*"title:Roofline 显存带宽与")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        while len(screen.query_one("#doc").source) < len(screen.shown) - 10:
            await pilot.pause(0.05)  # a long note arrives piece by piece
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=size, run_before=open_note)


@pytest.mark.slow
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_screen(snap_compare, sample, size) -> None:
    app = make_app(sample, watch=False)

    async def open_help(pilot) -> None:
        await settle(app, pilot)
        steady(app)
        await pilot.press("f1")
        await settle(app, pilot)

    assert snap_compare(app, terminal_size=size, run_before=open_help)
