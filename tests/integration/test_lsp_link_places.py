"""``kb lsp`` places every link where the parser read it (issue 38 item 3): references,
definition and document links land on the link itself, never on the first place the
target's text appears on the line. One note per line of the table links to
``redis-study``; columns are UTF-16 code units, as an editor counts them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types as t
from pygls.uris import from_fs_path, to_fs_path
from test_lsp import Session

from kb.knowledge_base import KnowledgeBase

pytestmark = pytest.mark.asyncio(loop_scope="module")

TARGET = "# Redis 学习\n\n## Intro\n\ntext\n"

# (a line of a note, the UTF-16 columns of each link target to redis-study on it)
LINES = [
    # the line: the target's text in prose before the link
    ("纯文本 redis-study 在前，链接在后 [[redis-study]] 😀", [(26, 37)]),
    # a Markdown link, then a wikilink: each on its own target
    ("[redis-study](redis-study.md) 和 [[redis-study]]", [(14, 28), (34, 45)]),
    # two links to one note on one line, after an emoji (two UTF-16 units)
    ("😀 [[redis-study]] 和 [[redis-study|再看]]", [(5, 16), (23, 34)]),
    # the target in code and in a link's text, before the link
    ("`redis-study.md` 见 [redis-study.md 笔记](redis-study.md#intro)", [(39, 53)]),
    # Chinese glued to the link, with an anchor
    ("中文redis-study[[redis-study#Intro]]😀", [(15, 26)]),
    # a wikilink whose name is the tail of an earlier word
    ("my-redis-study 😀😀 [[redis-study ]]", [(22, 33)]),  # `[[` and a space: bash, no link
]


def _note(index: int) -> str:
    return f"case-{index}.md"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("kb")
    (home / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    notes = home / "notes"
    notes.mkdir()
    (notes / "redis-study.md").write_text(TARGET, encoding="utf-8")
    for index, (line, _) in enumerate(LINES):
        (notes / _note(index)).write_text(f"# 例 {index}\n\n{line}\n", encoding="utf-8")
    with KnowledgeBase.open(home) as kb:
        kb.ingest()
    return home


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lsp(home: Path) -> AsyncIterator[Session]:
    session = Session()
    await session.start("--kb", str(home))
    yield session
    assert "Traceback" not in await session.stop()


async def references(
    lsp: Session, home: Path, line: int = 4
) -> dict[str, list[tuple[int, int, int]]]:
    """Every reference to redis-study asked on ``line`` of it (by default its body's
    text): (line, start, end) by file name."""
    target = home / "notes/redis-study.md"
    uri = lsp.open(target, TARGET)
    found = await lsp.client.text_document_references_async(
        t.ReferenceParams(
            context=t.ReferenceContext(include_declaration=False),
            text_document=t.TextDocumentIdentifier(uri),
            position=t.Position(line, 0),
        )
    )
    assert found is not None
    by_file: dict[str, list[tuple[int, int, int]]] = {}
    for where in found:
        name = Path(str(to_fs_path(where.uri))).name
        place = (where.range.start.line, where.range.start.character, where.range.end.character)
        by_file.setdefault(name, []).append(place)
    return by_file


@pytest.mark.parametrize(("index", "line", "columns"), [(i, *row) for i, row in enumerate(LINES)])
async def test_references_land_on_the_link(
    lsp: Session, home: Path, index: int, line: str, columns: list[tuple[int, int]]
) -> None:
    found = await references(lsp, home)
    assert sorted(found[_note(index)]) == [(2, start, end) for start, end in columns]
    units = line.encode("utf-16-le")
    for start, end in columns:  # each range holds the target as written
        assert units[2 * start : 2 * end].decode("utf-16-le") in ("redis-study", "redis-study.md")


@pytest.mark.parametrize(("index", "line", "columns"), [(i, *row) for i, row in enumerate(LINES)])
async def test_document_links_and_definition_agree_with_references(
    lsp: Session, home: Path, index: int, line: str, columns: list[tuple[int, int]]
) -> None:
    file = home / "notes" / _note(index)
    uri = lsp.open(file, file.read_text(encoding="utf-8"))
    links = await lsp.client.text_document_document_link_async(
        t.DocumentLinkParams(t.TextDocumentIdentifier(uri))
    )
    assert links is not None
    assert [(lk.range.start.character, lk.range.end.character) for lk in links] == columns
    target = from_fs_path(str(home / "notes/redis-study.md"))
    for start, _ in columns:  # on each link: its note
        found = await lsp.client.text_document_definition_async(
            t.DefinitionParams(t.TextDocumentIdentifier(uri), t.Position(2, start + 1))
        )
        assert isinstance(found, list) and [loc.uri for loc in found] == [target]
    if "纯文本" in line:  # on the prose that only looks like the target: nothing
        found = await lsp.client.text_document_definition_async(
            t.DefinitionParams(t.TextDocumentIdentifier(uri), t.Position(2, 6))
        )
        assert not found


async def test_references_read_an_open_buffer_as_the_editor_shows_it(
    lsp: Session, home: Path
) -> None:
    # Unsaved: the link moved down two lines and a second one was added; the store
    # still has the saved text.
    file = home / "notes" / _note(0)
    lsp.open(file, "# 例 0\n\n\n\n纯 redis-study 😀 [[redis-study]] [笔记](redis-study.md)\n")
    found = await references(lsp, home)
    assert sorted(found[_note(0)]) == [(4, 19, 30), (4, 38, 52)]


async def test_references_on_the_title_are_the_notes_backlinks(lsp: Session, home: Path) -> None:
    # The title heading stands for the note (as rename takes it), not for a section.
    assert await references(lsp, home, line=0) == await references(lsp, home)
