"""Shell completion of note names, tags and series (``kb completion bash|zsh|fish``).

Click drives the completion; these functions answer for one word. They never fail: with
no knowledge base or no store yet there is simply nothing to offer.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from click.shell_completion import (
    BashComplete,
    CompletionItem,
    FishComplete,
    add_completion_class,
    get_completion_class,
    split_arg_string,
)

from kb.errors import KbError
from kb.text import one_line

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase
    from kb.notes.views import NoteChoice

_MAX_ITEMS = 200  # a shell shows no more usefully
_TERM_PREFIXES = {
    "tag:": "tags",
    "series:": "series",
    "category:": "categories",
    "date:": "dates",
}


def complete_notes(kb: KnowledgeBase | None, incomplete: str) -> list[CompletionItem]:
    """Note paths (relative to the notes root) and titles that start with ``incomplete``,
    any case; each path carries its title as the description (zsh and fish show it)."""
    choices = _note_choices(kb)
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


def _note_choices(kb: KnowledgeBase | None) -> list[NoteChoice]:
    """Every note's path and title; none without a knowledge base or a readable store."""
    if kb is None:
        return []
    try:
        return kb.note_choices()
    except KbError:
        return []


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
        CompletionItem(one_line(name), help=f"{count} note{'' if count == 1 else 's'}")
        for name, count in sorted(counts, key=lambda item: -item[1])
        if name.casefold().startswith(wanted)
    ][:_MAX_ITEMS]


def complete_query(
    kb: KnowledgeBase | None, incomplete: str, titles: bool = False
) -> list[CompletionItem]:
    """In a query: ``tag:``, ``series:``, ``category:`` and ``date:`` followed by a name or
    a year or month; with ``titles``, ``title:`` and a bare word complete to note titles
    (``kb search``: a title's words find the note)."""
    for prefix, kind in _TERM_PREFIXES.items():
        if incomplete.startswith(prefix):
            return [
                CompletionItem(prefix + item.value, help=item.help)
                for item in complete_terms(kb, kind, incomplete[len(prefix) :])
            ]
    if not titles:
        return []
    if incomplete.startswith("title:"):
        return [
            CompletionItem(_title_filter(item.value), help=item.help)
            for item in _complete_titles(kb, incomplete[len("title:") :].lstrip('"'))
        ]
    if not incomplete or incomplete.startswith("-") or ":" in incomplete:
        return []  # an exclusion, or a filter kb does not complete
    return _complete_titles(kb, incomplete)


def _title_filter(title: str) -> str:
    return f'title:"{title}"' if " " in title else f"title:{title}"


def _complete_titles(kb: KnowledgeBase | None, incomplete: str) -> list[CompletionItem]:
    """Note titles that start with ``incomplete``, any case, each with its path."""
    wanted = incomplete.casefold()
    found = {
        one_line(c.title): c.path
        for c in _note_choices(kb)
        if c.title.casefold().startswith(wanted)
    }
    return [CompletionItem(title, help=path) for title, path in found.items()][:_MAX_ITEMS]


# -- the shells' side ---------------------------------------------------------------------

# bash, as click writes it, with three changes. kb reads the line up to the cursor itself
# (COMP_LINE), since bash splits ``tag:gp`` into ``tag``, ``:`` and ``gp`` at the
# characters of COMP_WORDBREAKS; kb then answers for the part after the last of those, the
# word bash replaces. ``compopt -o filenames`` makes bash quote what it inserts
# (``Redis\ 学习笔记``, or inside the quote the user opened), so running the line works.
_BASH_SOURCE = """\
%(complete_func)s() {
    local IFS=$'\\n'
    local response

    response=$(env COMP_LINE="${COMP_LINE:0:COMP_POINT}" \\
        COMP_WORDBREAKS="$COMP_WORDBREAKS" %(complete_var)s=bash_complete $1)

    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"

        if [[ $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            COMPREPLY=()
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            compopt -o filenames 2>/dev/null
            COMPREPLY+=("$value")
        fi
    done

    return 0
}

%(complete_func)s_setup() {
    complete -o nosort -F %(complete_func)s %(prog_name)s
}

%(complete_func)s_setup;
"""


class KbBashComplete(BashComplete):
    """bash completion that reads the line as typed, not bash's words (see above)."""

    source_template = _BASH_SOURCE

    def get_completion_args(self) -> tuple[list[str], str]:
        line = os.environ.get("COMP_LINE")
        if line is None:  # an older script: bash's words, as click reads them
            return super().get_completion_args()
        words = split_arg_string(line)
        # The cursor after a space that ends a word (not one escaped or inside quotes):
        # a letter typed there would start a word of its own.
        ended = split_arg_string(line + "x") == [*words, "x"]
        incomplete = "" if ended or len(words) < 2 else words.pop()
        self.replaced = _before_last_break(incomplete, os.environ.get("COMP_WORDBREAKS", ""))
        return words[1:], incomplete

    def format_completion(self, item: CompletionItem) -> str:
        value = item.value
        if item.type == "plain" and self.replaced and value.startswith(self.replaced):
            value = value[len(self.replaced) :]  # bash replaces only what follows
        return f"{item.type},{value}"

    replaced = ""


def _before_last_break(word: str, breaks: str) -> str:
    """The start of ``word`` bash keeps: up to and with its last COMP_WORDBREAKS
    character (``tag:`` of ``tag:gp``, ``--tag=`` of ``--tag=ra``), '' when none."""
    breaks = "".join(c for c in breaks if not c.isspace() and c not in "\"'")
    cut = max((word.rfind(c) for c in breaks), default=-1)
    return word[: cut + 1]


class KbFishComplete(FishComplete):
    """fish completion as click writes it, but a value with a comma (a title) stays whole:
    the script splits each answer at its first comma only."""

    source_template = FishComplete.source_template.replace(
        'string split "," $completion', 'string split -m 1 "," $completion'
    )


def register_shells() -> None:
    """Let click use kb's bash and fish completion, for the script and the answers."""
    add_completion_class(KbBashComplete, "bash")
    add_completion_class(KbFishComplete, "fish")


def completion_script(shell: str, cli: Any) -> str:
    """The script ``kb completion SHELL`` prints."""

    register_shells()
    complete = get_completion_class(shell)
    assert complete is not None  # click knows these three shells
    return complete(cli, {}, "kb", "_KB_COMPLETE").source()
