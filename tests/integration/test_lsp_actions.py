"""``kb lsp``'s code actions over stdio (issue 24 item 7): create the missing note and
link it, link one or every unlinked mention, add a link to a related note. Every action
is a workspace edit (never a command), and a file is created only by the client, when
it says it can."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as t
from pygls.uris import from_fs_path, to_fs_path
from test_lsp import Session, make_notes_kb

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_notes_kb(tmp_path_factory.mktemp("kb"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lsp(home: Path) -> AsyncIterator[Session]:
    session = Session()
    await session.start("--kb", str(home))
    yield session
    assert "Traceback" not in await session.stop()


async def actions_at(
    lsp: Session, uri: str, line: int, start: int, end: int | None = None
) -> list[t.CodeAction]:
    where = t.Range(t.Position(line, start), t.Position(line, start if end is None else end))
    found = await lsp.client.text_document_code_action_async(
        t.CodeActionParams(t.TextDocumentIdentifier(uri), where, t.CodeActionContext([]))
    )
    assert all(isinstance(a, t.CodeAction) and a.command is None for a in found or [])
    return [a for a in found or [] if isinstance(a, t.CodeAction)]


def titled(actions: list[t.CodeAction], start: str) -> t.CodeAction:
    found = [a for a in actions if a.title.startswith(start)]
    assert found, [a.title for a in actions]
    return found[0]


def apply(text: str, edits: list[t.TextEdit]) -> str:
    """The edits applied to a one-line-per-edit text, as an editor applies them (UTF-16)."""
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]:
        line = lines[edit.range.start.line].encode("utf-16-le")
        a, b = 2 * edit.range.start.character, 2 * edit.range.end.character
        lines[edit.range.start.line] = (
            line[:a] + edit.new_text.encode("utf-16-le") + line[b:]
        ).decode("utf-16-le")
    return "\n".join(lines)


async def test_a_broken_wikilink_offers_to_create_the_note_by_kb_news_template(
    lsp: Session, home: Path
) -> None:
    uri = lsp.open(home / "notes/posts/act-a.md", "😀 see [[张量并行的通信量]] later\n")
    create = titled(await actions_at(lsp, uri, 0, 10), "Create the note")
    assert create.edit is not None and create.edit.document_changes
    made, filled = create.edit.document_changes
    assert isinstance(made, t.CreateFile) and isinstance(filled, t.TextDocumentEdit)
    assert made.options is not None and made.options.overwrite is False
    path = Path(to_fs_path(made.uri) or "")
    assert path.parent == home / "notes" and path.name == "张量并行的通信量.md"
    assert not path.exists()  # the client creates it; the server writes nothing
    (edit,) = filled.edits
    assert edit.new_text.startswith("---\ntitle: 张量并行的通信量\ndate: ")
    assert "\n# 张量并行的通信量\n" in edit.new_text


async def test_a_broken_markdown_link_creates_the_note_where_it_points(
    lsp: Session, home: Path
) -> None:
    uri = lsp.open(
        home / "notes/posts/act-b.md", "[Ring AllReduce 推导](../engineering/ring-allreduce.md)\n"
    )
    create = titled(
        await actions_at(lsp, uri, 0, 3), "Create the note engineering/ring-allreduce.md"
    )
    assert create.edit and create.edit.document_changes
    made, filled = create.edit.document_changes
    assert isinstance(made, t.CreateFile) and isinstance(filled, t.TextDocumentEdit)
    assert made.uri == from_fs_path(str(home / "notes/engineering/ring-allreduce.md"))
    assert "title: Ring AllReduce 推导" in filled.edits[0].new_text


async def test_a_link_leading_outside_the_root_offers_no_creation(lsp: Session, home: Path) -> None:
    uri = lsp.open(home / "notes/posts/act-c.md", "[x](../../../etc/passwd.md)\n")
    assert not [a for a in await actions_at(lsp, uri, 0, 6) if a.title.startswith("Create")]


async def test_a_selection_naming_no_note_becomes_a_new_note_and_a_link(
    lsp: Session, home: Path
) -> None:
    text = "读 [Redis 学习笔记](../engineering/redis-study.md) 和 梯度累积的坑 之后\n"
    uri = lsp.open(home / "notes/posts/act-d.md", text)
    start = text.index("梯度累积的坑")
    action = titled(await actions_at(lsp, uri, 0, start, start + 6), "Create the note")
    assert action.edit and action.edit.document_changes
    made, _, linked = action.edit.document_changes
    assert isinstance(made, t.CreateFile) and isinstance(linked, t.TextDocumentEdit)
    assert linked.text_document.uri == uri
    assert apply(text, linked.edits) == text.replace(
        "梯度累积的坑", "[梯度累积的坑](../梯度累积的坑.md)"
    )


async def test_link_this_mention_and_every_mention_of_the_note(lsp: Session, home: Path) -> None:
    text = "# 复习\n\n先看 Redis 学习笔记，😀 再看 `Redis 学习笔记`。\n\n又一次：redis 学习笔记\n"
    uri = lsp.open(home / "notes/posts/act-e.md", text)
    line = text.split("\n")[2]
    actions = await actions_at(lsp, uri, 2, line.index("学习"))
    one = titled(actions, "Link this mention to Redis 学习笔记")
    every = titled(actions, "Link every mention of Redis 学习笔记 in this file (2)")
    assert one.edit and one.edit.changes and every.edit and every.edit.changes
    assert apply(text, one.edit.changes[uri]).split("\n")[2] == (
        "先看 [Redis 学习笔记](../engineering/redis-study.md)，😀 再看 `Redis 学习笔记`。"
    )
    after = apply(text, every.edit.changes[uri])
    assert after.split("\n")[4] == "又一次：[redis 学习笔记](../engineering/redis-study.md)"
    assert "`Redis 学习笔记`" in after  # inline code is not prose: never linked


async def test_no_mention_action_where_the_note_is_already_linked(lsp: Session, home: Path) -> None:
    text = "[[redis-study]] 和 Redis 学习笔记\n"
    uri = lsp.open(home / "notes/posts/act-f.md", text)
    actions = await actions_at(lsp, uri, 0, text.index("学习"))
    assert not [a for a in actions if "mention" in a.title]


async def test_add_a_link_to_a_related_note_with_its_reason(lsp: Session, home: Path) -> None:
    file = home / "notes/engineering/softmax-numerics.md"
    text = file.read_text(encoding="utf-8")
    uri = lsp.open(file, text)
    lines = text.split("\n")
    last = len(lines) - 1
    actions = [a for a in await actions_at(lsp, uri, last, 0) if "related note" in a.title]
    assert 1 <= len(actions) <= 5
    first = actions[0]
    assert first.title.startswith("Add a link to a related note: ") and first.title.endswith(")")
    assert first.edit and first.edit.changes
    (edit,) = first.edit.changes[uri]
    assert edit.range.start == edit.range.end == t.Position(last, 0)
    assert edit.new_text.startswith("[") and ".md)" in edit.new_text


async def test_a_created_note_is_ingested_once_the_editor_writes_it(
    lsp: Session, home: Path
) -> None:
    # An editor may apply the creation and tell nothing (Neovim 0.7 neither attaches
    # the new buffer nor watches files): the server looks for the file it proposed.
    uri = lsp.open(home / "notes/posts/act-g.md", "[[流水线并行的气泡]]\n")
    create = titled(await actions_at(lsp, uri, 0, 4), "Create the note")
    assert create.edit and create.edit.document_changes
    made, filled = create.edit.document_changes
    assert isinstance(made, t.CreateFile) and isinstance(filled, t.TextDocumentEdit)
    Path(to_fs_path(made.uri) or "").write_text(filled.edits[0].new_text, encoding="utf-8")
    draft = lsp.open(home / "notes/posts/act-h.md", "[[流水线并行\n")
    for _ in range(100):
        labels = [item.label for item in await lsp.complete(draft, 0, 8)]
        if "流水线并行的气泡" in labels:
            break
        await asyncio.sleep(0.1)
    assert "流水线并行的气泡" in labels
