"""Tool results: readable text plus structured content, capped in size, and errors as
one-line tool errors (never a traceback, which would reach the model or break stdio)."""

from __future__ import annotations

import functools
import inspect
import logging
import sys
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar

from mcp_types import CallToolResult, TextContent

from kb.errors import KbError
from kb.text import clean_line

MAX_TEXT = 40_000  # characters of text in one answer; past it a cursor continues
P = ParamSpec("P")
T = TypeVar("T")

log = logging.getLogger("kb.mcp")


def answer(text: str, data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def refusal(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def guarded(tool: Callable[P, CallToolResult]) -> Callable[P, CallToolResult]:
    """A tool whose kb errors become tool errors with kb's one-line message, and whose
    unexpected failures become one line on stderr and a tool error saying what to try."""

    @functools.wraps(tool)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
        try:
            return tool(*args, **kwargs)
        except KbError as exc:
            return refusal(clean_line(str(exc)))
        except Exception as exc:  # a bug or a broken file system: say so in one line
            log.error("%s failed: %s: %s", tool.__name__, type(exc).__name__, exc)
            return refusal(
                f"{tool.__name__} failed ({type(exc).__name__}: {clean_line(str(exc))}); "
                "try again, and if it persists run 'kb check' or 'kb ingest' in a terminal"
            )

    # Descriptions reach the model as written: without the docstring's indentation.
    wrapper.__doc__ = inspect.cleandoc(tool.__doc__ or "")
    return wrapper


def fitting(pieces: Iterable[str], budget: int = MAX_TEXT) -> tuple[list[str], int]:
    """The leading pieces whose text fits ``budget`` characters (at least one, cut at a
    safe place if it alone is too long), and how many whole items they are."""
    from kb.notes.paging import page_end  # deferred: 3 modules more

    kept: list[str] = []
    used = 0
    for piece in pieces:
        if used + len(piece) > budget:
            if not kept:
                end = page_end(piece, 0, budget)
                return [piece[:end] + "\n… (cut: this item is longer than an answer holds)\n"], 1
            break
        kept.append(piece)
        used += len(piece)
    return kept, len(kept)


def capped(text: str, hint: str, budget: int = MAX_TEXT) -> str:
    """``text`` whole when it fits ``budget``, else cut after a line, saying how to ask
    for less (``hint``)."""
    if len(text) <= budget:
        return text
    cut = text.rfind("\n", 0, budget) + 1 or budget
    return text[:cut] + f"… (cut at {budget:,} characters; {hint})\n"


class OneLine(logging.Formatter):
    """Log records as one line each: an exception's type and message, no traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f": {type(exc).__name__}: {exc}"
        return "kb mcp: " + clean_line(text)


def log_to_stderr(level: int = logging.WARNING) -> None:
    """Every log line (kb's and the SDK's) to stderr, one line each; set up before the
    SDK, whose own setup then leaves it be."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
