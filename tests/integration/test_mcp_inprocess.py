"""kb mcp's server in this process, through the SDK's in-memory Client: the quick tier's
look at the tools (tests/integration/test_mcp.py drives the real process over stdio, marked
slow)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp.client import Client

from kb.knowledge_base import KnowledgeBase
from kb.mcp.server import build_server
from kb.notes.writing import content_hash

NOTES = {
    "redis.md": "---\ntitle: Redis 学习笔记\ntags: [db]\n---\n# Redis\n\n## ZSET\n\nskiplist\n",
    "project.md": "---\ntitle: 限流项目\n---\nUses [[Redis 学习笔记]] for the window.\n",
}


async def call(client: Client, tool: str, **arguments: Any) -> tuple[bool, str, Any]:
    result = await client.call_tool(tool, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return bool(result.is_error), text, result.structured_content


@pytest.fixture
def kb(make_kb: Callable[..., KnowledgeBase]) -> KnowledgeBase:
    made = make_kb(NOTES)
    made.ingest()
    return made


async def test_read_tools_in_process(kb: KnowledgeBase) -> None:
    async with Client(build_server(kb)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "search" in names and "new_note" not in names
        error, text, data = await call(client, "search", query="skiplist")
        assert not error and data["hits"][0]["path"] == "redis.md"
        assert "1. Redis 学习笔记" in text
        error, _, note = await call(client, "read_note", note="rxxbj", section="ZSET")
        assert not error and note["markdown"] == "## ZSET\n\nskiplist\n"
        error, _, links = await call(client, "links", note="redis")
        assert [b["path"] for b in links["backlinks"]] == ["project.md"]
        error, message, _ = await call(
            client, "append_to_note", note="redis", text="x", content_hash="abcd"
        )
        assert error and "kb mcp --write" in message


async def test_resources_come_in_pages_and_lists_take_file_times(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kb.mcp import resources

    monkeypatch.setattr(resources, "PAGE", 1)  # one note a page
    async with Client(build_server(kb)) as client:
        first = await client.list_resources()
        assert [r.uri for r in first.resources] == ["kb://tags", "kb://note/project.md"]
        second = await client.list_resources(cursor=first.next_cursor)
        assert [r.uri for r in second.resources] == ["kb://note/redis.md"]
        assert second.next_cursor is None
        with pytest.raises(Exception, match="without a cursor"):
            await client.list_resources(cursor="not-one-of-ours")
        error, _, listed = await call(client, "list_notes", modified_since="2000-01-01")
        assert not error and len(listed["notes"]) == 2
        error, _, listed = await call(client, "list_notes", modified_until="2000-01-01")
        assert not error and listed["notes"] == []
        error, message, _ = await call(client, "list_notes", modified_since="yesterday")
        assert error and "2024-03-10" in message


async def test_a_stale_hash_changes_nothing(kb: KnowledgeBase) -> None:
    file = kb.notes_root / "redis.md"
    async with Client(build_server(kb, writable=True)) as client:
        read = content_hash(file.read_bytes())
        file.write_text(file.read_text(encoding="utf-8") + "saved in the editor\n", "utf-8")
        saved = file.read_bytes()
        error, message, _ = await call(
            client,
            "replace_in_note",
            note="redis",
            old_text="skiplist",
            new_text="x",
            content_hash=read,
        )
        assert error and "changed since it was read" in message
        assert file.read_bytes() == saved
        error, _, done = await call(
            client,
            "replace_in_note",
            note="redis",
            old_text="skiplist",
            new_text="跳表",
            content_hash=content_hash(saved),
        )
        assert not error and "跳表" in file.read_text(encoding="utf-8")
        assert done["content_hash"] == content_hash(file.read_bytes())


def test_kb_mcp_without_the_sdk_says_what_to_install(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    hide = tmp_path / "hide"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(
        "import sys\nsys.modules['mcp'] = None\n", encoding="utf-8"
    )
    env = {**os.environ, "PYTHONPATH": str(hide)}
    done = subprocess.run(
        [sys.executable, "-m", "kb", "--kb", str(home), "mcp"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert (
        done.stderr.strip() == "kb: kb mcp needs the MCP SDK: pip install '.[mcp]' in kb's folder"
    )


def test_kb_search_never_imports_the_sdk(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb(NOTES)
    kb.ingest()
    script = (
        "import sys\nfrom kb.cli import main\n"
        f"sys.argv = ['kb', '--kb', {str(kb.home)!r}, 'search', 'skiplist']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'mcp', 'mcp_types', 'pydantic', 'starlette', 'uvicorn', 'httpx2'})\n"
        "print('loaded:', loaded, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert "redis.md" in done.stdout
    assert "loaded: []" in done.stderr


def test_the_server_answers_without_loading_rich(kb: KnowledgeBase) -> None:
    # The SDK's logging setup imported rich before the first answer, only to build a
    # handler it then dropped: kb logs through its own.
    script = (
        "import asyncio, sys\n"
        "from mcp.client import Client\n"
        "from kb.knowledge_base import KnowledgeBase\n"
        "from kb.mcp.server import build_server\n"
        f"kb = KnowledgeBase.open({str(kb.home)!r})\n"
        "async def main():\n"
        "    async with Client(build_server(kb)) as client:\n"
        "        found = await client.call_tool('search', {'query': 'skiplist'})\n"
        "        print(found.structured_content['hits'][0]['path'])\n"
        "asyncio.run(main())\n"
        "print('rich loaded:', 'rich' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.stdout.split("\n")[:2] == ["redis.md", "rich loaded: False"], done.stderr
