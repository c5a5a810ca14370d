"""``kb help TOPIC``: the pages of ``docs/``, offline.

Git holds one copy of each page, ``docs/TOPIC.md``. A wheel carries them here as
``kb/help/TOPIC.md`` (``setup.py`` copies them at build time); a source checkout, installed
with ``pip install -e .``, reads ``docs/`` beside the package. Importing this module reads
no file: ``kb help`` alone lists the topics from ``TOPICS``.
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
    """The text of ``topic``'s page: as the wheel ships it, else docs/ of the checkout."""
    from pathlib import Path  # read only when a page is asked for

    here = Path(__file__).parent
    for place in (here / f"{topic}.md", here.parent.parent / "docs" / f"{topic}.md"):
        if place.is_file():
            return place.read_text(encoding="utf-8")
    raise FileNotFoundError(f"no page for {topic}: this kb was installed without its docs")
