"""The search engines kb knows, by name: the one table ingest, the facade, the CLI and the
settings consult. A new engine is a module with an ``ENGINE`` (an ``EngineEntry``) and one
line here. Modules are imported only when their engine is asked for, so searching with
FTS5 never loads the whoosh module."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from kb.errors import KbError

if TYPE_CHECKING:
    from kb.config import Config
    from kb.engines.contract import EngineEntry
    from kb.store import Store

# name -> the module whose ENGINE is that engine's entry
ENGINES = {
    "fts5": "kb.engines.fts5",
    "whoosh": "kb.engines.whoosh",
    "tantivy": "kb.engines.tantivy",
}
DEFAULT_ENGINE = "fts5"
# From this many notes kb says once, after an ingest that added many, that tantivy answers
# faster (docs/engines.md: at 100,000 notes a sixth of FTS5's time at p95). It never
# switches by itself.
ADVISE_TANTIVY_AT = 20_000
ADVISE_AFTER_ADDING = 1_000


def engine_names() -> list[str]:
    return list(ENGINES)


def engine_entry(name: str) -> EngineEntry:
    """The entry of the engine called ``name``; KbError naming the known ones if none."""
    module = ENGINES.get(name)
    if module is None:
        raise KbError(f"unknown search engine {name!r} (known: {', '.join(ENGINES)})")
    entry: EngineEntry = importlib.import_module(module).ENGINE
    return entry


def configured_entry(config: Config, store: Store) -> EngineEntry:
    """kb.yaml's `engine` when set, else the one chosen with `--engine` (kept in the
    store), else the default; KbError for a name the registry does not know."""
    configured = config.raw.get("engine")
    if configured:
        try:
            return engine_entry(str(configured))
        except KbError as exc:
            raise KbError(f"{config.home / 'kb.yaml'}: engine: {exc}") from None
    stored = store.meta.get("engine")
    if stored and stored not in ENGINES:  # a newer kb's, or a hand-edited store
        raise KbError(
            f"the store names a search engine kb does not know ({stored!r}; known: "
            f"{', '.join(ENGINES)}); 'kb ingest --rebuild --engine {DEFAULT_ENGINE}' "
            "chooses one again"
        )
    return engine_entry(stored or DEFAULT_ENGINE)


def engine_advice(
    engine: str, notes: int, added: int, tantivy_installed: Callable[[], bool]
) -> str:
    """One line for a large FTS5 knowledge base that has just taken in many notes (a first
    ingest, a rebuild, a big import): the engine that answers faster, and how to switch;
    '' otherwise (every ordinary ingest stays quiet). ``tantivy_installed`` is asked only
    then (it imports tantivy)."""
    if engine != "fts5" or notes < ADVISE_TANTIVY_AT or added < ADVISE_AFTER_ADDING:
        return ""
    install = "" if tantivy_installed() else "pip install '.[tantivy]' in kb's folder, then "
    return (
        f"{notes:,} notes: the tantivy engine answers searches several times faster here "
        f"({install}kb ingest --rebuild --engine tantivy; see docs/engines.md)"
    )
