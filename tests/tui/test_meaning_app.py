"""Search by meaning in the app: as you type the words alone; once typing pauses a
question finds notes near in meaning, shown with ``≈ passage``; ctrl+l turns meaning off
for the search; the app embeds in its own worker after its ingest."""

from __future__ import annotations

import threading
from collections.abc import Callable

from textual.widgets import OptionList, Static

from kb.knowledge_base import KnowledgeBase
from kb.tui.app import make_app
from tests.integration.test_meaning import CONFIG, NOTES, FakeEmbedder, fake, vectors
from tests.tui.pilot import result_titles, search, settle

__all__ = ["fake"]  # the fixture, shared with test_meaning.py


def third_lines(app) -> list[str]:  # type: ignore[no-untyped-def]
    results = app.screen.query_one("#results", OptionList)
    return [
        str(results.get_option_at_index(i).prompt).split("\n")[2]
        for i in range(results.option_count)
    ]


async def test_a_question_is_answered_by_meaning_once_typing_pauses(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)  # no store yet: the app's first ingest builds it
    embedded_in: list[str] = []
    embed = kb.embed

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        embedded_in.append(threading.current_thread().name)
        return embed(*args, **kwargs)

    kb.embed = spy  # type: ignore[method-assign]
    app = make_app(kb, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await settle(app, pilot)
        assert embedded_in and threading.main_thread().name not in embedded_in
        assert vectors(kb) == (3, 0)
        await search(app, pilot, "how do I repair my car")
        assert result_titles(app)[:1] == ["Looking after an automobile"]
        assert third_lines(app)[0].startswith("≈ How to mend a vehicle")
        status = str(app.screen.query_one("#status", Static).render())
        assert "≈ 1 by meaning" in status
        await pilot.press("ctrl+l")  # meaning off: the words alone hold nothing
        await settle(app, pilot)
        assert result_titles(app) == []
        assert "words only" in str(app.screen.query_one("#status", Static).render())
        await pilot.press("ctrl+l")
        await settle(app, pilot)
        assert result_titles(app)[:1] == ["Looking after an automobile"]


async def test_where_the_words_decide_the_list_is_theirs(
    make_kb: Callable[..., KnowledgeBase], fake: Callable[..., FakeEmbedder]
) -> None:
    kb = make_kb(NOTES, CONFIG)
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "apple")
        assert result_titles(app) == ["Apples"]
        assert not any(line.startswith("≈") for line in third_lines(app))
