"""The search screen: the query box, the results (or the newest notes), a preview of the
highlighted one, and the tag tree. Core calls run in thread workers, never on the UI thread."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.worker import get_current_worker

from kb.errors import KbError, StoreError
from kb.notes.views import NoteSummary
from kb.search.run import SearchHit, SearchResults
from kb.text import one_line, strip_controls
from kb.tui.messages import FilterByTag, NotesChanged, OpenNote
from kb.tui.preview import preview
from kb.tui.widgets import ResultList, TagChip, TagTree, plural

if TYPE_CHECKING:
    from kb.tui.app import KbApp

RESULTS = 30  # as you type: the engine's best 30 (ordered by its relevance tiers)
RECENT = 50  # the empty search's list of notes
PREVIEW_DELAY = 0.2  # seconds without a keystroke before the preview is built
# Seconds without a keystroke before meaning joins the search (kb/meaning). As you type the
# search is the words' alone: an unfinished word is noise to a sentence model, and the
# model's first load (0.3-0.9 s) must not come between two keystrokes.
MEANING_DELAY = 0.4
WIDE = 110  # columns from which the preview (and the outline) sit beside the list

# What a search worker hands the screen: hits, the newest notes, or an error to show.
Outcome = SearchResults | list[NoteSummary] | str


class SearchScreen(Screen[None]):
    """Type to search; results update on every keystroke."""

    BINDINGS = [
        Binding(
            "down",
            "focus_results",
            "Results",
            show=False,
            id="results",
            tooltip="to the results; enter opens the highlighted note",
        ),
        Binding(
            "ctrl+t",
            "toggle_tags",
            "Tags",
            id="tags",
            tooltip="tag tree with counts; choosing a tag filters the results",
        ),
        Binding(
            "ctrl+n",
            "new_note",
            "New note",
            id="new",
            tooltip="new note titled with the search text, opened in $EDITOR",
        ),
        Binding(
            "ctrl+r", "reindex", "Re-index", id="reindex", show=False, tooltip="re-index every note"
        ),
        # Before the search box's own ctrl+e (end of line; the End key still does that).
        Binding(
            "ctrl+e",
            "edit",
            "Edit",
            id="edit",
            priority=True,
            tooltip="edit the highlighted result in $VISUAL/$EDITOR",
        ),
        Binding(
            "ctrl+g",
            "toggle_compact",
            "Layout",
            id="layout",
            show=False,
            tooltip="compact results (three lines each) or full ones (whole snippets)",
        ),
        Binding(
            "ctrl+o",
            "toggle_order",
            "Order",
            id="order",
            show=False,
            tooltip="empty search: the notes modified last, or the newest by their date",
        ),
        Binding(
            "ctrl+l",
            "toggle_meaning",
            "Meaning",
            id="meaning",
            show=False,
            tooltip="search by meaning on or off: once typing pauses, a question or a term in "
            "the other language also finds notes near in meaning (≈ the passage)",
        ),
        Binding(
            "escape",
            "clear",
            "Clear",
            show=False,
            id="clear",
            tooltip="clear the search text, then the tag filter",
        ),
    ]

    if TYPE_CHECKING:  # the app owns the screens: they name its type, never import it
        app = getters.app(KbApp)
    query_input = getters.query_one("#query", Input)
    status = getters.query_one("#status", Static)
    results = getters.query_one("#results", ResultList)
    preview = getters.query_one("#preview-body", Static)
    tags = getters.query_one("#tags", TagTree)
    chip = getters.query_one("#tag-chip", TagChip)

    def __init__(self) -> None:
        super().__init__(id="search")
        self.tag: str | None = None
        self.by_date = False  # the empty search: by front-matter date, not file time
        self.meaning = True  # meaning joins once typing pauses (ctrl+l: the words alone)
        self.matched: dict[int, list[str]] = {}  # by note: the words its preview highlights

    def compose(self) -> ComposeResult:
        yield TagTree("All notes", id="tags")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                with Horizontal(id="search-bar"):
                    yield Input(
                        placeholder='Search notes: words, "phrase", tag:x, -word …  (F1: help)',
                        id="query",
                    )
                    yield TagChip(id="tag-chip")
                yield Static(id="status")
                yield ResultList(id="results")
            with VerticalScroll(id="preview"):
                yield Static(id="preview-body")
        yield Footer(show_command_palette=False)  # ctrl+p: in the help (F1)

    def on_mount(self) -> None:
        self.tags.display = False
        self.query_input.focus()
        self.refresh_results()

    def on_resize(self) -> None:
        narrow = self.size.width < WIDE
        if self.has_class("-narrow") and not narrow:
            self.call_after_refresh(self.show_preview)  # the preview was not built: now it is
        self.set_class(narrow, "-narrow")

    def on_screen_suspend(self) -> None:
        self.workers.cancel_group(self, "preview")  # a note opened: its preview is moot

    # -- searching --------------------------------------------------------------------

    @property
    def query_text(self) -> str:
        text = self.query_input.value.strip()
        if self.tag:
            text = f"tag:{_quoted(self.tag)} {text}".strip()
        return text

    @on(Input.Changed, "#query")
    def refresh_results(self) -> None:
        self.workers.cancel_group(self, "preview")  # no preview is built while typing
        self.search(self.query_text)

    @work(thread=True, exclusive=True, group="search")
    def search(self, text: str) -> None:
        worker = get_current_worker()
        kb = self.app.kb
        outcome: Outcome
        try:
            outcome = (
                kb.search(text, limit=RESULTS, prefix=True)
                if text
                else kb.recent(RECENT, modified=not self.by_date)
            )
        except StoreError as exc:
            outcome = f"{exc} (ctrl+r re-indexes; a damaged store needs kb ingest --rebuild)"
        except KbError as exc:  # a query still being typed, such as an open quote
            outcome = str(exc)
        if not worker.is_cancelled:
            self.app.call_from_thread(self.show_outcome, text, outcome)
        if not (text and self.meaning and isinstance(outcome, SearchResults)):
            return
        if kb.by_meaning.configured() is None:  # off in kb.yaml, or the extra is not installed
            return
        time.sleep(MEANING_DELAY)
        if worker.is_cancelled:
            return
        try:
            found = kb.search(text, limit=RESULTS)
        except KbError:
            return  # the words' results stand
        # Only where meaning joined (the words were weak): elsewhere the list stands.
        if found.meaning and not worker.is_cancelled:
            self.app.call_from_thread(self.show_outcome, text, found)

    def show_outcome(self, text: str, outcome: Outcome) -> None:
        if text != self.query_text:
            return  # a newer keystroke is on its way
        scope = _tag_scope(self.tag, self.query_input.value, outcome)
        if isinstance(outcome, str):
            self.results.clear_options()
            self.status.update(Content.assemble((one_line(outcome), "$error")))
        elif isinstance(outcome, SearchResults):
            self.matched = {hit.note_id: matched_words(hit) for hit in outcome.hits}
            self.results.show_hits(outcome.hits)
            suggestion = one_line(outcome.suggestion or "")  # a word from the notes
            hint = f"  did you mean: {suggestion}?" if suggestion else ""
            if outcome.warning:
                hint += f"  ({outcome.warning})"
            near = sum(1 for hit in outcome.hits if hit.near)
            if near:
                hint += f"  ≈ {near} by meaning (ctrl+l: words only)"
            elif not self.meaning:
                hint += "  (words only; ctrl+l: meaning)"
            self.status.update(Content(f"{plural(len(outcome.hits), 'note')}{scope}{hint}"))
        else:
            self.matched = {}
            self.results.show_notes(outcome)
            order = (
                "newest by date (ctrl+o: modified last)"
                if self.by_date
                else ("modified last (ctrl+o: newest by date)")
            )
            message = order if outcome else self._empty_hint()
            self.status.update(Content(f"{message}{scope}"))
        self.show_preview()

    def _empty_hint(self) -> str:
        root = self.app.kb.notes_root
        return f"no notes yet in {root}: press ctrl+n to write one, or add Markdown files"

    @on(OptionList.OptionHighlighted, "#results")
    def show_preview(self) -> None:
        results = self.results
        option = (
            results.get_option_at_index(results.highlighted)
            if results.highlighted is not None and results.option_count
            else None
        )
        if option is None or not option.id:
            self.preview.update("")
            return
        width = self.query_one("#preview").content_region.width
        if width and not self.has_class("-narrow"):  # a hidden preview is not built
            note_id = int(option.id)
            self.load_preview(note_id, self.matched.get(note_id, []), width)

    @work(thread=True, exclusive=True, group="preview")
    def load_preview(self, note_id: int, words: list[str], width: int) -> None:
        """The note formatted, its matches highlighted: built here, off the keystroke path,
        once typing pauses (a newer keystroke cancels this one), from the part that fits."""
        worker = get_current_worker()
        time.sleep(PREVIEW_DELAY)
        if worker.is_cancelled:
            return
        try:
            page = self.app.kb.note_page(note_id)
        except KbError:
            return  # the results say what is wrong with the store
        if worker.is_cancelled:
            return
        shown = preview(page.title, page.path, page.markdown, words, width)
        if not worker.is_cancelled:
            self.app.call_from_thread(self.preview.update, shown)

    # -- actions ------------------------------------------------------------------------

    def action_focus_results(self) -> None:
        self.results.focus()

    def action_clear(self) -> None:
        """Escape: the search text first, then the tag filter."""
        if self.query_input.value:
            self.query_input.value = ""
        elif self.tag:
            self.post_message(FilterByTag(None))
        self.query_input.focus()

    @on(Input.Submitted, "#query")
    def open_first(self) -> None:
        results = self.results
        option = (
            results.get_option_at_index(results.highlighted or 0) if results.option_count else None
        )
        if option is not None and option.id:
            self.post_message(OpenNote(int(option.id)))

    def action_toggle_tags(self) -> None:
        tree = self.tags
        tree.display = not tree.display
        if tree.display:
            tree.focus()
            self.load_tags()

    @work(thread=True, exclusive=True, group="tags")
    def load_tags(self) -> None:
        try:
            tags = self.app.kb.tag_tree()
        except KbError as exc:
            self.app.call_from_thread(
                self.notify, strip_controls(str(exc)), severity="error", markup=False
            )
            return
        self.app.call_from_thread(self.tags.show_tags, tags)

    def list_term(self, kind: str, name: str) -> None:
        """The notes with a tag (the filter, as the tag tree sets it) or a category (the
        query ``category:NAME``); with no name, the tag tree."""
        if kind == "tag" and not name:
            if not self.tags.display:
                self.action_toggle_tags()
            return
        if kind == "tag":
            self.query_input.value = ""
            self.post_message(FilterByTag(name))
        else:
            self.post_message(FilterByTag(None))
            self.query_input.value = f"category:{_quoted(name)}" if name else ""
        self.query_input.focus()

    @on(FilterByTag)
    def filter_by_tag(self, message: FilterByTag) -> None:
        self.tag = message.tag
        self.chip.show_tag(message.tag)
        self.tags.display = False
        self.query_input.focus()
        self.refresh_results()

    def action_toggle_order(self) -> None:
        self.by_date = not self.by_date
        self.refresh_results()

    def action_toggle_meaning(self) -> None:
        self.meaning = not self.meaning
        self.notify(
            "Search by meaning on (once typing pauses)" if self.meaning else "Words only",
            markup=False,
        )
        self.refresh_results()

    def action_toggle_compact(self) -> None:
        self.results.toggle_class("-full")
        self.refresh_results()  # new entries: the list measures each entry once

    def action_edit(self) -> None:
        results = self.results
        if results.highlighted is None or not results.option_count:
            return
        option = results.get_option_at_index(results.highlighted)
        if option.id:
            self.edit_note(int(option.id))

    @work(thread=True, exclusive=True, group="edit")
    def edit_note(self, note_id: int) -> None:
        try:
            file = self.app.kb.note_page(note_id).file
        except KbError as exc:
            self.app.call_from_thread(
                self.notify, strip_controls(str(exc)), severity="error", markup=False
            )
            return
        self.app.call_from_thread(self.app.action_edit, file)

    def action_new_note(self) -> None:
        self.app.action_new_note(self.query_input.value.strip())

    def action_reindex(self) -> None:
        self.app.action_reindex()

    def on_notes_changed(self, _: NotesChanged) -> None:
        self.refresh_results()


def matched_words(hit: SearchHit) -> list[str]:
    """The words a result's preview highlights: the query's words it holds, and the text
    its snippet and title highlight (a prefix's whole word, a Chinese word's characters)."""
    found = [hit.snippet[start:end] for start, end in hit.highlights]
    found += [hit.title[start:end] for start, end in hit.title_highlights]
    return sorted({*hit.matched, *found}, key=len, reverse=True)


def _quoted(tag: str) -> str:
    return '"' + tag.replace('"', "") + '"'  # always: tags may hold spaces or parentheses


def _tag_scope(tag: str | None, text: str, outcome: Outcome) -> str:
    """What the status line says of a chosen tag: with words typed too, that they filter
    as well, and how to clear them when nothing is left."""
    if not tag:
        return ""
    scope = f"  tag: {one_line(tag)}"
    if not text.strip():
        return scope
    scope += f" and the words “{one_line(text.strip())}”"
    if isinstance(outcome, SearchResults) and not outcome.hits:
        scope += " (esc clears the words)"
    return scope
