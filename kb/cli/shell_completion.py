"""Shell completion of note names, tags and series (``kb completion bash|zsh|fish``).

Click drives the completion; these functions answer for one word. They never fail: with
no knowledge base or no store yet there is simply nothing to offer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from click.shell_completion import CompletionItem

from kb.errors import KbError
from kb.text import one_line

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase

_MAX_ITEMS = 200  # a shell shows no more usefully
_TERM_PREFIXES = {"tag:": "tags", "series:": "series", "category:": "categories"}


def complete_notes(kb: KnowledgeBase | None, incomplete: str) -> list[CompletionItem]:
    """Note paths (relative to the notes root) and titles that start with ``incomplete``,
    any case; each path carries its title as the description (zsh and fish show it)."""
    if kb is None:
        return []
    try:
        choices = kb.note_choices()
    except KbError:
        return []
    wanted = incomplete.casefold()
    paths = [
        CompletionItem(c.path, help=one_line(c.title))
        for c in choices
        if c.path.casefold().startswith(wanted)
    ]
    titles = [
        CompletionItem(one_line(c.title), help=c.path)
        for c in choices
        if c.title.casefold().startswith(wanted)
    ]
    return (paths + titles)[:_MAX_ITEMS]


def complete_terms(kb: KnowledgeBase | None, kind: str, incomplete: str) -> list[CompletionItem]:
    """Tags (or series, categories) that start with ``incomplete``, most used first."""
    if kb is None:
        return []
    try:
        counts = kb.term_counts(kind)
    except KbError:
        return []
    wanted = incomplete.casefold()
    return [
        CompletionItem(one_line(name), help=f"{count} notes")
        for name, count in sorted(counts, key=lambda item: -item[1])
        if name.casefold().startswith(wanted)
    ][:_MAX_ITEMS]


def complete_query(kb: KnowledgeBase | None, incomplete: str) -> list[CompletionItem]:
    """In a query: ``tag:``, ``series:`` and ``category:`` followed by a name."""
    for prefix, kind in _TERM_PREFIXES.items():
        if incomplete.startswith(prefix):
            return [
                CompletionItem(prefix + item.value, help=item.help)
                for item in complete_terms(kb, kind, incomplete[len(prefix) :])
            ]
    return []
