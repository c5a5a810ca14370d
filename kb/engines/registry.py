"""The search engines kb knows, by name: the one table ingest, the facade, the CLI and the
settings consult. A new engine is a module with an ``ENGINE`` (an ``EngineEntry``) and one
line here. Modules are imported only when their engine is asked for, so searching with
FTS5 never loads the whoosh module."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from kb.errors import KbError

if TYPE_CHECKING:
    from kb.engines.contract import EngineEntry

# name -> the module whose ENGINE is that engine's entry
ENGINES = {
    "fts5": "kb.engines.fts5",
    "whoosh": "kb.engines.whoosh",
    "tantivy": "kb.engines.tantivy",
}
DEFAULT_ENGINE = "fts5"


def engine_names() -> list[str]:
    return list(ENGINES)


def engine_entry(name: str) -> EngineEntry:
    """The entry of the engine called ``name``; KbError naming the known ones if none."""
    module = ENGINES.get(name)
    if module is None:
        raise KbError(f"unknown search engine {name!r} (known: {', '.join(ENGINES)})")
    entry: EngineEntry = importlib.import_module(module).ENGINE
    return entry
