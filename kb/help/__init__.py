"""``kb help TOPIC``: the pages of ``docs/``, shipped in the package so they work offline.

The ``*.md`` files here are copies of ``docs/*.md``, made by ``python -m kb.help`` and
checked against ``docs/`` by ``tests/contracts/test_cli_help.py``, so the two never drift.
Importing this module reads no file: ``kb help`` alone lists the topics from ``TOPICS``.
"""

from __future__ import annotations

# topic (the page docs/TOPIC.md) -> its one-line summary, in the order `kb help` lists them
TOPICS = {
    "commands": "every command, its options, output and exit codes",
    "terminal-output": "output fitted to the terminal or piped whole, completion, usage errors",
    "query": "the query language, how a query is read, what is searched, ranking",
    "ranking": "Chinese words the notes never wrote, words near each other, related reasons",
    "meaning": "search by meaning, offline: how it works, choosing a model, what it costs",
    "app": "the terminal UI: screens, keys, reading, line breaking",
    "notes": "what kb reads from a note: front matter, title, date, tags, headings",
    "links": "links, mentions, related notes, static sites (Hugo, Jekyll, docs folders)",
    "configuration": "kb.yaml, every key",
    "engines": "the search engines (FTS5, tantivy, whoosh), measured, and which to pick",
    "sql": "kb sql and the store's read-only views",
    "editors": "kb lsp and the editors' settings",
    "assistants": "kb mcp and the assistants' settings",
    "faults-and-recovery": "damaged stores, full disks, kills, hostile notes",
    "architecture": "the map of packages, a note's path from file to screen, the rules",
    "api": "the Python API: from kb import KnowledgeBase",
    "design-decisions": "why the store, the engine, start-up, parsing and the reader are so",
    "development": "tests, tiers, benchmarks, CI",
}

# other names a topic answers to (kb help config was the name before docs/)
ALIASES = {"config": "configuration"}


def topic_named(name: str) -> str | None:
    """The topic ``name`` stands for (any case, an alias too), or None."""
    wanted = name.strip().lower()
    wanted = ALIASES.get(wanted, wanted)
    return wanted if wanted in TOPICS else None


def page(topic: str) -> str:
    """The text of ``topic``'s page, as shipped."""
    from importlib.resources import files  # read only when a page is asked for

    return files("kb.help").joinpath(f"{topic}.md").read_text(encoding="utf-8")
