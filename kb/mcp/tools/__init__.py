"""``kb mcp``'s tools as one table: the server registers them from it, the write guard
reads which of them change notes, and tests hold docs/assistants.md and ``kb mcp --help``
to it. One module per group: ``read`` (finding and reading notes), ``links`` (a note's
connections and the problems in them), ``writes`` (changing notes, with ``--write``).

A tool is a top-level function whose first parameter is the knowledge base; the others,
annotated, are its input schema, and its docstring is its description."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from mcp_types import CallToolResult, ToolAnnotations

from kb.mcp.tools import links, read, writes
from kb.mcp.tools.arguments import READS, WRITES

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from kb.knowledge_base import KnowledgeBase


class Tool(NamedTuple):
    function: Callable[..., CallToolResult]
    annotations: ToolAnnotations

    @property
    def name(self) -> str:
        return self.function.__name__

    @property
    def writes(self) -> bool:
        return not self.annotations.read_only_hint


# In the order clients list them.
TOOLS: tuple[Tool, ...] = (
    Tool(read.search, READS),
    Tool(read.read_note, READS),
    Tool(links.links, READS),
    Tool(read.list_notes, READS),
    Tool(read.recent, READS),
    Tool(read.tags, READS),
    Tool(links.check, READS),
    Tool(read.stats, READS),
    Tool(writes.new_note, WRITES),
    Tool(writes.append_to_note, WRITES),
    Tool(writes.replace_in_note, WRITES),
    Tool(writes.move_note, WRITES),
)
WRITE_TOOLS = frozenset(tool.name for tool in TOOLS if tool.writes)


def add_tools(server: MCPServer[Any], kb: KnowledgeBase, writable: bool) -> None:
    """Every tool of the table on ``server``, over ``kb``; the write tools only when
    ``writable``."""
    for tool in TOOLS:
        if writable or not tool.writes:
            server.add_tool(bound(tool.function, kb), annotations=tool.annotations)


def bound(function: Callable[..., CallToolResult], kb: KnowledgeBase) -> Callable[..., Any]:
    """``function`` with its knowledge base given: what the SDK reads (name, description,
    every parameter but the first) and calls."""

    @functools.wraps(function)
    def call(**arguments: Any) -> CallToolResult:
        return function(kb, **arguments)

    signature = inspect.signature(function, eval_str=True)
    schema = list(signature.parameters.values())[1:]  # all but the knowledge base
    call.__dict__["__signature__"] = signature.replace(parameters=schema)  # inspect reads it
    return call
