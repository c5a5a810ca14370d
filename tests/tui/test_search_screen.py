"""The search screen: typing, filters, the result list, the preview."""

from __future__ import annotations

import os
import threading

import pytest
from textual.widgets import Input, OptionList, Static

from kb.tui.app import KbApp, make_app
from tests.tui.pilot import (
    result_titles,
    screen_lines,
    search,
    settle,
    use_stand_in_editor,
)


@pytest.mark.slow
async def test_typing_chinese_finds_the_note(sample) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+o")  # the empty box: by front-matter date
        await settle(app, pilot)
        assert result_titles(app)[0] == "2024 年终总结"
        await search(app, pilot, "时间窗口")
        assert result_titles(app)[0] == "计算平台：用 Redis ZSET 做全局时间窗口限流"
        await search(app, pilot, "roof")  # an unfinished word is a prefix
        assert any("Roofline" in title for title in result_titles(app))


@pytest.mark.slow
async def test_filter_by_tag(sample) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+t")
        tree = app.screen.query_one("#tags")
        redis = next(node for node in tree.root.children if node.data == "redis")
        tree.select_node(redis)
        await settle(app, pilot)
        titles = result_titles(app)
        assert "Redis 学习笔记" in titles
        assert all("Lecture" not in title for title in titles)
        await search(app, pilot, "ZSET")
        assert result_titles(app)[0] == "计算平台：用 Redis ZSET 做全局时间窗口限流"
        assert "tag: redis" in str(app.screen.query_one("#status", Static).render())
        chip = app.screen.query_one("#tag-chip", Static)
        assert not tree.display and chip.display  # the tree went, the filter shows
        assert "#redis ✕" in str(chip.render())
        await pilot.press("escape")  # first the text
        await settle(app, pilot)
        assert app.screen.query_one("#query", Input).value == ""
        assert chip.display and all("Lecture" not in t for t in result_titles(app))
        await pilot.press("escape")  # then the tag
        await settle(app, pilot)
        assert not chip.display
        assert any("Lecture" in t for t in result_titles(app))
        await pilot.press("ctrl+t")
        tree.select_node(redis)
        await settle(app, pilot)
        await pilot.click("#tag-chip")  # a click removes it too
        await settle(app, pilot)
        assert not chip.display
        assert any("Lecture" in t for t in result_titles(app))


@pytest.mark.slow
async def test_a_tag_with_words_typed_says_the_words_filter_too(sample) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "roofline")
        await pilot.press("ctrl+t")
        tree = app.screen.query_one("#tags")
        tree.select_node(next(node for node in tree.root.children if node.data == "redis"))
        await settle(app, pilot)
        status = str(app.screen.query_one("#status", Static).render())
        assert result_titles(app) == []
        assert "0 notes  tag: redis and the words “roofline” (esc clears the words)" in status


async def test_empty_knowledge_base_says_how_to_start(make_kb) -> None:
    kb = make_kb({})
    app = make_app(kb, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        status = str(app.screen.query_one("#status", Static).render())
        assert "no notes yet" in status
        assert "ctrl+n" in status


async def test_typing_never_waits_for_an_ingest(sample, monkeypatch) -> None:
    """Searches run on their own reader while an ingest is under way; a watch tick that
    meets a running ingest of the app leaves it to the next tick."""
    release = threading.Event()
    ingests: list[float | None] = []
    real_ingest = sample.ingest

    def slow_ingest(*args, **kwargs):
        ingests.append(kwargs.get("lock_wait"))
        release.wait(10)
        return real_ingest(*args, **kwargs)

    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        monkeypatch.setattr(sample, "ingest", slow_ingest)
        app.action_reindex()  # ctrl+r: a first-style ingest, now held up
        await pilot.pause(0.2)
        app.reindex()  # a watch tick meanwhile
        await pilot.pause(0.2)
        app.screen.query_one("#query", Input).value = ""
        await pilot.press(*"时间窗口")
        for _ in range(50):
            if result_titles(app)[:1] == ["计算平台：用 Redis ZSET 做全局时间窗口限流"]:
                break
            await pilot.pause(0.1)
        assert result_titles(app)[0] == "计算平台：用 Redis ZSET 做全局时间窗口限流"
        assert ingests == [None]  # the tick did not start a second ingest
        release.set()
        await settle(app, pilot)


def titles_on_screen(app: KbApp) -> list[str]:
    """The results whose title line is on screen."""
    lines = {line.strip() for line in screen_lines(app)}
    return [title for title in result_titles(app) if title in lines]


@pytest.mark.slow
async def test_compact_results_and_the_order_of_the_empty_search(sample) -> None:
    edited = sample.config.roots[0].path / "life" / "2024-review.md"
    old = sample.config.roots[0].path / "posts" / "kv-cache-math.md"
    os.utime(old, (1e9, 1e9))
    edited.write_text(edited.read_text(encoding="utf-8") + "\n又改了一行\n", encoding="utf-8")
    sample.ingest()
    app = make_app(sample, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        titles = result_titles(app)
        assert titles[0] == "2024 年终总结"  # modified last
        assert titles[-1] == "KV cache 显存怎么算"  # its file is from 2001
        assert "modified last" in screen_lines(app)[3]
        await pilot.press("ctrl+o")
        await settle(app, pilot)
        assert result_titles(app)[-1] != "KV cache 显存怎么算"  # by date it is not last
        await search(app, pilot, "显存")
        assert len(titles_on_screen(app)) >= 6  # compact
        await pilot.press("ctrl+g")  # full results: fewer fit
        await settle(app, pilot)
        assert len(titles_on_screen(app)) < 6
        await search(app, pilot, "title:ZSET")
        assert "1 note " in screen_lines(app)[3] + " "


@pytest.mark.slow
async def test_edit_the_highlighted_result_from_the_list(sample, tmp_path, monkeypatch) -> None:
    use_stand_in_editor(monkeypatch, tmp_path, "\n列表里直接改：quokka\n")
    app = make_app(sample, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "Redis 学习笔记")
        await pilot.press("down", "ctrl+e")  # the first result, from the list
        await settle(app, pilot)
        assert app.screen.id == "search"
        app.screen.query_one("#query", Input).focus()
        await search(app, pilot, "quokka")
        assert result_titles(app) == ["Redis 学习笔记"]


@pytest.mark.slow
async def test_a_result_holding_only_some_words_says_which_it_lacks(sample) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "redis 持久化 区别")
        results = app.screen.query_one("#results", OptionList)
        prompts = [str(results.get_option_at_index(i).prompt) for i in range(3)]
        assert "Redis 学习笔记" in prompts[0]
        assert all("without" in prompt for prompt in prompts)  # none holds all three
        lacking = results.get_option_at_index(0).prompt
        assert any("dim" in str(span.style) for span in lacking.spans)  # type: ignore[union-attr]


@pytest.mark.slow
async def test_kb_open_of_no_single_note_starts_searching_it(sample) -> None:
    app = make_app(sample, watch=False, query="redis")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.screen.id == "search"
        assert app.screen.query_one("#query", Input).value == "redis"
        assert "Redis 学习笔记" in result_titles(app)


PREVIEWED_NOTE = """# 缓存笔记

## 策略

- LRU 淘汰
- Redis 集群，[链接](other.md)

| 层 | 延迟 |
| --- | --- |
| L1 | 1 ns |

```python
x = 1  # [bold]not markup[/bold]
```
"""


@pytest.mark.slow
async def test_the_preview_is_formatted_with_the_matches_highlighted(make_kb) -> None:
    kb = make_kb({"cache.md": PREVIEWED_NOTE, "other.md": "# Other\n\nnothing\n"})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"redis")
        await settle(app, pilot)
        box = app.screen.query_one("#preview")
        shown = [line.strip() for line in screen_lines(app, box.content_region)]
        assert shown[0] == "缓存笔记"  # the title, then the path
        assert "cache.md" in shown[1]
        assert "策略" in shown  # a heading on its own line
        assert "• Redis 集群，链接" in shown  # a list item with its bullet, link text only
        assert "层 │ 延迟" in shown and "L1 │ 1 ns" in shown  # the table in columns
        assert "▏ x = 1  # [bold]not markup[/bold]" in shown  # code, as written
        body = app.screen.query_one("#preview-body", Static).render()
        lit = body.lay_out(box.content_region.width).rows
        words = {lit.plain[s.start : s.end] for s in lit.spans if "underline" in str(s.style)}
        assert "Redis" in words
        # Typing on: the preview follows the highlighted result.
        await pilot.press("ctrl+u", *"other")
        await settle(app, pilot)
        assert screen_lines(app, box.content_region)[0].strip() == "Other"


@pytest.mark.slow
async def test_a_window_widened_past_the_threshold_builds_the_preview(make_kb) -> None:
    kb = make_kb({"cache.md": PREVIEWED_NOTE})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(80, 30)) as pilot:
        await settle(app, pilot)
        await pilot.press(*"redis")
        await settle(app, pilot)
        assert not app.screen.query_one("#preview").display  # too narrow: not built
        assert app.screen.query_one("#preview-body", Static).content == ""
        await pilot.resize_terminal(120, 30)
        await settle(app, pilot)
        box = app.screen.query_one("#preview")
        assert screen_lines(app, box.content_region)[0].strip() == "缓存笔记"
