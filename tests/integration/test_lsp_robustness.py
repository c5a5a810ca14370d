"""``kb lsp`` when the files move under it (issue 24 item 13): a note deleted or renamed
while open, two editors (two servers) on one knowledge base, a client that never sends
``initialized``. Each request gets an answer (empty where there is nothing to say) within
seconds, never a hang, a crash or a traceback."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from lsprotocol import types as t
from pygls.uris import from_fs_path
from test_lsp import REPO, Session, make_notes_kb

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # each test starts its own servers
T = TypeVar("T")


async def soon(request: Awaitable[T]) -> T:
    """The answer, which must come within 20 seconds (a hang fails the test)."""
    return await asyncio.wait_for(request, timeout=20)


def at(uri: str, line: int, character: int) -> dict[str, Any]:
    return {"text_document": t.TextDocumentIdentifier(uri), "position": t.Position(line, character)}


async def labels(session: Session, uri: str, line: int, character: int) -> list[str]:
    return [item.label for item in await soon(session.complete(uri, line, character))]


async def eventually(check: Any, seconds: float = 20) -> None:
    """Ask ``check()`` (a coroutine function) until it holds: background ingests."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, "never came true"
        await asyncio.sleep(0.05)


async def test_a_note_deleted_while_open(tmp_path: Path) -> None:
    home = make_notes_kb(tmp_path)
    session = Session()
    await session.start("--kb", str(home))
    file = home / "notes/engineering/redis-study.md"
    text = file.read_text(encoding="utf-8")
    uri = session.open(file, text)
    file.unlink()  # as `rm` in another terminal: no event from the editor
    client = session.client
    symbols = await soon(
        client.text_document_document_symbol_async(
            t.DocumentSymbolParams(t.TextDocumentIdentifier(uri))
        )
    )
    assert symbols  # the open buffer is the truth for its note
    await soon(client.text_document_hover_async(t.HoverParams(**at(uri, 0, 3))))
    await soon(client.text_document_references_async(
        t.ReferenceParams(**at(uri, 0, 3), context=t.ReferenceContext(True))
    ))  # fmt: skip
    await soon(client.text_document_code_action_async(t.CodeActionParams(
        t.TextDocumentIdentifier(uri), t.Range(t.Position(0, 0), t.Position(0, 0)),
        t.CodeActionContext([]),
    )))  # fmt: skip
    # The editor saves it again where it was (it writes the file, then says so): ingested,
    # found again.
    file.write_text(text, encoding="utf-8")
    client.text_document_did_save(t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(uri)))
    other = session.open(home / "notes/posts/draft-del.md", "[[Redis 学习\n")
    # The save is ingested in the background: completion offers the note once it is done.
    for _ in range(200):  # every 50 ms, up to 10 s
        if "Redis 学习笔记" in (offered := await labels(session, other, 0, 10)):
            break
        await asyncio.sleep(0.05)
    assert "Redis 学习笔记" in offered
    # Gone for good (removed again, and the watcher says so): no longer offered.
    file.unlink()
    session.client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams([t.FileEvent(uri, t.FileChangeType.Deleted)])
    )

    async def gone() -> bool:
        return "Redis 学习笔记" not in await labels(session, other, 0, 10)

    await eventually(gone)
    assert await soon(client.text_document_prepare_rename_async(
        t.PrepareRenameParams(**at(uri, 0, 3))
    )) is None  # fmt: skip
    assert "Traceback" not in await session.stop()


async def test_a_note_renamed_while_open(tmp_path: Path) -> None:
    home = make_notes_kb(tmp_path)
    session = Session()
    await session.start("--kb", str(home))
    old = home / "notes/engineering/softmax-numerics.md"
    new = home / "notes/engineering/softmax-stability.md"
    old_uri = session.open(old, old.read_text(encoding="utf-8"))
    shutil.move(old, new)  # `mv` in a terminal, then the watcher tells
    session.client.workspace_did_change_watched_files(
        t.DidChangeWatchedFilesParams(
            [
                t.FileEvent(old_uri, t.FileChangeType.Deleted),
                t.FileEvent(from_fs_path(str(new)) or "", t.FileChangeType.Created),
            ]
        )
    )
    linking = session.open(home / "notes/posts/draft-mv.md", "[[Softmax 的数值稳定性]]\n")

    async def moved() -> bool:
        found = await soon(
            session.client.text_document_definition_async(t.DefinitionParams(**at(linking, 0, 4)))
        )
        return bool(found) and found[0].uri == from_fs_path(str(new))  # type: ignore[index]

    await eventually(moved)
    # The old buffer still answers from its text, and saving it (`:w` writes the old
    # path again) is ingested as a note of its own, not an error.
    symbols = await soon(session.client.text_document_document_symbol_async(
        t.DocumentSymbolParams(t.TextDocumentIdentifier(old_uri))
    ))  # fmt: skip
    assert symbols
    shutil.copy(new, old)
    session.client.text_document_did_save(
        t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(old_uri))
    )
    session.client.text_document_did_close(
        t.DidCloseTextDocumentParams(t.TextDocumentIdentifier(old_uri))
    )
    assert "Traceback" not in await session.stop()


async def test_two_editors_on_one_knowledge_base(tmp_path: Path) -> None:
    home = make_notes_kb(tmp_path)
    first, second = Session(), Session()
    await asyncio.gather(first.start("--kb", str(home)), second.start("--kb", str(home)))
    a = home / "notes/posts/from-first.md"
    b = home / "notes/posts/from-second.md"
    a.write_text("---\ntitle: 第一个编辑器写的笔记\n---\n\n[[redis-study]]\n", encoding="utf-8")
    b.write_text("---\ntitle: 第二个编辑器写的笔记\n---\n\n[[xcgs]]\n", encoding="utf-8")
    a_uri = first.open(a, a.read_text(encoding="utf-8"))
    b_uri = second.open(b, b.read_text(encoding="utf-8"))
    # Both save at once: two ingests of one store, one waits for the other's lock.
    first.client.text_document_did_save(
        t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(a_uri))
    )
    second.client.text_document_did_save(
        t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(b_uri))
    )
    draft_first = first.open(home / "notes/posts/d1.md", "[[第二个\n")
    draft_second = second.open(home / "notes/posts/d2.md", "[[第一个\n")

    async def each_sees_the_other() -> bool:
        return "第二个编辑器写的笔记" in await labels(
            first, draft_first, 0, 5
        ) and "第一个编辑器写的笔记" in await labels(second, draft_second, 0, 5)

    await eventually(each_sees_the_other, 30)
    for session in (first, second):
        assert "Traceback" not in await session.stop()


async def test_a_client_that_never_sends_initialized_is_served(tmp_path: Path) -> None:
    # No store yet: the server builds it when a note is opened, since `initialized` (the
    # usual moment) never comes.
    shutil.copytree(REPO / "notes", tmp_path / "notes")
    shutil.copy(REPO / "kb.yaml", tmp_path / "kb.yaml")
    session = Session()
    await session.client.start_io(sys.executable, "-m", "kb", "--kb", str(tmp_path), "lsp")
    await soon(
        session.client.initialize_async(t.InitializeParams(capabilities=t.ClientCapabilities()))
    )
    uri = session.open(tmp_path / "notes/posts/draft-init.md", "[[xcgs\n")

    async def completes() -> bool:
        return "显存估算速查" in await labels(session, uri, 0, 6)

    await eventually(completes, 60)
    assert "Traceback" not in await session.stop()
