"""``kb lsp`` driven over stdio by pygls's LanguageClient, as an editor drives it: the real
protocol and framing, on a copy of the bundled notes, with Chinese, emoji and CRLF lines.

One server serves the module's tests (starting one costs about a second); each test opens
its own documents.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types as t
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from kb.knowledge_base import KnowledgeBase
from tests.conftest import REPO

pytestmark = pytest.mark.asyncio(loop_scope="module")


class Session:
    """A client talking to ``kb lsp`` in a subprocess, keeping what the server published."""

    def __init__(self) -> None:
        self.client = LanguageClient("kb-tests", "1")
        self.diagnostics: dict[str, list[t.Diagnostic]] = {}
        self.messages: list[str] = []
        self.changed = asyncio.Event()
        self.result: t.InitializeResult | None = None

        @self.client.feature(t.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: t.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = list(params.diagnostics)
            self.changed.set()

        @self.client.feature(t.WINDOW_SHOW_MESSAGE)
        def shown(params: t.ShowMessageParams) -> None:
            self.messages.append(params.message)
            self.changed.set()

    async def start(
        self,
        *args: str,
        capabilities: t.ClientCapabilities | None = None,
        folder: Path | None = None,
        cwd: Path | None = None,
    ) -> t.InitializeResult:
        await self.client.start_io(sys.executable, "-m", "kb", *args, "lsp", cwd=cwd)
        folders = [t.WorkspaceFolder(from_fs_path(str(folder)), "kb")] if folder else None
        self.result = await self.client.initialize_async(
            t.InitializeParams(
                capabilities=capabilities or full_capabilities(), workspace_folders=folders
            )
        )
        self.client.initialized(t.InitializedParams())
        return self.result

    def open(self, file: Path, text: str) -> str:
        uri = from_fs_path(str(file))
        assert uri is not None
        self.client.text_document_did_open(
            t.DidOpenTextDocumentParams(t.TextDocumentItem(uri, "markdown", 1, text))
        )
        return uri

    def change(self, uri: str, version: int, *changes: Any) -> None:
        self.client.text_document_did_change(
            t.DidChangeTextDocumentParams(
                t.VersionedTextDocumentIdentifier(version=version, uri=uri), list(changes)
            )
        )

    async def until(self, check: Callable[[], bool], seconds: float = 10.0) -> None:
        """Wait for what the server publishes until ``check`` holds."""
        deadline = asyncio.get_running_loop().time() + seconds
        while not check():
            self.changed.clear()
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise AssertionError("the server never published what was expected")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), timeout=min(left, 0.2))

    async def complete(self, uri: str, line: int, character: int) -> list[t.CompletionItem]:
        found = await self.client.text_document_completion_async(
            t.CompletionParams(t.TextDocumentIdentifier(uri), t.Position(line, character))
        )
        if found is None:
            return []
        return list(found.items if isinstance(found, t.CompletionList) else found)

    async def stop(self) -> str:
        """Shut down and exit as an editor does; the server's stderr."""
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()
        process = self.client._server
        assert process is not None and process.stderr is not None
        assert process.returncode == 0
        return (await process.stderr.read()).decode()


def full_capabilities(encodings: list[str] | None = None) -> t.ClientCapabilities:
    """What a full client (Neovim, VS Code) says it can do."""
    return t.ClientCapabilities(
        general=t.GeneralClientCapabilities(position_encodings=encodings) if encodings else None,
        workspace=t.WorkspaceClientCapabilities(
            workspace_edit=t.WorkspaceEditClientCapabilities(
                document_changes=True,
                resource_operations=[
                    t.ResourceOperationKind.Create,
                    t.ResourceOperationKind.Rename,
                ],
            )
        ),
        window=t.WindowClientCapabilities(work_done_progress=True),
    )


def make_notes_kb(home: Path) -> Path:
    """A knowledge base holding a copy of the bundled notes, ingested."""
    shutil.copytree(REPO / "notes", home / "notes")
    shutil.copy(REPO / "kb.yaml", home / "kb.yaml")
    with KnowledgeBase.open(home) as kb:
        kb.ingest()
    return home


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_notes_kb(tmp_path_factory.mktemp("kb"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lsp(home: Path) -> AsyncIterator[Session]:
    session = Session()
    await session.start("--kb", str(home))
    yield session
    stderr = await session.stop()
    assert "Traceback" not in stderr


def text_of(item: t.CompletionItem) -> tuple[str, str, tuple[int, int, int]]:
    edit = item.text_edit
    assert isinstance(edit, t.TextEdit)
    r = edit.range
    return item.label, edit.new_text, (r.start.line, r.start.character, r.end.character)


# -- initialize ---------------------------------------------------------------------------


async def test_initialize_offers_kb_features_in_utf16(lsp: Session) -> None:
    assert lsp.result is not None
    capabilities = lsp.result.capabilities
    assert capabilities.position_encoding == t.PositionEncodingKind.Utf16
    assert capabilities.completion_provider is not None
    assert "[" in (capabilities.completion_provider.trigger_characters or [])
    assert capabilities.definition_provider and capabilities.hover_provider
    assert capabilities.references_provider and capabilities.document_symbol_provider


# -- completion ---------------------------------------------------------------------------


async def test_wikilink_completion_by_pinyin_initials_replaces_the_typed_prefix(
    lsp: Session, home: Path
) -> None:
    # Chinese and an emoji before the link: the range is in UTF-16 units (😀 counts 2).
    uri = lsp.open(home / "notes/posts/draft-a.md", "# 草稿\n\n显存😀 [[xcgs\n")
    items = await lsp.complete(uri, 2, 11)
    assert text_of(items[0]) == ("显存估算速查", "显存 估算", (2, 7, 11))
    assert items[0].detail == "engineering/显存 估算.md"


async def test_markdown_link_completion_inserts_a_relative_encoded_path(
    lsp: Session, home: Path
) -> None:
    uri = lsp.open(home / "notes/posts/draft-b.md", "see [显存](显存\n")
    items = await lsp.complete(uri, 0, 11)
    assert text_of(items[0]) == ("显存估算速查", "../engineering/显存%20估算.md", (0, 9, 11))


async def test_hugo_ref_completion_inserts_the_path_in_the_root(lsp: Session, home: Path) -> None:
    uri = lsp.open(home / "notes/posts/draft-c.md", '{{< ref "redis\n')
    items = await lsp.complete(uri, 0, 14)
    assert text_of(items[0])[1:] == ("engineering/redis-study.md", (0, 9, 14))


async def test_heading_completion_after_hash(lsp: Session, home: Path) -> None:
    uri = lsp.open(home / "notes/posts/draft-d.md", "[[lecture-03-gpus#Roof\n")
    items = await lsp.complete(uri, 0, 22)
    labels = [item.label for item in items]
    assert any("Roofline" in label for label in labels)
    assert text_of(items[0])[2] == (0, 18, 22)


async def test_tag_completion_in_body_and_front_matter(lsp: Session, home: Path) -> None:
    uri = lsp.open(home / "notes/posts/draft-e.md", "---\ntags: [chea\n---\n\n正文 #gpu/\n")
    front = await lsp.complete(uri, 1, 11)
    assert text_of(front[0]) == ("cheatsheet", "cheatsheet", (1, 7, 11))
    body = await lsp.complete(uri, 4, 8)
    assert {item.label for item in body} >= {"gpu/memory", "gpu/perf"}
    assert text_of(body[0])[2] == (4, 4, 8)


async def test_completion_follows_incremental_and_full_changes(lsp: Session, home: Path) -> None:
    uri = lsp.open(home / "notes/posts/draft-f.md", "第一行\r\n")
    # Incremental: type "😀 [[redis" at the end of line 0 (CRLF line ends kept).
    lsp.change(
        uri,
        2,
        t.TextDocumentContentChangePartial(
            range=t.Range(t.Position(0, 3), t.Position(0, 3)), text="😀 [[redis"
        ),
    )
    items = await lsp.complete(uri, 0, 13)
    assert text_of(items[0])[:2] == ("Redis 学习笔记", "redis-study")
    assert text_of(items[0])[2] == (0, 8, 13)
    # Full: the whole text replaced.
    lsp.change(uri, 3, t.TextDocumentContentChangeWholeDocument(text="x [[xiancun\n"))
    items = await lsp.complete(uri, 0, 11)
    assert items[0].label == "显存估算速查"


# -- definition, hover, references -------------------------------------------------------


async def test_definition_of_a_wikilink_with_anchor_lands_on_the_heading(
    lsp: Session, home: Path
) -> None:
    uri = lsp.open(home / "notes/posts/draft-g.md", "😀 见 [[lecture-03-gpus#Roofline]]\n")
    found = await lsp.client.text_document_definition_async(
        t.DefinitionParams(t.TextDocumentIdentifier(uri), t.Position(0, 10))
    )
    assert isinstance(found, list) and len(found) == 1
    target = home / "notes/cs336/lecture-03-gpus.md"
    assert found[0].uri == from_fs_path(str(target))
    line = target.read_text(encoding="utf-8").split("\n")[found[0].range.start.line]
    assert line.startswith("#") and "Roofline" in line


async def test_hover_shows_the_target_and_its_backlinks(lsp: Session, home: Path) -> None:
    uri = lsp.open(home / "notes/posts/draft-h.md", "[笔记](../engineering/redis-study.md)\n")
    hover = await lsp.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(0, 2))
    )
    assert hover is not None and isinstance(hover.contents, t.MarkupContent)
    assert "Redis 学习笔记" in hover.contents.value
    assert "engineering/redis-study.md" in hover.contents.value
    assert "backlink" in hover.contents.value


async def test_hover_on_a_broken_link_says_why(lsp: Session, home: Path) -> None:
    uri = lsp.open(home / "notes/posts/draft-i.md", "[x](../engineering/redis-studdy.md)\n")
    hover = await lsp.client.text_document_hover_async(
        t.HoverParams(t.TextDocumentIdentifier(uri), t.Position(0, 8))
    )
    assert hover is not None and isinstance(hover.contents, t.MarkupContent)
    assert "points to no note" in hover.contents.value
    assert "engineering/redis-study.md" in hover.contents.value  # what it may have meant


async def test_references_of_a_note_are_its_backlinks(lsp: Session, home: Path) -> None:
    target = home / "notes/engineering/redis-study.md"
    uri = lsp.open(target, target.read_text(encoding="utf-8"))
    lsp.open(home / "notes/posts/draft-refs.md", "unsaved 😀 [[redis-study]]\n")
    found = await lsp.client.text_document_references_async(
        t.ReferenceParams(
            context=t.ReferenceContext(include_declaration=False),
            text_document=t.TextDocumentIdentifier(uri),
            position=t.Position(0, 0),
        )
    )
    assert found
    with KnowledgeBase.open(home) as kb:
        expected = {
            b.path
            for b in kb.links.connections(kb.find_note("engineering/redis-study.md")).backlinks
        }
    files = {Path(str(loc.uri).removeprefix("file://")) for loc in found}
    got = {f.relative_to(home / "notes").as_posix() for f in files}
    # and the open, unsaved drafts that link to it (this one, and any an earlier test
    # left open): what the editor shows
    assert "posts/draft-refs.md" in got
    assert all(p.startswith("posts/draft-") for p in got - expected)
    assert expected <= got


# -- symbols and links ---------------------------------------------------------------------


async def test_document_symbols_are_the_heading_outline(lsp: Session, home: Path) -> None:
    uri = lsp.open(home / "notes/posts/draft-j.md", "# 总 😀\n\n## 一\n\ntext\n\n## 二\n")
    symbols = await lsp.client.text_document_document_symbol_async(
        t.DocumentSymbolParams(t.TextDocumentIdentifier(uri))
    )
    assert symbols is not None
    top = symbols[0]
    assert isinstance(top, t.DocumentSymbol)
    assert (top.name, [c.name for c in top.children or []]) == ("总 😀", ["一", "二"])
    assert top.selection_range.end.character == 6  # "# 总 😀" is 6 UTF-16 units


async def test_document_links_for_resolved_links_only(lsp: Session, home: Path) -> None:
    uri = lsp.open(
        home / "notes/posts/draft-k.md", "中文 [[softmax-numerics]] and [[no-such-note]]\n"
    )
    links = await lsp.client.text_document_document_link_async(
        t.DocumentLinkParams(t.TextDocumentIdentifier(uri))
    )
    assert links is not None and len(links) == 1
    assert links[0].target == from_fs_path(str(home / "notes/engineering/softmax-numerics.md"))
    assert (links[0].range.start.character, links[0].range.end.character) == (5, 21)


async def test_workspace_symbols_search_notes_in_chinese_and_english(lsp: Session) -> None:
    for query, expected in (("显存", "显存估算速查"), ("roofline", "Roofline")):
        found = await lsp.client.workspace_symbol_async(t.WorkspaceSymbolParams(query))
        assert found and any(expected in symbol.name for symbol in found)


# -- diagnostics ----------------------------------------------------------------------------


async def test_diagnostics_of_the_unsaved_buffer_come_and_go(lsp: Session, home: Path) -> None:
    uri = lsp.open(
        home / "notes/posts/draft-l.md", "# 草稿\n\n😀 [x](../engineering/redis-studdy.md)\n"
    )
    await lsp.until(lambda: bool(lsp.diagnostics.get(uri)))
    (problem,) = lsp.diagnostics[uri]
    assert problem.code == "broken-link"
    assert "did you mean engineering/redis-study.md" in problem.message
    assert (problem.range.start.line, problem.range.start.character) == (2, 7)  # 😀 is 2
    # Fixed in the buffer (not saved): the diagnostic goes.
    lsp.change(
        uri,
        2,
        t.TextDocumentContentChangePartial(
            range=t.Range(t.Position(2, 32), t.Position(2, 33)),
            text="",  # a "d" of studdy
        ),
    )
    await lsp.until(lambda: lsp.diagnostics.get(uri) == [])


async def test_save_ingests_the_saved_note_in_the_background(lsp: Session, home: Path) -> None:
    new = home / "notes/posts/brand-new-note.md"
    text = "---\ntitle: 全新的笔记 Zebra\n---\n\n正文\n"
    new.write_text(text, encoding="utf-8")
    uri = lsp.open(new, text)
    lsp.client.text_document_did_save(t.DidSaveTextDocumentParams(t.TextDocumentIdentifier(uri)))
    other = lsp.open(home / "notes/posts/draft-m.md", "[[zebra\n")

    async def offered() -> bool:
        return any(i.label == "全新的笔记 Zebra" for i in await lsp.complete(other, 0, 7))

    for _ in range(200):  # ask every 50 ms, up to 10 s
        if await offered():
            break
        await asyncio.sleep(0.05)
    assert await offered()


# -- code actions and rename ----------------------------------------------------------------


async def test_code_action_replaces_a_broken_link_with_the_suggested_note(
    lsp: Session, home: Path
) -> None:
    uri = lsp.open(home / "notes/posts/draft-n.md", "😀 [x](../engineering/redis-studdy.md)\n")
    where = t.Range(t.Position(0, 8), t.Position(0, 8))
    actions = await lsp.client.text_document_code_action_async(
        t.CodeActionParams(t.TextDocumentIdentifier(uri), where, t.CodeActionContext([]))
    )
    assert actions
    fix = actions[0]
    assert isinstance(fix, t.CodeAction) and fix.edit and fix.edit.changes
    (edit,) = fix.edit.changes[uri]
    assert edit.new_text == "../engineering/redis-study.md"
    assert (edit.range.start.character, edit.range.end.character) == (7, 37)


async def test_code_action_links_a_selected_mention(lsp: Session, home: Path) -> None:
    uri = lsp.open(home / "notes/posts/draft-o.md", "读过 Redis 学习笔记 之后\n")
    where = t.Range(t.Position(0, 3), t.Position(0, 13))
    actions = await lsp.client.text_document_code_action_async(
        t.CodeActionParams(t.TextDocumentIdentifier(uri), where, t.CodeActionContext([]))
    )
    assert actions
    link = actions[0]
    assert isinstance(link, t.CodeAction) and link.edit and link.edit.changes
    assert link.edit.changes[uri][0].new_text == "[Redis 学习笔记](../engineering/redis-study.md)"


async def test_rename_is_one_workspace_edit_with_the_file_rename(lsp: Session, home: Path) -> None:
    target = home / "notes/engineering/softmax-numerics.md"
    uri = lsp.open(home / "notes/posts/draft-p.md", "[[softmax-numerics]]\n")
    prepared = await lsp.client.text_document_prepare_rename_async(
        t.PrepareRenameParams(t.TextDocumentIdentifier(uri), t.Position(0, 4))
    )
    assert isinstance(prepared, t.PrepareRenamePlaceholder)
    assert prepared.placeholder == "engineering/softmax-numerics.md"
    edit = await lsp.client.text_document_rename_async(
        t.RenameParams(t.TextDocumentIdentifier(uri), t.Position(0, 4), "softmax-stability.md")
    )
    assert edit is not None and edit.document_changes
    *texts, last = edit.document_changes
    assert isinstance(last, t.RenameFile)
    assert (last.old_uri, last.new_uri) == (
        from_fs_path(str(target)),
        from_fs_path(str(target.with_name("softmax-stability.md"))),
    )
    with KnowledgeBase.open(home) as kb:
        plan = kb.moves.plan(
            kb.find_note("engineering/softmax-numerics.md"),
            str(target.with_name("softmax-stability.md")),
        )
    # every link of the files as saved, as kb mv plans it, and those of the open, unsaved
    # drafts (this one and any an earlier test left open), versioned
    edits = {e.text_document.uri: e for e in texts if isinstance(e, t.TextDocumentEdit)}
    for file in plan.files:
        assert len(edits.pop(from_fs_path(str(file.path)) or "").edits) == len(file.links)
    assert (edits[uri].text_document.version, len(edits[uri].edits)) == (1, 1)
    assert all(e.text_document.version is not None for e in edits.values())
    assert all(
        edit.new_text.startswith(("softmax-stability", "../", "/"))
        or "softmax-stability" in edit.new_text
        for e in texts
        if isinstance(e, t.TextDocumentEdit)
        for edit in e.edits
    )
    assert target.exists()  # the server only proposes: the editor applies it
