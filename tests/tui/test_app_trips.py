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
from tests.tui.pilot import open_note, result_titles, settle


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


# -- the note palette (ctrl+p): kb's one naming rule ------------------------------------

PALETTE_NOTES = {
    "shop/seckill.md": "---\ntitle: 秒杀系统设计\naliases: [flash sale design]\n---\n正文\n",
    "eng/redis.md": "---\ntitle: Redis study\n---\nbody\n",
    "eng/显存 估算.md": "---\ntitle: 显存估算速查\n---\n正文\n",
    "life/diary.md": "# 日记\n\n正文\n",
}


def palette_hits(app) -> list[tuple[str, str]]:
    """(title, help) of each hit the palette lists, in order."""
    from textual.command import CommandList

    found = app.screen.query_one(CommandList)
    hits = [found.get_option_at_index(i).hit for i in range(found.option_count)]
    return [(str(hit.text), str(hit.help)) for hit in hits]


async def palette_after(app, pilot, typed: str) -> list[tuple[str, str]]:
    await pilot.press("ctrl+p", *typed)
    for _ in range(40):  # the palette gathers hits in a worker
        await pilot.pause(0.05)
        hits = palette_hits(app)
        if hits and not app.screen.query_one("LoadingIndicator").display:
            break
    await pilot.pause(0.3)
    hits = palette_hits(app)
    await pilot.press("escape")
    await settle(app, pilot)
    return hits


@pytest.mark.slow
@pytest.mark.parametrize(
    ("typed", "title", "why"),
    [
        ("miaosha", "秒杀系统设计", "open note (pinyin: miaosha)"),  # in full, as kb show
        ("msxt", "秒杀系统设计", "open note (pinyin: msxt)"),  # initials
        ("xcgs", "显存估算速查", "open note (pinyin: xcgs)"),
        ("flash sale", "秒杀系统设计", "open note (alias: flash sale design)"),
        ("redis studdy", "Redis study", "open note (close spelling)"),  # a typo
        ("redis", "Redis study", "open note"),  # the title itself, as before
    ],
)
async def test_the_palette_names_notes_by_the_naming_rule(
    make_kb, typed: str, title: str, why: str
) -> None:
    kb = make_kb(PALETTE_NOTES)
    kb.ingest()
    if why != "open note":  # kb show's rule names the same note (it wants the alias whole)
        named = why.removeprefix("open note (alias: ").rstrip(")") if "alias" in why else typed
        assert kb.find_note(named, cwd=kb.home).title == title
    app = make_app(kb, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        hits = await palette_after(app, pilot, typed)
        assert hits[:1] == [(title, why)]


@pytest.mark.slow
async def test_the_empty_palette_says_it_opens_notes(make_kb) -> None:
    from textual.command import CommandInput

    kb = make_kb(PALETTE_NOTES)
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.5)
        assert "Open a note" in str(app.screen.query_one(CommandInput).placeholder)
        offered = palette_hits(app)
        notes = [t for t, why in offered if why.startswith("open note")]
        assert sorted(notes) == sorted(["秒杀系统设计", "Redis study", "显存估算速查", "日记"])
        first = next(i for i, (_, why) in enumerate(offered) if why.startswith("open note"))
        from textual.command import CommandList

        app.screen.query_one(CommandList).highlighted = first
        await pilot.press("enter")  # an offered note opens
        await settle(app, pilot)
        assert app.screen.id == "note"
        assert app.screen.page.title == offered[first][0]


# -- paths and links in narrow panes -----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cells", "shown"),
    [
        ("posts/2024-03-10-flops-vs-latency.md", 40, "posts/2024-03-10-flops-vs-latency.md"),
        ("posts/2024-03-10-flops-vs-latency.md", 20, "posts/202…latency.md"),
        ("工程/分布式/二阶段提交与三阶段提交.md", 20, "工程/分布…段提交.md"),  # 2 cells each
        ("abcdef", 2, "a…"),
    ],
)
def test_a_path_is_cut_in_the_middle(text: str, cells: int, shown: str) -> None:
    from rich.cells import cell_len
    from textual.content import Content

    from kb.tui.hanging import middle_cut

    cut = middle_cut(Content(text), cells).plain
    assert cut == shown
    assert cell_len(cut) <= cells


def test_tags_give_way_to_the_path_and_a_line_number_stays() -> None:
    from textual.content import Content

    from kb.tui.widgets import PathRow, entry

    path = "notes/engineering/distributed/two-phase-commit.md"
    meta = entry([PathRow(Content("2024-05-01  "), path, Content("  #分布式 #事务"), yields=True)])
    assert str(meta.lay_out(76).rows) == f"2024-05-01  {path}  #分布式 #事务"  # all fit
    assert str(meta.lay_out(70).rows) == f"2024-05-01  {path}  #分布式"  # a tag at a time
    assert str(meta.lay_out(40).rows) == "2024-05-01  notes/enginee…hase-commit.md"
    link = entry([PathRow(Content("→ "), path, Content("  :12"))])
    assert str(link.lay_out(30).rows) == "→ notes/engin…e-commit.md  :12"


NARROW_NOTES = {
    "工程/分布式系统/事务/二阶段提交与三阶段提交的区别.md": (
        "---\ntitle: 两阶段提交\ntags: [distributed-systems, transactions]\ndate: 2024-05-01\n---\n"
        "见 [维基](https://zh.wikipedia.org/wiki/%E4%BA%8C%E9%98%B6%E6%AE%B5%E6%8F%90%E4%BA%A4)"
        " 和 [Saga](../../../posts/saga-pattern-in-microservices-explained.md)。\n"
    ),
    "posts/saga-pattern-in-microservices-explained.md": "# Saga\n\n见 [[两阶段提交]]。\n",
}
LONG_PATH = "工程/分布式系统/事务/二阶段提交与三阶段提交的区别.md"


@pytest.mark.slow
async def test_paths_in_narrow_panes_are_cut_in_the_middle_and_urls_decoded(make_kb) -> None:
    from rich.cells import cell_len

    from tests.tui.pilot import screen_lines

    kb = make_kb(NARROW_NOTES)
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(60, 24)) as pilot:
        await settle(app, pilot)
        lines = screen_lines(app)
        # The result's path row: its start and its file name, "…" between, on one row.
        rows = [line for line in lines if "2024-05-01" in line]
        assert len(rows) == 1 and "…" in rows[0] and "区别.md" in rows[0]
        assert not any(line.strip().startswith(("段提交", "区别")) for line in lines)
        assert all(cell_len(line) <= 60 for line in lines)
        await open_note(app, pilot, "两阶段提交")
        await pilot.press("ctrl+l")
        await settle(app, pilot)
        text = "\n".join(screen_lines(app))
        assert "↗ https://zh.wikipedia.org/wiki/二阶段提交" in text  # decoded
        assert "%E4" not in text
        saga = next(line for line in screen_lines(app) if line.strip().startswith("→"))
        assert "…" in saga and saga.rstrip().endswith(":6")  # cut, the line number kept
        await pilot.press("ctrl+y")  # copied as written, not decoded
        await settle(app, pilot)
        assert "%E4%BA%8C" in app.clipboard
