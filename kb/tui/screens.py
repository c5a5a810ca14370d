"""The two screens: search (results, preview, tags) and reading a note (with its links,
backlinks, mentions, related notes and series). Screens call the core from workers."""

from __future__ import annotations

import asyncio
import sqlite3

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Footer,
    Input,
    Markdown,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
)
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from kb.browse import Follow, History, NotePage, split_for_display
from kb.connections import Connections
from kb.errors import KbError, StoreError
from kb.search import SearchResults
from kb.text import one_line, strip_controls
from kb.tui.messages import FilterByTag, FollowLink, NotesChanged, OpenNote
from kb.tui.widgets import (
    DIM,
    ConnectionList,
    LinkList,
    ResultList,
    TagTree,
    markdown_parser,
    plain,
)

RESULTS = 50
WIDE = 110  # columns from which the preview (and the outline) sit beside the list


class SearchScreen(Screen[None]):
    """Type to search; results update on every keystroke."""

    BINDINGS = [
        Binding("down", "focus_results", "Results", show=False, id="results"),
        Binding("ctrl+t", "toggle_tags", "Tags", id="tags"),
        Binding("ctrl+n", "new_note", "New note", id="new"),
        Binding("ctrl+r", "reindex", "Re-index", id="reindex"),
        Binding("escape", "clear", "Clear", show=False, id="clear"),
    ]

    def __init__(self) -> None:
        super().__init__(id="search")
        self.tag: str | None = None

    def compose(self) -> ComposeResult:
        yield TagTree("All notes", id="tags")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder='Search notes: words, "phrase", tag:x, -word …', id="query")
                yield Static(id="status")
                yield ResultList(id="results")
            with VerticalScroll(id="preview"):
                yield Static(id="preview-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#tags", TagTree).display = False
        self.query_one("#query", Input).focus()
        self.refresh_results()

    def on_resize(self) -> None:
        self.set_class(self.size.width < WIDE, "-narrow")

    # -- searching --------------------------------------------------------------------

    @property
    def query_text(self) -> str:
        text = self.query_one("#query", Input).value.strip()
        if self.tag:
            text = f"tag:{_quoted(self.tag)} {text}".strip()
        return text

    @on(Input.Changed, "#query")
    def refresh_results(self) -> None:
        self.search(self.query_text)

    @work(thread=True, exclusive=True, group="search")
    def search(self, text: str) -> None:
        worker = get_current_worker()
        kb = self.app.kb  # type: ignore[attr-defined]
        with self.app.kb_lock:  # type: ignore[attr-defined]
            try:
                outcome: SearchResults | list | str = (
                    kb.search(text, limit=RESULTS, prefix=True) if text else kb.recent(RESULTS)
                )
            except (StoreError, sqlite3.DatabaseError) as exc:
                outcome = f"{exc} (ctrl+r re-indexes; a damaged store needs kb ingest --rebuild)"
            except KbError as exc:  # a query still being typed, such as an open quote
                outcome = str(exc)
        if not worker.is_cancelled:
            self.app.call_from_thread(self.show_outcome, text, outcome)

    def show_outcome(self, text: str, outcome: SearchResults | list | str) -> None:
        if text != self.query_text:
            return  # a newer keystroke is on its way
        results = self.query_one("#results", ResultList)
        status = self.query_one("#status", Static)
        scope = f"  tag: {one_line(self.tag)}" if self.tag else ""
        if isinstance(outcome, str):
            results.clear_options()
            status.update(Content.assemble((one_line(outcome), "$error")))
        elif isinstance(outcome, SearchResults):
            results.show_hits(outcome.hits)
            suggestion = one_line(outcome.suggestion or "")  # a word from the notes
            hint = f"  did you mean: {suggestion}?" if suggestion else ""
            if outcome.warning:
                hint += f"  ({outcome.warning})"
            status.update(Content(f"{len(outcome.hits)} notes{scope}{hint}"))
        else:
            results.show_notes(outcome)
            message = "newest notes" if outcome else self._empty_hint()
            status.update(Content(f"{message}{scope}"))
        self.show_preview()

    def _empty_hint(self) -> str:
        root = self.app.kb.config.roots[0].path  # type: ignore[attr-defined]
        return f"no notes yet in {root}: press ctrl+n to write one, or add Markdown files"

    @on(OptionList.OptionHighlighted, "#results")
    def show_preview(self) -> None:
        results = self.query_one("#results", ResultList)
        preview = self.query_one("#preview-body", Static)
        option = (
            results.get_option_at_index(results.highlighted)
            if results.highlighted is not None and results.option_count
            else None
        )
        if option is None or not option.id:
            preview.update("")
            return
        self.load_preview(int(option.id))

    @work(thread=True, exclusive=True, group="preview")
    def load_preview(self, note_id: int) -> None:
        kb = self.app.kb  # type: ignore[attr-defined]
        with self.app.kb_lock:  # type: ignore[attr-defined]
            row = kb.store.note_by_id(note_id)
        if row is None:
            return
        # Cheap to show: the stored plain text, not a Markdown rendering.
        content = Content.assemble(
            (one_line(row["title"]), "bold"),
            "\n",
            (one_line(row["path"]), DIM),
            "\n\n",
            strip_controls(row["text"][:1500]),
        )
        self.app.call_from_thread(self.query_one("#preview-body", Static).update, content)

    # -- actions ------------------------------------------------------------------------

    def action_focus_results(self) -> None:
        self.query_one("#results", ResultList).focus()

    def action_clear(self) -> None:
        self.query_one("#query", Input).value = ""
        self.query_one("#query", Input).focus()

    @on(Input.Submitted, "#query")
    def open_first(self) -> None:
        results = self.query_one("#results", ResultList)
        option = (
            results.get_option_at_index(results.highlighted or 0) if results.option_count else None
        )
        if option is not None and option.id:
            self.post_message(OpenNote(int(option.id)))

    def action_toggle_tags(self) -> None:
        tree = self.query_one("#tags", TagTree)
        tree.display = not tree.display
        if tree.display:
            tree.focus()
            self.load_tags()

    @work(thread=True, exclusive=True, group="tags")
    def load_tags(self) -> None:
        # In a worker: the lock may be held by a long ingest, and the UI must not wait.
        try:
            with self.app.kb_lock:  # type: ignore[attr-defined]
                tags = self.app.kb.tag_tree()  # type: ignore[attr-defined]
        except (KbError, sqlite3.DatabaseError) as exc:
            self.app.call_from_thread(self.notify, plain(str(exc)), severity="error")
            return
        self.app.call_from_thread(self.query_one("#tags", TagTree).show_tags, tags)

    @on(FilterByTag)
    def filter_by_tag(self, message: FilterByTag) -> None:
        self.tag = message.tag
        self.query_one("#query", Input).focus()
        self.refresh_results()

    def action_new_note(self) -> None:
        self.app.action_new_note(self.query_one("#query", Input).value.strip())  # type: ignore[attr-defined]

    def action_reindex(self) -> None:
        self.app.action_reindex()  # type: ignore[attr-defined]

    def on_notes_changed(self, _: NotesChanged) -> None:
        self.refresh_results()


def _quoted(tag: str) -> str:
    return '"' + tag.replace('"', "") + '"'  # always: tags may hold spaces or parentheses


class NoteScreen(Screen[None]):
    """One note, rendered, with everything it connects to beside it."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Search", id="search"),
        Binding("alt+left,backspace", "back", "Back", id="back"),
        Binding("alt+right", "forward", "Forward", id="forward"),
        Binding("ctrl+e", "edit", "Edit", id="edit"),
        Binding("ctrl+l", "focus_links", "Links", id="links"),
        Binding("ctrl+o", "toggle_outline", "Outline", id="outline"),
        Binding("ctrl+b", "focus_connections", "Connections", id="connections"),
        Binding("left_square_bracket", "series(-1)", "Prev in series", id="prev"),
        Binding("right_square_bracket", "series(1)", "Next in series", id="next"),
        Binding("ctrl+y", "copy_link", "Copy URL", id="copy"),
    ]

    def __init__(self) -> None:
        super().__init__(id="note")
        self.history = History()
        self.page: NotePage | None = None
        self.series_order: list[int] = []
        self.titles: dict[int, str] = {}
        self.mounted = asyncio.Event()  # a note can arrive before the screen is built

    def on_mount(self) -> None:
        self.mounted.set()

    def compose(self) -> ComposeResult:
        yield Static(id="breadcrumb")
        with Horizontal(id="reader"):
            yield OptionList(id="outline")
            with VerticalScroll(id="document"):
                yield Markdown(id="doc", open_links=False, parser_factory=markdown_parser)
            with TabbedContent(id="side"):
                with TabPane("Links", id="tab-links"):
                    yield LinkList(id="links")
                with TabPane("Backlinks", id="tab-backlinks"):
                    yield ConnectionList(id="backlinks")
                with TabPane("Mentions", id="tab-mentions"):
                    yield ConnectionList(id="mentions")
                with TabPane("Related", id="tab-related"):
                    yield ConnectionList(id="related")
                with TabPane("Series", id="tab-series"):
                    yield ConnectionList(id="series")
        yield Footer()

    def on_resize(self) -> None:
        self.set_class(self.size.width < WIDE, "-narrow")

    # -- showing a note -------------------------------------------------------------------

    def show(self, note_id: int, anchor: str = "", remember: bool = True) -> None:
        if remember:
            self.history.visit(note_id)
        self.load(note_id, anchor)

    @work(thread=True, exclusive=True, group="note")
    def load(self, note_id: int, anchor: str) -> None:
        worker = get_current_worker()
        kb = self.app.kb  # type: ignore[attr-defined]
        try:
            with self.app.kb_lock:  # type: ignore[attr-defined]
                page = kb.note_page(note_id)
                series = kb.series(note_id)
                titles = kb.store.titles(self.history.trail())
        except (KbError, sqlite3.DatabaseError) as exc:
            # Told after the lock is released: the UI thread may be waiting for it.
            self.app.call_from_thread(self.notify, plain(str(exc)), severity="error")
            return
        if worker.is_cancelled:
            return
        self.app.call_from_thread(self.show_page, page, series, titles, anchor)
        self.load_connections(note_id)

    async def show_page(
        self, page: NotePage, series: list, titles: dict[int, str], anchor: str
    ) -> None:
        await self.mounted.wait()
        reloading = self.page is not None and self.page.id == page.id and not anchor
        self.page = page
        self.titles = titles
        self._show_breadcrumb()
        outline = self.query_one("#outline", OptionList)
        outline.clear_options()
        outline.add_options(
            Option(Content("  " * (level - 1) + one_line(text))) for level, text, _ in page.headings
        )
        self.query_one("#links", LinkList).show_links(page.links)
        series_list = self.query_one("#series", ConnectionList)
        self.series_order = [n.id for _, notes in series[:1] for n in notes]
        series_list.show_series(series[0][1] if series else [], page.id)
        document = self.query_one("#doc", Markdown)
        scroller = self.query_one("#document", VerticalScroll)
        kept = scroller.scroll_y if reloading else 0  # a refresh keeps the reader's place
        scroller.scroll_home(animate=False)
        pieces = split_for_display(page.markdown)
        # The first piece at once, the rest after the screen has been drawn: a long note
        # is readable at the top while its end is still being laid out.
        await document.update(pieces[0])
        # An anchor whose heading is in a later piece waits for that piece.
        pending = anchor if anchor and not self.goto_anchor(anchor) else ""
        for piece in pieces[1:]:
            if self.page is not page:
                return
            await document.append("\n\n" + piece)
            if pending and self.goto_anchor(pending):
                pending = ""
        if kept:
            scroller.scroll_to(y=kept, animate=False)
        elif anchor and len(pieces) > 1:
            # Once the whole note is laid out, jump again: pieces appended after the
            # heading moved nothing above it, but the first jump may have come too early.
            self.set_timer(0.1, lambda: self.goto_anchor(anchor))

    def _show_breadcrumb(self) -> None:
        trail = [one_line(self.titles.get(i, "?")) for i in self.history.trail()]
        back = "◀ " if self.history.can_go_back else ""
        forward = " ▶" if self.history.can_go_forward else ""
        line = Content.assemble(
            back,
            (" › ".join(trail[:-1]) + (" › " if trail[:-1] else ""), DIM),
            (trail[-1] if trail else "", "bold"),
            forward,
        )
        self.query_one("#breadcrumb", Static).update(line)

    @work(thread=True, exclusive=True, group="connections")
    def load_connections(self, note_id: int) -> None:
        worker = get_current_worker()
        kb = self.app.kb  # type: ignore[attr-defined]
        try:
            with self.app.kb_lock:  # type: ignore[attr-defined]
                connections = kb.connections(kb.note_ref(note_id))
        except (KbError, sqlite3.DatabaseError):
            return  # the note went away meanwhile: its page says so already, or will

        if not worker.is_cancelled:
            self.app.call_from_thread(self.show_connections, connections)

    def show_connections(self, connections: Connections) -> None:
        self.query_one("#backlinks", ConnectionList).show_backlinks(connections.backlinks)
        self.query_one("#mentions", ConnectionList).show_mentions(connections.mentions)
        self.query_one("#related", ConnectionList).show_related(connections.related)
        tabs = self.query_one("#side", TabbedContent)
        for pane, count in (
            ("tab-links", len(self.page.links) if self.page else 0),
            ("tab-backlinks", len(connections.backlinks)),
            ("tab-mentions", len(connections.mentions)),
            ("tab-related", len(connections.related)),
        ):
            label = pane.removeprefix("tab-").capitalize()
            tabs.get_tab(pane).label = Content(f"{label} {count}")

    def goto_anchor(self, anchor: str) -> bool:
        """Scroll to the heading an anchor names, by kb's own slugs (Chinese kept).
        False while that heading is not on screen yet (a later piece of a long note)."""
        from urllib.parse import unquote

        from kb.text import slugify

        if self.page is None:
            return False
        wanted = {unquote(anchor).casefold(), slugify(unquote(anchor))}
        for index, (_, _, slug) in enumerate(self.page.headings):
            if slug.casefold() in wanted:
                return self.scroll_to_heading(index)
        return True  # no such heading: nothing to wait for

    def scroll_to_heading(self, index: int) -> bool:
        from textual.widgets._markdown import MarkdownHeader

        headers = list(self.query_one("#doc", Markdown).query(MarkdownHeader))
        if index >= len(headers):
            return False
        scroller = self.query_one("#document", VerticalScroll)
        # After the next refresh: a heading just appended has no place on screen yet.
        self.call_after_refresh(scroller.scroll_to_widget, headers[index], top=True, animate=False)
        return True

    @on(OptionList.OptionSelected, "#outline")
    def jump_to_heading(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.scroll_to_heading(event.option_index)

    # -- following links --------------------------------------------------------------------

    @on(Markdown.LinkClicked)
    def link_clicked(self, event: Markdown.LinkClicked) -> None:
        event.stop()
        self.post_message(FollowLink(event.href))

    @on(FollowLink)
    def follow(self, message: FollowLink) -> None:
        if self.page is not None:
            self.resolve_link(self.page.id, message.href)

    @work(thread=True, exclusive=True, group="follow")
    def resolve_link(self, note_id: int, href: str) -> None:
        try:
            with self.app.kb_lock:  # type: ignore[attr-defined]
                where = self.app.kb.follow(note_id, href)  # type: ignore[attr-defined]
        except (KbError, sqlite3.DatabaseError) as exc:
            self.app.call_from_thread(self.notify, plain(str(exc)), severity="error")
            return
        self.app.call_from_thread(self.go, where)

    def go(self, where: Follow) -> None:
        if where.kind == "note" and where.note_id is not None:
            self.show(where.note_id, where.anchor)
        elif where.kind == "anchor":
            self.goto_anchor(where.anchor)
        elif where.kind == "external":
            self.app.copy_to_clipboard(where.url)
            self.notify(plain(f"External link (not opened), copied: {where.url}"))
        else:
            self.notify(plain(f"Unresolved link: {where.target}"), severity="warning")

    @on(OpenNote)
    def open_note(self, message: OpenNote) -> None:
        message.stop()
        self.show(message.note_id, message.anchor)

    # -- actions ------------------------------------------------------------------------

    def action_back(self) -> None:
        if self.history.can_go_back:
            self.show(self.history.back() or 0, remember=False)

    def action_forward(self) -> None:
        if self.history.can_go_forward:
            self.show(self.history.forward() or 0, remember=False)

    def action_series(self, step: int) -> None:
        if self.page is None or self.page.id not in self.series_order:
            self.notify("This note is in no series")
            return
        index = self.series_order.index(self.page.id) + step
        if 0 <= index < len(self.series_order):
            self.show(self.series_order[index])

    def action_edit(self) -> None:
        if self.page is not None:
            self.app.action_edit(self.page.file)  # type: ignore[attr-defined]

    def action_focus_links(self) -> None:
        self.query_one("#side", TabbedContent).active = "tab-links"
        self.query_one("#links", LinkList).focus()

    def action_focus_connections(self) -> None:
        """Backlinks first; pressed again, the next list (mentions, related, series, links)."""
        tabs = self.query_one("#side", TabbedContent)
        order = ["tab-backlinks", "tab-mentions", "tab-related", "tab-series", "tab-links"]
        inside = self.focused is not None and tabs in self.focused.ancestors
        if inside and tabs.active in order:
            tabs.active = order[(order.index(tabs.active) + 1) % len(order)]
        else:
            tabs.active = order[0]
        tabs.query_one(f"#{tabs.active} OptionList", OptionList).focus()

    def action_toggle_outline(self) -> None:
        outline = self.query_one("#outline", OptionList)
        outline.display = not outline.display
        if outline.display:
            outline.focus()

    def action_copy_link(self) -> None:
        links = self.query_one("#links", LinkList)
        if links.highlighted is None or not getattr(links, "links", None):
            return
        link = links.links[links.highlighted]
        self.app.copy_to_clipboard(link.url or link.target)
        self.notify(plain(f"Copied {link.url or link.target}"))

    def on_notes_changed(self, _: NotesChanged) -> None:
        if self.page is not None:
            self.show(self.page.id, remember=False)


class TitleDialog(ModalScreen[str]):
    """Ask for the title of a new note."""

    BINDINGS = [Binding("escape", "dismiss('')", "Cancel", id="cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Title of the new note")
            yield Input(id="title")

    @on(Input.Submitted, "#title")
    def submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())
