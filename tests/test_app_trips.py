"""What a new user trips on in the app: the first screen of a fresh copy of the bundled
notes, Escape in the reader, the note palette, paths in narrow panes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from textual.widgets import OptionList

from kb.knowledge_base import KnowledgeBase
from kb.tui.app import make_app
from tests.conftest import SAMPLE_NOTES
from tests.test_tui import open_note, result_titles, settle


def one_time_copy(tmp_path: Path) -> KnowledgeBase:
    """The bundled notes as an unpacked archive leaves them: every file with one time."""
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    stamp = 1_700_000_000
    for file in (tmp_path / "notes").rglob("*"):
        os.utime(file, (stamp, stamp))
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    return kb


def test_files_of_one_time_come_newest_by_date_not_by_path(tmp_path: Path) -> None:
    kb = one_time_copy(tmp_path)
    by_mtime = kb.recent(10, modified=True)
    by_date = kb.recent(10)
    # The same order as by date: no section page (_index.md) leads because '_' sorts first.
    assert [n.path for n in by_mtime] == [n.path for n in by_date]
    assert not by_mtime[0].path.endswith("_index.md")


@pytest.mark.slow
async def test_the_first_screen_of_a_fresh_copy_leads_with_the_newest_note(
    tmp_path: Path,
) -> None:
    kb = one_time_copy(tmp_path)
    newest = kb.recent(1)[0].title
    app = make_app(kb, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        titles = result_titles(app)
        assert titles[0] == newest
        assert "笔记首页" not in titles[:3]  # notes/_index.md, the section page


@pytest.fixture
def sample(tmp_path: Path) -> KnowledgeBase:
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    return kb


@pytest.mark.slow
@pytest.mark.parametrize("width", [100, 140])  # the links below the note, and beside it
async def test_escape_from_the_link_list_goes_back_to_the_note(sample, width: int) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(width, 30)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "时间窗口")
        screen = app.screen
        await pilot.press("ctrl+l")
        await settle(app, pilot)
        assert isinstance(app.focused, OptionList) and app.focused.id == "links"
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is screen  # still the note
        assert app.focused is screen.query_one("#document")
        # Narrow, the list opened over the note by ctrl+l closes again; wide, it stays.
        assert screen.query_one("#side").display == (width >= 120)
        await pilot.press("escape")
        assert app.screen.id == "search"
