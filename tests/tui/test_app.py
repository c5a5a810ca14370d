"""The app as a whole: editing, creating, first run, notes changed on disk, help, engines."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Markdown, OptionList, Static

from kb.tui.app import KbApp, make_app
from tests.tui.pilot import (
    current_title,
    open_note,
    result_titles,
    screen_lines,
    search,
    settle,
    use_stand_in_editor,
    wait_for,
)


@pytest.mark.slow
async def test_edit_with_an_editor_then_see_the_change(sample, tmp_path, monkeypatch) -> None:
    use_stand_in_editor(monkeypatch, tmp_path, "\n新加的一段：拓扑排序\n")
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "Redis 学习笔记")
        await pilot.press("ctrl+e")
        await settle(app, pilot)
        assert "拓扑排序" in app.screen.query_one("#doc", Markdown).source
        await pilot.press("escape")
        await search(app, pilot, "拓扑排序")
        assert result_titles(app)[0] == "Redis 学习笔记"


@pytest.mark.slow
async def test_create_a_note_and_find_it(sample, tmp_path, monkeypatch) -> None:
    use_stand_in_editor(monkeypatch, tmp_path, "正文里写点 Bazel 缓存。\n")
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "构建缓存笔记")
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        assert app.screen.id == "note"
        assert current_title(app) == "构建缓存笔记"
        created = sample.config.roots[0].path / "构建缓存笔记.md"
        assert created.is_file()
        await pilot.press("escape")
        await search(app, pilot, "Bazel 缓存")
        assert "构建缓存笔记" in result_titles(app)


MARKUP_TITLES = ["[@click=app.quit]x[/]", "[link=file:///etc/passwd]y[/link]", "[b]bold[/b]"]


@pytest.mark.slow
async def test_note_text_is_never_markup(make_kb) -> None:
    kb = make_kb(
        {
            f"evil{i}.md": f"---\ntitle: \"{title}\"\ntags: ['[red]t[/red]']\n---\n\n"
            f"markupcheck {title} \x1b[31mred\x1b[0m\n"
            for i, title in enumerate(MARKUP_TITLES)
        }
    )
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "markupcheck")
        titles = result_titles(app)
        assert sorted(titles) == sorted(MARKUP_TITLES)
        results = app.screen.query_one("#results", OptionList)
        results.focus()
        await pilot.click("#results", offset=(5, 1))
        await settle(app, pilot)
        assert app.is_running  # the [@click=app.quit] title did nothing
        assert app.screen.id == "note"
        assert current_title(app) in MARKUP_TITLES
        assert "\x1b" not in app.screen.query_one("#doc", Markdown).source


async def test_first_run_ingests_with_progress(make_kb, tmp_path) -> None:
    kb = make_kb({"a.md": "# 第一篇\n\n显存\n"})
    assert not kb.config.store_path.exists()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "显存")
        assert result_titles(app) == ["第一篇"]


@pytest.mark.slow
async def test_notes_changed_on_disk_are_noticed(sample) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        note = sample.config.roots[0].path / "life" / "fresh.md"
        note.write_text("---\ntitle: 刚写的\n---\n\nquasar\n", encoding="utf-8")
        await search(app, pilot, "quasar")
        assert result_titles(app) == []
        app.reindex()  # what the watch timer does every few seconds
        await settle(app, pilot)
        assert result_titles(app) == ["刚写的"]


def help_text(app: KbApp) -> str:
    return str(app.screen.query_one("#help-text", Static).render())


@pytest.mark.slow
async def test_help_and_quit(sample) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")  # in the search box: text
        assert app.screen.query_one("#query", Input).value == "?"
        await pilot.press("f1")
        assert app.screen.id == "help"
        text = help_text(app)
        assert "tag tree with counts" in text  # the search screen's keys
        assert "date:2024-01..2024-06" in text  # and the query language
        await pilot.press("escape")
        assert app.screen.id == "search"
        assert "f1 Help" in screen_lines(app)[-1]  # the footer shows it
        await pilot.press("backspace", *"时间窗口", "enter")
        await settle(app, pilot)
        await pilot.press("question_mark")  # outside a text box: help
        assert app.screen.id == "help"
        assert "Reading a note" in help_text(app)
        assert "date:2024" not in help_text(app)
        await pilot.press("question_mark")
        assert app.screen.id == "note"
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert not app.is_running


@pytest.mark.slow
async def test_the_app_works_unchanged_on_whoosh(sample) -> None:
    pytest.importorskip("whoosh")
    sample.ingest(rebuild=True, engine="whoosh")
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.kb.engine().name == "whoosh"
        await open_note(app, pilot, "时间窗口")
        assert current_title(app) == "计算平台：用 Redis ZSET 做全局时间窗口限流"
        await pilot.press("ctrl+l", "enter")
        await settle(app, pilot)
        assert current_title(app) == "Redis 学习笔记"


@pytest.mark.slow
async def test_the_app_is_told_when_notes_change(sample, monkeypatch) -> None:
    pytest.importorskip("watchfiles")
    named: list[list[Path]] = []
    ingest_changed = sample.ingest_changed

    def recording(paths, **kwargs):
        named.append(list(paths))
        return ingest_changed(paths, **kwargs)

    monkeypatch.setattr(sample, "ingest_changed", recording)
    app = make_app(sample, watch=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert await wait_for(lambda: app.watching == "notifications", pilot)
        await pilot.pause(0.5)  # the watch is set up
        note = sample.config.roots[0].path / "life" / "told.md"
        note.write_text("---\ntitle: 文件通知\n---\n\nplatypus\n", encoding="utf-8")
        app.screen.query_one("#query", Input).value = ""
        await pilot.press(*"platypus")
        assert await wait_for(lambda: result_titles(app) == ["文件通知"], pilot)
    assert [note.resolve()] in [[p.resolve() for p in paths] for paths in named]


@pytest.mark.slow
async def test_without_notifications_a_stat_walk_takes_over(sample, monkeypatch) -> None:
    watchfiles = pytest.importorskip("watchfiles")

    def cannot_watch(*args, **kwargs):
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(watchfiles, "watch", cannot_watch)
    monkeypatch.setattr("kb.tui.app.WATCH_SECONDS", 0.3)
    app = make_app(sample, watch=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert await wait_for(lambda: app.watching == "polling", pilot)
        note = sample.config.roots[0].path / "life" / "walked.md"
        note.write_text("---\ntitle: 轮询找到的\n---\n\nnarwhal\n", encoding="utf-8")
        app.screen.query_one("#query", Input).value = ""
        await pilot.press(*"narwhal")
        assert await wait_for(lambda: result_titles(app) == ["轮询找到的"], pilot)


def test_help_rows_wrap_under_their_own_text_in_a_narrow_window() -> None:
    from kb.tui.help import help_text as page

    rows = [("ctrl+t", "filter by tag: a tag tree with counts, enter chooses, escape clears it")]
    laid = page("Searching", rows, query_language=True).lay_out(40)
    lines = laid.rows.plain.split("\n")
    start = lines.index(next(line for line in lines if line.startswith("ctrl+t")))
    assert lines[start + 1].startswith(" " * 8) and lines[start + 1].strip()  # hangs
    tag_row = next(i for i, line in enumerate(lines) if line.startswith("tag, title, path"))
    assert lines[tag_row + 1].startswith(" " * 18)  # an example wraps under the example
