"""``kb lsp`` warms what completion needs while the editor is still starting up: the
warm-up begins once initialize is answered (never before: the answer does not wait for
it), without waiting for ``initialized``; and a completion asked right after
``initialized``, while the warm-up may still run, is answered in full."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from kb.lsp.server import build_server
from kb.notes.editor_answers import EditorAnswers
from tests.integration.test_lsp import Session, make_notes_kb, text_of


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_notes_kb(tmp_path_factory.mktemp("kb"))


class Recorder:
    """The server's output stream, in-process: what it wrote, in order with the warm-up."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def write(self, data: bytes) -> None:
        self.events.append("initialize answered" if b'"capabilities"' in data else "wrote")

    def close(self) -> None:
        pass


async def test_the_names_are_warmed_after_initialize_is_answered_before_initialized(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    warm = EditorAnswers.warm

    def recorded_warm(self: EditorAnswers, *args: Any) -> None:
        events.append("warm-up begins")
        warm(self, *args)
        events.append("warm-up done")

    monkeypatch.setattr(EditorAnswers, "warm", recorded_warm)
    server = build_server(home)
    server.protocol.set_writer(Recorder(events))
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    try:
        server.protocol.handle_message(server.protocol.structure_message(initialize))
        for _ in range(1000):  # `initialized` is never sent
            if "warm-up done" in events:
                break
            await asyncio.sleep(0.01)
        assert "warm-up done" in events, events
        assert events.index("initialize answered") < events.index("warm-up begins")
        assert server.kb is not None
        assert server.kb.editor.complete_notes("xcgs")  # pinyin initials, from the warm index
    finally:
        server.background.shutdown(wait=True)
        if server.kb is not None:
            server.kb.close()


async def test_a_completion_right_after_initialized_is_answered_in_full(home: Path) -> None:
    session = Session()
    await session.start("--kb", str(home))
    try:
        uri = session.open(home / "notes" / "scratch.md", "[[\n")
        answers = {}
        for version, typed in enumerate(["redis studdy", "xcgs", ""], start=2):
            line = f"中文😀 [[{typed}"
            session.change(uri, version, _whole(line))
            answers[typed] = await session.complete(uri, 0, len(line.encode("utf-16-le")) // 2)
    finally:
        stderr = await session.stop()
    assert "Traceback" not in stderr
    assert answers["redis studdy"], "a typo is answered by the fuzzy index"
    assert any("Redis" in item.label for item in answers["redis studdy"])
    assert answers["xcgs"], "pinyin initials are answered"
    notes = len(list((home / "notes").rglob("*.md")))
    assert len(answers[""]) == min(50, notes)  # `[[` alone: the notes by path
    column = len("中文😀 [[".encode("utf-16-le")) // 2  # UTF-16 units: the emoji counts 2
    assert text_of(answers["xcgs"][0])[2] == (0, column, column + 4)  # the typed xcgs replaced


def _whole(text: str) -> Any:
    from lsprotocol import types as t

    return t.TextDocumentContentChangeWholeDocument(text=text + "\n")
