"""``kb lsp`` renames as editors do (issue 38 item 4, issue 37 item 9): from a buffer with
unsaved changes (the edit computed on that text, for the version the client sent), into a
folder (``sub/``), refused with a reason, and from the editor's file tree
(``workspace/willRenameFiles`` rewrites the links, ``didRenameFiles`` brings the store
along). Also: one ``initialize`` only, and no offer to create a note where kb never reads.
Driven over stdio by pygls's LanguageClient, as an editor drives it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as t
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path
from test_lsp import Session, full_capabilities
from test_lsp_rename import applied

from kb.errors import KbError
from kb.knowledge_base import KnowledgeBase

pytestmark = pytest.mark.asyncio(loop_scope="module")

NOTES = {
    "redis-study.md": "# Redis 学习\n\n## Intro\n\ntext\n",
    "posts/a.md": "# A\n\n纯文本 redis-study 在前 [[redis-study]] 😀 [笔记](../redis-study.md)\n",
    "posts/b.md": "# B\n\n见 [Redis 😀](../redis-study.md#intro)\n",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("kb")
    (home / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    for rel, text in NOTES.items():
        file = home / "notes" / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8")
    with KnowledgeBase.open(home) as kb:
        kb.ingest()
    return home


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lsp(home: Path) -> AsyncIterator[Session]:
    capabilities = full_capabilities()
    assert capabilities.workspace is not None
    capabilities.workspace.file_operations = t.FileOperationClientCapabilities(
        will_rename=True, did_rename=True
    )
    session = Session()
    await session.start("--kb", str(home), capabilities=capabilities)
    yield session
    assert "Traceback" not in await session.stop()


def uri(home: Path, rel: str) -> str:
    found = from_fs_path(str(home / "notes" / rel))
    assert found is not None
    return found


async def rename(lsp: Session, at: str, line: int, character: int, name: str) -> t.WorkspaceEdit:
    edit = await lsp.client.text_document_rename_async(
        t.RenameParams(t.TextDocumentIdentifier(at), t.Position(line, character), name)
    )
    assert edit is not None and edit.document_changes is not None
    return edit


def text_edits(edit: t.WorkspaceEdit) -> dict[str, t.TextDocumentEdit]:
    return {
        change.text_document.uri: change
        for change in edit.document_changes or []
        if isinstance(change, t.TextDocumentEdit)
    }


async def test_renaming_from_an_unsaved_buffer_edits_that_buffer_versioned(
    lsp: Session, home: Path
) -> None:
    # Was refused: "has unsaved changes; save it and rename again".
    a = uri(home, "posts/a.md")
    lsp.open(home / "notes/posts/a.md", NOTES["posts/a.md"])
    unsaved = "# A 😀\n\n\n纯文本 redis-study 在前 [[redis-study]] 😀\n再链 [[redis-study#Intro]]\n"
    lsp.change(a, 3, t.TextDocumentContentChangeWholeDocument(text=unsaved))
    edit = await rename(lsp, a, 3, 22, "redis-notes.md")
    documents = text_edits(edit)
    assert documents[a].text_document.version == 3
    edits = [e for e in documents[a].edits if isinstance(e, t.TextEdit)]
    assert applied(unsaved, edits) == (
        "# A 😀\n\n\n纯文本 redis-study 在前 [[redis-notes]] 😀\n再链 [[redis-notes#Intro]]\n"
    )
    b = documents[uri(home, "posts/b.md")]  # not open: the file as saved
    assert b.text_document.version is None
    after = applied(NOTES["posts/b.md"], [e for e in b.edits if isinstance(e, t.TextEdit)])
    assert after == "# B\n\n见 [Redis 😀](../redis-notes.md#intro)\n"
    last = (edit.document_changes or [])[-1]
    assert isinstance(last, t.RenameFile)
    assert last.new_uri == uri(home, "redis-notes.md")
    assert (home / "notes/redis-study.md").exists()  # the editor applies it, not kb


async def test_a_new_name_ending_in_a_slash_moves_the_note_into_that_folder(
    lsp: Session, home: Path
) -> None:
    b = uri(home, "posts/b.md")
    lsp.open(home / "notes/posts/b.md", NOTES["posts/b.md"])
    edit = await rename(lsp, b, 2, 14, "archive/")
    last = (edit.document_changes or [])[-1]
    assert isinstance(last, t.RenameFile)
    assert last.new_uri == uri(home, "archive/redis-study.md")  # was archive.md


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("posts/a.md", "already exists"),
        (".hidden/redis.md", "kb does not read"),
        ("../../outside.md", "outside every notes root"),
    ],
)
async def test_a_refused_rename_says_why(lsp: Session, home: Path, name: str, reason: str) -> None:
    # Was answered null, which an editor shows as nothing at all.
    b = uri(home, "posts/b.md")
    lsp.open(home / "notes/posts/b.md", NOTES["posts/b.md"])
    with pytest.raises(JsonRpcException, match=reason) as refused:
        await lsp.client.text_document_rename_async(
            t.RenameParams(t.TextDocumentIdentifier(b), t.Position(2, 14), name)
        )
    assert refused.value.code == -32803  # RequestFailed: the editor shows the message


async def test_a_second_initialize_is_an_invalid_request(lsp: Session, home: Path) -> None:
    with pytest.raises(JsonRpcException) as refused:
        await lsp.client.initialize_async(t.InitializeParams(capabilities=full_capabilities()))
    assert refused.value.code == -32600  # InvalidRequest
    # and the first session goes on, its open documents kept
    symbols = await lsp.client.text_document_document_symbol_async(
        t.DocumentSymbolParams(t.TextDocumentIdentifier(uri(home, "posts/b.md")))
    )
    assert symbols


@pytest.mark.parametrize(
    ("target", "offered"),
    [
        (".hidden/new-note.md", False),
        ("node_modules/new-note.md", False),
        (".git/new-note.md", False),
        ("drafts/new-note.md", True),
    ],
)
async def test_a_new_note_is_offered_only_where_kb_reads(
    lsp: Session, home: Path, target: str, offered: bool
) -> None:
    file = home / "notes/c.md"
    at = lsp.open(file, f"# C\n\n[新笔记]({target})\n")
    actions = await lsp.client.text_document_code_action_async(
        t.CodeActionParams(
            t.TextDocumentIdentifier(at),
            t.Range(t.Position(2, 10), t.Position(2, 10)),
            t.CodeActionContext([]),
        )
    )
    titles = [a.title for a in actions or [] if isinstance(a, t.CodeAction)]
    assert any("Create the note" in title for title in titles) == offered


async def test_renaming_in_the_file_tree_rewrites_the_links(lsp: Session, home: Path) -> None:
    # Last: it moves a note on disk, as the editor would.
    assert lsp.result is not None
    operations = lsp.result.capabilities.workspace
    assert operations is not None and operations.file_operations is not None
    assert operations.file_operations.will_rename and operations.file_operations.did_rename
    old, new = home / "notes/redis-study.md", home / "notes/posts/redis.md"
    unsaved = "# A 😀\n\n\n纯文本 redis-study 在前 [[redis-study]] 😀\n再链 [[redis-study#Intro]]\n"
    lsp.open(home / "notes/posts/a.md", NOTES["posts/a.md"])
    lsp.change(uri(home, "posts/a.md"), 9, t.TextDocumentContentChangeWholeDocument(text=unsaved))
    renamed = t.FileRename(old_uri=uri(home, "redis-study.md"), new_uri=uri(home, "posts/redis.md"))
    edit = await lsp.client.workspace_will_rename_files_async(t.RenameFilesParams([renamed]))
    assert edit is not None
    documents = text_edits(edit)
    assert set(documents) == {uri(home, "posts/a.md"), uri(home, "posts/b.md")}
    assert documents[uri(home, "posts/a.md")].text_document.version == 9  # the open buffer
    # The editor applies the edit (to the unsaved buffer of a.md, which it then saves;
    # to b.md on disk), renames the file, and says so.
    a, b = home / "notes/posts/a.md", home / "notes/posts/b.md"
    a_edits = documents[uri(home, "posts/a.md")].edits
    a_after = applied(unsaved, [e for e in a_edits if isinstance(e, t.TextEdit)])
    assert a_after == ("# A 😀\n\n\n纯文本 redis-study 在前 [[redis]] 😀\n再链 [[redis#Intro]]\n")
    lsp.change(uri(home, "posts/a.md"), 10, t.TextDocumentContentChangeWholeDocument(text=a_after))
    a.write_text(a_after, encoding="utf-8")
    b_edits = documents[uri(home, "posts/b.md")].edits
    b.write_text(
        applied(NOTES["posts/b.md"], [e for e in b_edits if isinstance(e, t.TextEdit)]),
        encoding="utf-8",
    )
    assert b.read_text(encoding="utf-8") == "# B\n\n见 [Redis 😀](redis.md#intro)\n"
    old.rename(new)
    lsp.client.workspace_did_rename_files(t.RenameFilesParams([renamed]))
    lsp.client.text_document_did_save(
        t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(uri(home, "posts/a.md")))
    )
    backlinks: set[str] = set()
    for _ in range(400):  # the server ingests the renamed note and the edited ones
        with KnowledgeBase.open(home) as kb:
            try:
                note = kb.find_note("posts/redis.md")
            except KbError:
                note = None
            backlinks = {b.path for b in kb.links.connections(note).backlinks} if note else set()
            broken = [p for p in kb.links.check() if p.kind == "broken-link"] if note else []
        if backlinks == {"posts/a.md", "posts/b.md"} and not broken:
            break
        await asyncio.sleep(0.05)  # up to 20 s in all
    assert backlinks == {"posts/a.md", "posts/b.md"}
    assert not broken
