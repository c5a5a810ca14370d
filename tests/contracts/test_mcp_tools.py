"""kb mcp's tool table (kb.mcp.tools.TOOLS) is the one list of tools: the server offers
what it holds, and the pages a user reads (docs/assistants.md, `kb mcp --help`) name
the same tools, the read ones apart from the write ones."""

from __future__ import annotations

import inspect
import re

import pytest

pytest.importorskip("mcp")
from click.testing import CliRunner

from kb.cli import cli
from kb.mcp.tools import TOOLS, links, read, writes
from tests.conftest import REPO

READ_TOOLS = [tool.name for tool in TOOLS if not tool.writes]
WRITE_TOOLS = [tool.name for tool in TOOLS if tool.writes]


def test_every_tool_of_a_group_module_is_in_the_table_once() -> None:
    names = [tool.name for tool in TOOLS]
    assert len(names) == len(set(names))
    for group in (read, links, writes):
        defined = {
            name
            for name, value in vars(group).items()
            if inspect.isfunction(value)
            and value.__module__ == group.__name__
            and not name.startswith("_")
        }
        listed = {tool.name for tool in TOOLS if tool.function.__module__ == group.__name__}
        assert defined == listed, group.__name__
    for tool in TOOLS:  # the writes module's tools, and only they, change notes
        assert tool.writes == (tool.function.__module__ == writes.__name__), tool.name


def _tools_in_table(page: str, header: str) -> list[str]:
    table = page.split(header, 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE)


def test_the_assistants_page_lists_the_tools_of_the_table() -> None:
    page = (REPO / "docs" / "assistants.md").read_text(encoding="utf-8")
    assert _tools_in_table(page, "| tool | what it answers |") == READ_TOOLS
    assert _tools_in_table(page, "| tool | what it changes |") == WRITE_TOOLS
    assert f"With `--write` {_number(len(WRITE_TOOLS))} more tools appear" in page


def test_kb_mcp_help_names_the_tools_of_the_table() -> None:
    result = CliRunner().invoke(cli, ["mcp", "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    said = re.search(r"Tools: ([\w, ]+); resources", text)
    assert said and said[1].split(", ") == READ_TOOLS
    said = re.search(r"Offer the tools that change notes \(([\w, ]+)\)", text)
    assert said and said[1].split(", ") == WRITE_TOOLS


def _number(count: int) -> str:
    words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    return words[count] if count < len(words) else str(count)
