"""Every module or name that a comment or docstring in kb/ points to (``kb.query.plan``,
``kb.notes.listing.SORT_KEYS``) exists: a reader who follows one lands somewhere. Modules
move; their mentions must move with them."""

from __future__ import annotations

import importlib
import importlib.util
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

# A dotted name from kb, not a call on a variable named kb (``kb.search("x")``) and not a file.
_NAMED = re.compile(r"(?<![\w./-])kb(?:\.[A-Za-z_]\w*)+(?![\w(/-])")
_FILES = (".py", ".md", ".yaml", ".tsv", ".tcss", ".sqlite", ".toml")


def _prose(path: Path) -> Iterator[tuple[int, str]]:
    """Comments and docstrings (triple-quoted strings) of a Python file, with their line."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        opening = token.string.lstrip("rbuRBU")[:3]
        docstring = token.type == tokenize.STRING and opening in ('"""', "'''")
        if token.type == tokenize.COMMENT or docstring:
            yield token.start[0], token.string


def resolves(name: str) -> bool:
    """Whether ``kb.a.b.c`` is a module, or a module's attribute (a class's, …)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None:
            continue
        value: object = importlib.import_module(module)
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def named_in_prose() -> list[tuple[str, str]]:
    found = []
    for path in sorted((REPO / "kb").rglob("*.py")):
        for line, text in _prose(path):
            for match in _NAMED.finditer(text):
                name = match.group().rstrip(".")
                if not name.endswith(_FILES):
                    found.append((f"{path.relative_to(REPO)}:{line}", name))
    return found


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("kb.query.plan", True),
        ("kb.notes.listing.SORT_KEYS", True),
        ("kb.knowledge_base.KnowledgeBase.search", True),
        ("kb.analysis", False),
        ("kb.query.plan.no_such_name", False),
    ],
)
def test_resolves(name: str, expected: bool) -> None:
    assert resolves(name) is expected


def test_every_name_in_a_comment_or_docstring_exists() -> None:
    named = named_in_prose()
    assert len(named) > 50  # the scan finds the names it is meant to check
    stale = [f"{where}: {name}" for where, name in named if not resolves(name)]
    assert not stale, "names that no longer exist:\n" + "\n".join(stale)
