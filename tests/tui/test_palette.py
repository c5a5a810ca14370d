"""The command palette: opening a note by its name."""

from __future__ import annotations

import pytest
from textual.command import CommandList

from kb.tui.app import make_app
from tests.tui.pilot import (
    current_title,
    settle,
)


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
async def test_the_empty_palette_lists_notes_before_textuals_own_commands(sample) -> None:
    app = make_app(sample, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause(0.5)
        await settle(app, pilot)
        listed = app.screen.query_one(CommandList)
        prompts = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]
        first_command = min(
            i for i, p in enumerate(prompts) if p.split("\n")[0] in ("Keys", "Quit", "Theme")
        )
        assert first_command >= 5  # the notes changed lately come first
        assert all(".md" in prompt for prompt in prompts[:first_command])


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
