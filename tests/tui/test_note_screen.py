"""The note screen (the reader): links, series, width, connections, find, lists, images, tables."""

from __future__ import annotations

import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest
from textual.geometry import Offset
from textual.selection import Selection
from textual.widgets import Input, Markdown, Static

from kb.tui.app import make_app
from tests.tui.pilot import (
    MIXED_NOTE,
    broken_words,
    current_title,
    open_note,
    read_whole_note,
    result_titles,
    screen_lines,
    settle,
)


@pytest.mark.slow
async def test_open_follow_a_link_and_come_back(sample) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "时间窗口")
        assert app.screen.id == "note"
        assert current_title(app) == "计算平台：用 Redis ZSET 做全局时间窗口限流"
        assert app.screen.query_one("#doc", Markdown).source.strip()
        await pilot.press("ctrl+l")  # the link list: first link is `uses: Redis 学习笔记`
        await pilot.press("enter")
        await settle(app, pilot)
        assert current_title(app) == "Redis 学习笔记"
        breadcrumb = str(app.screen.query_one("#breadcrumb", Static).render())
        assert "计算平台" in breadcrumb and "Redis 学习笔记" in breadcrumb
        await pilot.press("alt+left")
        await settle(app, pilot)
        assert current_title(app) == "计算平台：用 Redis ZSET 做全局时间窗口限流"
        await pilot.press("alt+right")
        await settle(app, pilot)
        assert current_title(app) == "Redis 学习笔记"
        await pilot.press("escape", "escape")  # the link list kept the focus, then the note
        assert app.screen.id == "search"


@pytest.mark.slow
async def test_clicked_links_go_through_kb_never_a_browser(sample, monkeypatch) -> None:
    app = make_app(sample, watch=False)
    opened: list[str] = []
    monkeypatch.setattr(app, "open_url", lambda url, **_: opened.append(url))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "Roofline 模型")
        screen = app.screen
        document = screen.query_one("#doc", Markdown)
        document.post_message(Markdown.LinkClicked(document, "kb:wiki/lecture-03-gpus"))
        await settle(app, pilot)
        assert current_title(app) == "CS336 Lecture 3：GPU 是怎么工作的"
        document.post_message(Markdown.LinkClicked(document, "https://arxiv.org/abs/2205.14135"))
        await settle(app, pilot)
        document.post_message(Markdown.LinkClicked(document, "/etc/passwd"))
        await settle(app, pilot)
        assert opened == []
        assert current_title(app) == "CS336 Lecture 3：GPU 是怎么工作的"


@pytest.mark.slow
async def test_walk_a_series(sample) -> None:
    lecture = sample.find_note("cs336/lecture-03-gpus.md")
    ((name, notes),) = sample.series(lecture.id)
    order = [note.title for note in notes]  # date order, from the core
    here = order.index(lecture.title)
    assert name == "CS336"
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, 'title:"Lecture 3"')
        assert current_title(app) == lecture.title
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert current_title(app) == order[here + 1]
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert current_title(app) == order[here - 1]


@pytest.mark.slow
async def test_a_link_to_a_heading_deep_in_a_long_note_scrolls_there(make_kb) -> None:
    sections = "".join(f"## section {i}\n\n" + "长文本 " * 200 + "\n\n" for i in range(60))
    kb = make_kb(
        {
            "big.md": f"# Big note\n\n{sections}",
            "src.md": "# Source\n\n[[Big note#section-55]] and (cuda)\n",
            "t.md": "---\ntags: [cuda(gpu)]\n---\n# Tagged\n",
        }
    )
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "Source")
        await pilot.press("ctrl+l", "enter")
        await settle(app, pilot)
        screen = app.screen
        while len(screen.query_one("#doc", Markdown).source) < len(screen.shown) - 10:
            await pilot.pause(0.05)
        await settle(app, pilot)
        assert current_title(app) == "Big note"
        assert screen.query_one("#document").scroll_y > 1000
        # From the link list: to the note, to the search, then the box cleared.
        await pilot.press("escape", "escape", "escape", "ctrl+t")
        await settle(app, pilot)
        tree = app.screen.query_one("#tags")
        tree.select_node(next(n for n in tree.root.children if n.data == "cuda(gpu)"))
        await settle(app, pilot)
        assert result_titles(app) == ["Tagged"]


@pytest.mark.slow
@pytest.mark.parametrize("width", [40, 80, 120])
async def test_mixed_text_breaks_where_a_reader_expects(make_kb, width) -> None:
    kb = make_kb({"gpu.md": MIXED_NOTE})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(width, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "显存带宽")
        document = app.screen.query_one("#document")
        lines = []
        for strip_y in range(0, 200, 20):  # the whole note, a screenful at a time
            document.scroll_to(y=strip_y, animate=False)
            await pilot.pause()
            lines += screen_lines(app, document.content_region)
        starts = [line.strip()[:1] for line in lines if line.strip()]
        assert not set(starts) & set("。，、；：！？）」』")
        assert broken_words(lines, MIXED_NOTE, document.content_region.width) == []
        assert "FlashAttention" in "\n".join(lines)


@pytest.mark.slow
async def test_the_note_gets_the_width(make_kb) -> None:
    kb = make_kb({"gpu.md": MIXED_NOTE, "short.md": "# Short\n\n## one\n\ntext\n"})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "显存带宽")
        screen = app.screen
        document, outline, side = (
            screen.query_one(f"#{i}") for i in ("document", "outline", "side")
        )
        assert document.content_region.width >= 80
        assert not outline.display  # four headings, but no room for an outline at 120
        assert side.display and side.region.x > document.region.x  # connections beside
        await pilot.press("ctrl+o")
        assert outline.display
        await pilot.press("ctrl+o", "ctrl+k")
        assert not outline.display and not side.display
        lines = await read_whole_note(app, pilot)
        assert not any("…" in line for line in lines)  # the wide table wraps, never cut
        assert "所有 SM 共享" in "".join(lines)  # the last column of the widest row
        await pilot.resize_terminal(160, 40)
        await settle(app, pilot)
        assert outline.display is False  # the user hid it: it stays hidden
        await pilot.press("escape")
        await open_note(app, pilot, "Short")
        assert not outline.display


@pytest.mark.slow
async def test_narrow_window_puts_connections_below_on_request(make_kb) -> None:
    kb = make_kb({"gpu.md": MIXED_NOTE})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "显存带宽")
        screen = app.screen
        document, side = screen.query_one("#document"), screen.query_one("#side")
        assert not side.display
        assert document.content_region.width >= 76
        await pilot.press("ctrl+b")  # backlinks: the panel comes, below the note
        await settle(app, pilot)
        assert side.display and side.region.y > document.region.y
        assert side.region.width == 80


@pytest.mark.slow
async def test_the_current_title_stays_visible_after_hops(make_kb) -> None:
    long = "一个很长很长的标题，用来把面包屑挤满 "
    kb = make_kb({f"n{i}.md": f"# {long}{i}\n\n[[{long}{i + 1}]] hopword{i}\n" for i in range(5)})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "hopword0")
        for _ in range(3):
            await pilot.press("ctrl+l", "enter")
            await settle(app, pilot)
        line = screen_lines(app)[0].rstrip()
        assert current_title(app) == f"{long}3"
        assert line.endswith(f"{long}3".strip())
        assert line.startswith(" ◀ …")  # the trail gave way on the left


@pytest.mark.slow
async def test_empty_connection_tabs_say_so(make_kb) -> None:
    kb = make_kb({"alone.md": "# Alone\n\nnothing links here\n"})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "Alone")
        shown = "\n".join(screen_lines(app))
        assert "This note links to nothing." in shown
        assert str(app.screen.query_one("#side").get_tab("tab-series").label) == "Series 0"
        await pilot.press("ctrl+b")
        await settle(app, pilot)
        assert "No note links here." in "\n".join(screen_lines(app))
        await pilot.press("ctrl+b")
        await settle(app, pilot)
        assert "mentions this one's title" in "\n".join(screen_lines(app))


@pytest.mark.slow
async def test_reader_keys_and_find_in_the_note(make_kb) -> None:
    kb = make_kb({"gpu.md": MIXED_NOTE})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "显存带宽")
        await read_whole_note(app, pilot)
        document = app.screen.query_one("#document")
        document.scroll_home(animate=False)
        await pilot.press("j", "j")
        await pilot.pause()
        assert document.scroll_y == 2
        await pilot.press("k")
        await pilot.pause()
        assert document.scroll_y == 1
        await pilot.press("space")
        await pilot.pause()
        assert document.scroll_y > 10
        await pilot.press("G")
        await pilot.pause()
        assert document.scroll_y == document.max_scroll_y
        await pilot.press("g")
        await pilot.pause()
        assert document.scroll_y == 0
        await pilot.press("slash", *"hbm", "enter")  # any case; then n and N step
        await pilot.pause()
        count = app.screen.query_one("#find-count", Static)
        assert str(count.render()).startswith("1/3")
        await pilot.press("n", "n", "n")
        assert str(count.render()).startswith("1/3")  # round again
        await pilot.press("N")
        assert str(count.render()).startswith("3/3")
        await pilot.pause()
        assert document.scroll_y > 10  # the table row, further down
        await pilot.press("ctrl+f")
        app.screen.query_one("#find", Input).value = ""
        await pilot.press(*"瓶颈")
        assert str(count.render()).startswith("1/2")
        await pilot.press("escape", "escape")  # the find bar, then the note
        assert app.screen.id == "search"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_reading_a_mixed_note_in_a_real_terminal(tmp_path: Path) -> None:
    """The installed kb in tmux at 80 columns: page through a mixed note and check every
    line on the terminal, as a reader sees it."""
    from tests.tui.test_e2e import Terminal

    kb = shutil.which("kb", path=str(Path(sys.executable).parent))
    assert kb, "the kb command is not installed beside this Python"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "gpu.md").write_text(MIXED_NOTE, encoding="utf-8")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    command = f"{shlex.quote(kb)} --kb {shlex.quote(str(tmp_path))}; sleep 30"
    terminal = Terminal(f"kbread{tmp_path.name}", command, size=(80, 24))
    try:
        terminal.wait_for("Indexed 1 note ")
        terminal.send("显存带宽")
        terminal.wait_for("1 note\n")
        deadline = time.monotonic() + 15
        while "Indexed" in terminal.screen() and time.monotonic() < deadline:
            time.sleep(0.2)  # the notice would cover the page's right side
        terminal.send("Enter")
        terminal.wait_for("/ Find")  # the reader's footer
        terminal.wait_for("这篇最早是")  # and the note drawn
        screens = [terminal.screen()]
        while "优化的方向" not in screens[-1] and len(screens) < 20:
            terminal.send("Space")
            deadline = time.monotonic() + 5
            while terminal.screen() == screens[-1] and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(0.3)  # the page fully drawn
            screens.append(terminal.screen())
    finally:
        terminal.close()
    # The page, without the breadcrumb, the footer and the scrollbar's blocks.
    lines = [line.rstrip(" ▁▂▃▄▅▆▇█▔") for screen in screens for line in screen.splitlines()[1:-1]]
    text = "\n".join(lines)
    assert "I=(FLOPs)/(Bytes)" in text  # the formula, as Unicode
    assert "优化的方向" in text  # the end of the note was reached
    assert not {line.strip()[:1] for line in lines} & set("。，、；：！？）」』")
    assert broken_words(lines, MIXED_NOTE, 76) == []


@pytest.mark.slow
async def test_kb_open_starts_on_the_note_it_names(sample) -> None:
    note = sample.find_note("xcgs")  # pinyin initials of 显存估算速查
    app = make_app(sample, watch=False, note_id=note.id)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.screen.id == "note"
        assert current_title(app) == "显存估算速查"


LIST_NOTE = """# Lists

Before the lists, a paragraph with a [link](other.md).

- 第一项：显存带宽是GPU的瓶颈，尤其在 decode 阶段，每生成一个 token 都要把全部权重读一遍
- second item, [the other note](other.md)
  - nested under the second, long enough to wrap onto a second line of the page here
- third

3. three
4. four

```
code between lists
```

- after the code
"""


@pytest.mark.slow
async def test_lists_are_drawn_by_few_widgets_and_read_as_before(make_kb) -> None:
    kb = make_kb({"lists.md": LIST_NOTE, "other.md": "# Other\n\nthe other note\n"})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(80, 30)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "Lists")
        lines = await read_whole_note(app, pilot)
        text = [line.rstrip() for line in lines]
        first = next(i for i, line in enumerate(text) if "第一项" in line)
        bullet_column = text[first].index("•")
        # The item's second row starts under its first word, not under the bullet.
        assert text[first + 1][: bullet_column + 2].strip() == ""
        assert text[first + 1][bullet_column + 2] != " "
        nested = next(i for i, line in enumerate(text) if "nested under" in line)
        assert text[nested].index("▪") > bullet_column  # indented, with the next bullet
        assert text[nested + 1].strip().startswith(("page", "of", "line", "second"))
        assert any(line.strip().startswith("3. three") for line in text)
        assert any(line.strip().startswith("4. four") for line in text)
        assert any(line.strip().startswith("• after the code") for line in text)
        # The paragraph and the three lists before the code are one widget; the list after
        # the code another: a widget per block, not four per item.
        document = app.screen.query_one("#doc")
        assert len(document.children) == 4  # heading, flow, code, flow
        # Find in the note finds text in a list item.
        await pilot.press("slash", *"nested", "enter")
        await pilot.pause()
        assert str(app.screen.query_one("#find-count", Static).render()).startswith("1/1")
        lit = document.children[1].render().content  # the match, drawn reversed
        assert [lit.plain[s.start : s.end] for s in lit.spans if s.style == "reverse"] == ["nested"]
        await pilot.press("escape")
        # A mouse selection copies the note's text: no bullet, no break where it wrapped.
        flow = document.children[1]
        rows = flow.render().lay_out(flow.content_region.width).rows.plain.split("\n")
        y = next(i for i, row in enumerate(rows) if "第一项" in row)
        selected = Selection(Offset(rows[y].index("第一项"), y), Offset(len(rows[y + 1]), y + 1))
        assert flow.get_selection(selected) == (LIST_NOTE.splitlines()[4][2:], "\n")
        everything = flow.get_selection(Selection(None, None))[0]
        assert "•" not in everything and "Before the lists" in everything
        # A link in a list item is followed by the app, like one in a paragraph.
        await flow.action_link("other.md")
        await settle(app, pilot)
        assert current_title(app) == "Other"


IMAGE_NOTE = """# Plots

The roofline: ![Roofline plot](img/roofline.png) and a lost one ![gone](img/gone.png).

![remote](https://example.com/r.png)
"""


@pytest.mark.slow
async def test_images_show_as_placeholders_and_open_only_on_request(make_kb, monkeypatch) -> None:
    kb = make_kb({"plots.md": IMAGE_NOTE})
    (kb.notes_root / "img").mkdir()
    (kb.notes_root / "img" / "roofline.png").write_bytes(b"\x89PNG\r\n")
    kb.ingest()
    launched: list[str] = []
    monkeypatch.setattr("click.launch", lambda url, *a, **k: launched.append(url) or 0)
    app = make_app(kb, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "Plots")
        shown = "\n".join(screen_lines(app))
        assert "🖼 Roofline plot (roofline.png)" in shown
        assert "🖼 gone (gone.png)" in shown
        assert launched == []  # never by itself
        # A click on the placeholder (its link) opens the file with the system's viewer.
        flow = app.screen.query_one("#doc").children[1]
        await flow.action_link("kb-image:img/roofline.png")
        await settle(app, pilot)
        assert launched == [str(kb.notes_root / "img" / "roofline.png")]
        # A missing file says so, in one line; a remote image is not opened.
        await flow.action_link("kb-image:img/gone.png")
        await flow.action_link("kb-image:https://example.com/r.png")
        await settle(app, pilot)
        messages = [str(n.message) for n in app._notifications]
        assert "Image not found: img/gone.png" in messages
        assert "Remote image (not opened), copied: https://example.com/r.png" in messages
        assert len(launched) == 1
        # From the keyboard: the link list offers the images; Enter opens one.
        await pilot.press("ctrl+l")
        await settle(app, pilot)
        assert "🖼 Roofline plot (roofline.png)" in "\n".join(screen_lines(app))
        await pilot.press("enter")
        await settle(app, pilot)
        assert launched[1:] == [str(kb.notes_root / "img" / "roofline.png")]


@pytest.mark.slow
async def test_a_table_is_one_widget_and_scrolls_when_wider_than_the_page(make_kb) -> None:
    kb = make_kb({"gpu.md": MIXED_NOTE})
    kb.ingest()
    for width, scrolls in ((40, True), (120, False)):
        app = make_app(kb, watch=False)
        async with app.run_test(size=(width, 40)) as pilot:
            await settle(app, pilot)
            await open_note(app, pilot, "显存带宽")
            await read_whole_note(app, pilot)
            table = app.screen.query_one("Table")
            assert [type(w).__name__ for w in table.query("*")] == ["TableText"]
            assert (table.max_scroll_x > 0) is scrolls
            rows = table.query_one("TableText").content.plain.split("\n")
            # Every row whole (the page's edge cuts it, not a line break), words kept whole.
            assert all(row.endswith(("│", "┐", "┤", "┘")) for row in rows)
            assert any("Registers" in row for row in rows)
            assert any("FlashAttention" in row for row in rows)


@pytest.mark.slow
async def test_the_panel_opens_on_a_tab_with_entries_and_related_stays_one_line(make_kb) -> None:
    """A note that links to nothing opens its panel on the first tab that lists something
    (not on an empty Links tab), and each related note takes one line however long its
    reason, cut with … in the narrow panel."""
    body = "redis 的 zset 做滑动窗口限流，pipeline 和 lua 脚本保证原子性，sentinel 做故障转移。"
    notes = {
        "target.md": f"---\ntitle: 限流目标\ntags: [redis, cache, ratelimit]\n---\n\n{body}\n",
        "source.md": f"# 引用者\n\n见 [[target]]。\n\n{body}\n",
        **{
            f"near{i}.md": f"---\ntitle: 相近的笔记 {i}\ntags: [redis, cache, ratelimit]\n---\n\n"
            f"{body}\n"
            for i in range(3)
        },
    }
    kb = make_kb(notes)
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "限流目标")
        await settle(app, pilot)
        side = app.screen.query_one("#side")
        assert side.display
        assert side.active == "tab-backlinks"  # Links is empty: the first tab with entries
        side.active = "tab-related"
        await settle(app, pilot)
        related = app.screen.query_one("#related")
        assert related.option_count >= 3
        lines = [line for line in screen_lines(app, related.content_region) if line.strip()]
        assert len(lines) == related.option_count  # one line each: no wrapped reason lines
        assert all(line.rstrip().endswith("…") for line in lines if "相近的笔记" in line)


@pytest.mark.slow
async def test_a_long_heading_wraps_under_itself_in_the_outline(make_kb) -> None:
    long = "一个很长的二级标题，讲显存带宽与算术强度之间的关系以及 Roofline 模型怎么画"
    body = "\n\n".join(
        f"## 第{i}节\n\n正文 outlineword。\n\n### {long}{i}\n\n内容。" for i in range(3)
    )
    kb = make_kb({"long.md": f"# 长标题\n\n{body}\n"})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "outlineword")
        outline = app.screen.query_one("#outline")
        assert outline.display
        lines = screen_lines(app, outline.content_region)
        first = next(i for i, line in enumerate(lines) if "一个很长" in line)
        indent = len(lines[first]) - len(lines[first].lstrip())
        assert indent >= 4  # a third-level heading
        assert lines[first + 1].startswith(" " * indent) and lines[first + 1].strip()
