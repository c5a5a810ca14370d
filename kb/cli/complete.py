"""Shell completion of the commands' arguments: notes, tags, series, query words."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from kb.errors import KbError

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase


def complete_note(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    from kb.cli.shell_completion import complete_notes  # deferred: loads click

    return complete_notes(completion_kb(ctx), incomplete)


def complete_tag(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    from kb.cli.shell_completion import complete_terms  # deferred: loads click

    return complete_terms(completion_kb(ctx), "tags", incomplete)


def complete_series(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    from kb.cli.shell_completion import complete_terms  # deferred: loads click

    return complete_terms(completion_kb(ctx), "series", incomplete)


def complete_query(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    from kb.cli.shell_completion import complete_query  # deferred: loads click

    return complete_query(completion_kb(ctx), incomplete)


def complete_search_query(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    from kb.cli.shell_completion import complete_query  # deferred: loads click

    return complete_query(completion_kb(ctx), incomplete, titles=True)


def completion_kb(ctx: click.Context) -> KnowledgeBase | None:
    """The knowledge base while the shell completes a word (the group's callback has not
    run, so --kb is read from the parsed parameters); None when there is none."""
    from kb.knowledge_base import KnowledgeBase  # deferred: 32 modules more

    try:
        return KnowledgeBase.open(ctx.find_root().params.get("kb_dir"))
    except KbError:
        return None
