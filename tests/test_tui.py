"""The terminal UI, driven with Textual's pilot: each flow a user relies on."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shlex
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.geometry import Offset, Region
from textual.selection import Selection
from textual.widgets import Input, Markdown, OptionList, Static
from textual.worker import WorkerCancelled

from kb.knowledge_base import KnowledgeBase
from kb.tui.app import KbApp, make_app
from tests.conftest import SAMPLE_NOTES


@pytest.fixture
def sample(tmp_path: Path) -> KnowledgeBase:
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    (tmp_path / "kb.yaml").write_text(
        "roots: [notes]\nsite_url: https://blog.example.com\n", encoding="utf-8"
    )
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    return kb


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


def use_stand_in_editor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str) -> None:
    """$EDITOR becomes a script that appends ``text`` to the file it is given."""
    script = tmp_path / "editor.py"
    script.write_text(
        f"import sys\nwith open(sys.argv[1], 'a', encoding='utf-8') as f:\n    f.write({text!r})\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)


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


async def test_empty_knowledge_base_says_how_to_start(make_kb) -> None:
    kb = make_kb({})
    app = make_app(kb, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        status = str(app.screen.query_one("#status", Static).render())
        assert "no notes yet" in status
        assert "ctrl+n" in status


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


@pytest.mark.slow
async def test_command_palette_opens_a_note_by_title(sample) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"Redis学习")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen.id == "note"
        assert current_title(app) == "Redis 学习笔记"


@pytest.mark.slow
async def test_the_palette_reads_the_titles_again_only_after_the_notes_change(
    sample, monkeypatch
) -> None:
    reads = []
    note_choices = sample.note_choices

    def counting():
        reads.append(1)
        return note_choices()

    monkeypatch.setattr(sample, "note_choices", counting)
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        for _ in range(2):
            await pilot.press("ctrl+p", *"redis")
            await pilot.pause(0.5)
            await pilot.press("escape")
            await settle(app, pilot)
        assert len(reads) == 1  # opened twice, read once
        note = sample.config.roots[0].path / "life" / "palette.md"
        note.write_text("# 调色板笔记\n", encoding="utf-8")
        app.reindex()
        await settle(app, pilot)
        await pilot.press("ctrl+p", *"调色板")
        await pilot.pause(0.5)
        assert len(reads) == 2
        await pilot.press("enter")
        await settle(app, pilot)
        assert current_title(app) == "调色板笔记"


@pytest.mark.parametrize(
    ("query", "keep", "expected"),
    [
        # Every text holding the letters in order, the ones holding the query whole first
        # (where it starts earliest, then shortest), then the rest, shortest first.
        (
            "redis",
            10,
            ["redis 学习笔记", "redis-cluster", "my redis", "r e d i s x", "rxexdxixs yy"],
        ),
        (
            "REDIS",
            10,
            ["redis 学习笔记", "redis-cluster", "my redis", "r e d i s x", "rxexdxixs yy"],
        ),
        # Capped: the whole matches are kept before the scattered ones.
        ("redis", 2, ["redis 学习笔记", "redis-cluster"]),
        ("学习", 10, ["redis 学习笔记"]),
        ("", 10, []),
        ("zz", 10, []),
    ],
)
def test_palette_candidates(query: str, keep: int, expected: list[str]) -> None:
    from kb.tui.commands import fuzzy_candidates

    folded = ["rxexdxixs yy", "redis-cluster", "my redis", "redis 学习笔记", "r e d i s x", "sider"]
    assert [folded[i] for i in fuzzy_candidates(folded, query, keep)] == expected


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


# A long mixed Chinese/English note: Latin glued to Chinese, numbers with units, closing
# punctuation, a table wider than the page, a formula and a long code line.
MIXED_NOTE = (Path(__file__).parent / "fixtures" / "mixed-note.md").read_text(encoding="utf-8")


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


async def wait_for(condition, pilot, seconds: float = 10.0) -> bool:
    for _ in range(int(seconds / 0.1)):
        if condition():
            return True
        await pilot.pause(0.1)
    return condition()


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
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_reading_a_mixed_note_in_a_real_terminal(tmp_path: Path) -> None:
    """The installed kb in tmux at 80 columns: page through a mixed note and check every
    line on the terminal, as a reader sees it."""
    from tests.test_e2e import Terminal

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


@pytest.mark.slow
async def test_kb_open_of_no_single_note_starts_searching_it(sample) -> None:
    app = make_app(sample, watch=False, query="redis")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert app.screen.id == "search"
        assert app.screen.query_one("#query", Input).value == "redis"
        assert "Redis 学习笔记" in result_titles(app)


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
