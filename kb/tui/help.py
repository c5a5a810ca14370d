"""Help for the screen the user is on: its keys, and on the search screen the query language."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from kb.tui.hanging import Hanging, Prefix

# What can be typed in the search box, with examples (kb.query.syntax parses it).
QUERY_LANGUAGE = [
    ("words are ANDed", "Redis 学习笔记"),
    ("OR, parentheses", "(roofline OR 带宽) gpu"),
    ("leave out", "redis -cluster    redis NOT cluster"),
    ("exact phrase", '"arithmetic intensity"    "显存带宽"'),
    ("prefix", "roof*    (the last word typed counts as one from 3 characters)"),
    ("tag, title, path", "tag:cs336    title:roofline    path:posts/"),
    ("series, category", "series:CS336    category:GPU"),
    ("date", "date:2024    date:2024-03    date:2024-01..2024-06"),
    ("drafts", "draft:true"),
]

# Keys that work everywhere, beside the screen's own.
APP_KEYS = [
    Binding("f1,question_mark", "help", tooltip="this help (? only outside the search box)"),
    Binding(
        "ctrl+p", "palette", tooltip="command palette: open any note by title, change the theme"
    ),
    Binding("ctrl+q", "quit", tooltip="quit"),
]


_NOTHING = Content()


def key_rows(screen: Screen[object]) -> list[tuple[str, str]]:
    """The screen's keys, then the app's, as (keys, what they do), from their bindings:
    the longer tooltip when a binding has one, else its footer label."""
    rows = []
    for binding in [*screen.BINDINGS, *APP_KEYS]:
        if isinstance(binding, Binding):
            keys = "  ".join(
                screen.app.get_key_display(Binding(key, "")) for key in binding.key.split(",")
            )
            rows.append((keys, binding.tooltip or binding.description))
    return rows


def help_text(title: str, rows: list[tuple[str, str]], query_language: bool) -> Hanging:
    """The help page as plain Content (never markup), each row's text wrapping under its
    own start, not at column 0, in a narrow window."""
    lines: list[Content] = []
    prefixes: list[Prefix] = []

    def add(text: Content, first: Content = _NOTHING, rest: Content = _NOTHING) -> None:
        lines.append(text)
        prefixes.append(Prefix(first, rest))

    add(Content.styled(title, "bold"))
    add(Content())
    width = max(len(keys) for keys, _ in rows) + 2
    for keys, what in rows:
        add(Content(what), Content.styled(keys.ljust(width), "bold $accent"), Content(" " * width))
    if query_language:
        add(Content())
        add(Content.styled("Searching", "bold"))
        add(Content())
        column = max(len(name) for name, _ in QUERY_LANGUAGE) + 2
        for name, example in QUERY_LANGUAGE:
            add(
                Content.styled(example, "$accent"),
                Content(name.ljust(column)),
                Content(" " * column),
            )
        add(Content())
        add(Content("Empty search box: the notes modified last (ctrl+o: by front-matter date)."))
    add(Content())
    add(Content.styled("escape, f1 or ? closes this help", "dim"))
    return Hanging(None, prefixes, lines)


class HelpScreen(ModalScreen[None]):
    """The help of the screen below it."""

    BINDINGS = [
        Binding("escape,f1,question_mark,q", "dismiss", "Close", id="close-help"),
    ]

    def __init__(self, title: str, rows: list[tuple[str, str]], query_language: bool) -> None:
        super().__init__(id="help")
        self.text = help_text(title, rows, query_language)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-page"):
            yield Static(self.text, id="help-text")
