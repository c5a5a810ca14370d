"""``kb lsp``: rename on a heading (issue 24 item 8): one WorkspaceEdit with the heading
and every anchor that points to it, in this note and in the others, written as each
link wrote it (a wikilink's text anchor gets the new text, a Markdown link's slug the new
slug, a %-encoded one too); nothing else touched, nothing written by the server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import pytest
import pytest_asyncio
from lsprotocol import types as t
from pygls.uris import from_fs_path, to_fs_path
from test_lsp import Session, make_notes_kb

pytestmark = pytest.mark.asyncio(loop_scope="module")
GPUS = "notes/cs336/lecture-03-gpus.md"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_notes_kb(tmp_path_factory.mktemp("kb"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lsp(home: Path) -> AsyncIterator[Session]:
    session = Session()
    await session.start("--kb", str(home))
    yield session
    assert "Traceback" not in await session.stop()


def applied(text: str, edits: list[t.TextEdit]) -> str:
    """The edits applied as an editor applies them (UTF-16 columns)."""
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]:
        units = lines[edit.range.start.line].encode("utf-16-le")
        a, b = 2 * edit.range.start.character, 2 * edit.range.end.character
        new = edit.new_text.encode("utf-16-le")
        lines[edit.range.start.line] = (units[:a] + new + units[b:]).decode("utf-16-le")
    return "\n".join(lines)


class Edit(NamedTuple):
    """A rename's WorkspaceEdit read back: each file's edits and the version they are for."""

    changes: dict[str, list[t.TextEdit]]
    versions: dict[str, int | None]


async def rename_at(lsp: Session, uri: str, line: int, character: int, name: str) -> Edit:
    edit = await lsp.client.text_document_rename_async(
        t.RenameParams(t.TextDocumentIdentifier(uri), t.Position(line, character), name)
    )
    assert edit is not None and edit.document_changes is not None  # versioned edits
    changes: dict[str, list[t.TextEdit]] = {}
    versions: dict[str, int | None] = {}
    for change in edit.document_changes:
        if isinstance(change, t.TextDocumentEdit):
            changes[change.text_document.uri] = [
                e for e in change.edits if isinstance(e, t.TextEdit)
            ]
            versions[change.text_document.uri] = change.text_document.version
    return Edit(changes, versions)


async def test_prepare_rename_on_a_heading_offers_its_text(lsp: Session, home: Path) -> None:
    file = home / GPUS
    text = file.read_text(encoding="utf-8")
    uri = lsp.open(file, text)
    line = text.split("\n").index("## Roofline")
    prepared = await lsp.client.text_document_prepare_rename_async(
        t.PrepareRenameParams(t.TextDocumentIdentifier(uri), t.Position(line, 5))
    )
    assert isinstance(prepared, t.PrepareRenamePlaceholder)
    assert prepared.placeholder == "Roofline"
    assert (prepared.range.start.character, prepared.range.end.character) == (3, 11)


async def test_renaming_a_heading_edits_every_anchor_to_it(lsp: Session, home: Path) -> None:
    file = home / GPUS
    text = file.read_text(encoding="utf-8")
    uri = lsp.open(file, text)
    lines = text.split("\n")
    edit = await rename_at(lsp, uri, lines.index("## Roofline"), 4, "Roofline 模型")
    assert edit.changes is not None
    assert applied(text, edit.changes[uri]).split("\n")[lines.index("## Roofline")] == (
        "## Roofline 模型"
    )
    post = home / "notes/posts/2024-03-10-flops-vs-latency.md"
    post_uri = from_fs_path(str(post))
    assert set(edit.changes) == {uri, post_uri}
    assert edit.versions == {uri: 1, post_uri: None}  # the open note's version; the file as saved
    before = post.read_text(encoding="utf-8")
    after = applied(before, edit.changes[post_uri])
    assert "[[lecture-03-gpus#Roofline 模型]]" in after  # a wikilink names it by its text
    changed = [(a, b) for a, b in zip(before.split("\n"), after.split("\n"), strict=True) if a != b]
    assert len(changed) == 1  # the other links of that file point elsewhere
    assert post.read_text(encoding="utf-8") == before  # the editor applies it, not kb


async def test_a_slug_anchor_gets_the_new_slug_even_percent_encoded(
    lsp: Session, home: Path
) -> None:
    file = home / GPUS
    text = file.read_text(encoding="utf-8")
    uri = lsp.open(file, text)
    line = text.split("\n").index("## 显存带宽")
    edit = await rename_at(lsp, uri, line, 4, "显存 带宽")
    assert edit.changes is not None
    post = home / "notes/posts/2024-03-10-flops-vs-latency.md"
    after = applied(post.read_text(encoding="utf-8"), edit.changes[from_fs_path(str(post))])
    assert "(../cs336/lecture-03-gpus.md#%E6%98%BE%E5%AD%98-%E5%B8%A6%E5%AE%BD)" in after


async def test_the_notes_own_anchors_follow(lsp: Session, home: Path) -> None:
    file = home / "notes/posts/rename-own.md"
    text = "# 草稿\n\n## 旧 标题\n\n见 [上面](#旧-标题) 与 [[#旧 标题]]。\n"
    uri = lsp.open(file, text)
    edit = await rename_at(lsp, uri, 2, 4, "新标题")
    assert edit.changes is not None and list(edit.changes) == [uri]
    assert applied(text, edit.changes[uri]) == (
        "# 草稿\n\n## 新标题\n\n见 [上面](#新标题) 与 [[#新标题]]。\n"
    )


async def test_a_heading_rename_edits_a_linking_file_as_the_editor_holds_it(
    lsp: Session, home: Path
) -> None:
    # Issue 38 item 4: an unsaved buffer was refused ("has unsaved changes; save it and
    # rename again"); its edit is now computed on the text the editor holds, versioned.
    file = home / GPUS
    uri = lsp.open(file, file.read_text(encoding="utf-8"))
    post = home / "notes/posts/2024-03-10-flops-vs-latency.md"
    saved = post.read_text(encoding="utf-8")
    unsaved = "# changed, not saved 😀\n" + saved + "\n又见 [[lecture-03-gpus#Roofline]]\n"
    post_uri = lsp.open(post, saved)
    lsp.change(post_uri, 7, t.TextDocumentContentChangeWholeDocument(text=unsaved))
    line = file.read_text(encoding="utf-8").split("\n").index("## Roofline")
    edit = await rename_at(lsp, uri, line, 4, "Roofline 模型")
    assert edit.versions[post_uri] == 7
    after = applied(unsaved, edit.changes[post_uri])
    assert after.count("[[lecture-03-gpus#Roofline 模型]]") == 2  # the saved link and the new one
    assert "[[lecture-03-gpus#Roofline]]" not in after
    assert post.read_text(encoding="utf-8") == saved
    assert to_fs_path(uri) == str(file)
