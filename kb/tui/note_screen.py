"""The note screen: one note rendered, with its outline, its links, backlinks, mentions,
related notes and series beside it. Core calls run in thread workers, never on the UI thread."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, cast
from urllib.parse import unquote

from textual import getters, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Markdown, OptionList, Static, TabbedContent, TabPane
from textual.widgets._markdown import MarkdownHeader
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from kb.errors import KbError
from kb.links.connections import Connections
from kb.notes.browse import Follow, History, split_for_display
from kb.notes.latex import render_math
from kb.notes.views import NotePage, NoteSummary
from kb.text import one_line, slugify, strip_controls
from kb.tui.hanging import Hanging, Prefix
from kb.tui.images import IMAGE_LINK, image_file, is_remote, note_images
from kb.tui.messages import FollowLink, ListTerm, NotesChanged, OpenNote
from kb.tui.reader import Flow, Reader
from kb.tui.widgets import ConnectionList, Finder, LinkList, breadcrumb, markdown_parser

if TYPE_CHECKING:
    from kb.tui.app import KbApp

SIDE_BESIDE = 120  # columns from which the connections sit beside the note, not below it
OUTLINE_BESIDE = 150  # columns from which the outline shows by itself (text keeps 80+)
OUTLINE_HEADINGS = 3  # fewer headings need no outline

# Each series the note is in, with its notes in date order (KnowledgeBase.series).
Series = list[tuple[str, list[NoteSummary]]]


class NoteScreen(Screen[None]):
    """One note, rendered, with everything it connects to beside it."""

    BINDINGS = [
        Binding(
            "escape",
            "escape",
            "Search",
            id="search",
            tooltip="close the find bar or leave a list beside the note, else back to the search",
        ),
        Binding(
            "slash,ctrl+f",
            "find",
            "Find",
            id="find",
            tooltip="find in the note (Chinese too): enter goes to the first match",
        ),
        Binding(
            "n", "find_next(1)", "Next match", show=False, id="find-next", tooltip="next match"
        ),
        Binding(
            "N",
            "find_next(-1)",
            "Previous match",
            show=False,
            id="find-previous",
            tooltip="previous match",
        ),
        Binding("j", "read('down')", show=False, id="line-down", tooltip="down a line"),
        Binding("k", "read('up')", show=False, id="line-up", tooltip="up a line"),
        Binding("space,f", "read('page_down')", show=False, id="page-down", tooltip="down a page"),
        Binding("b", "read('page_up')", show=False, id="page-up", tooltip="up a page"),
        Binding("g", "read('home')", show=False, id="top", tooltip="to the top"),
        Binding("G", "read('end')", show=False, id="bottom", tooltip="to the end"),
        Binding(
            "alt+left,backspace",
            "back",
            "Back",
            id="back",
            tooltip="back through the notes you visited",
        ),
        Binding(
            "alt+right", "forward", "Forward", id="forward", show=False, tooltip="forward again"
        ),
        Binding(
            "ctrl+e",
            "edit",
            "Edit",
            id="edit",
            tooltip="edit in $VISUAL/$EDITOR, then re-index and show the change",
        ),
        Binding(
            "ctrl+l",
            "focus_links",
            "Links",
            id="links",
            show=False,
            tooltip="the note's links: arrows to choose, enter to follow",
        ),
        Binding(
            "ctrl+o",
            "toggle_outline",
            "Outline",
            id="outline",
            show=False,
            tooltip="show or hide the outline; enter on a heading jumps there",
        ),
        Binding(
            "ctrl+b",
            "focus_connections",
            "Backlinks",
            id="connections",
            tooltip="backlinks; again for mentions, related, series, links",
        ),
        Binding(
            "ctrl+k",
            "toggle_side",
            "Panel",
            id="side",
            show=False,
            tooltip="show or hide the connections panel",
        ),
        Binding(
            "left_square_bracket",
            "series(-1)",
            "Prev in series",
            id="prev",
            show=False,
            tooltip="previous note in the note's series",
        ),
        Binding(
            "right_square_bracket",
            "series(1)",
            "Next in series",
            id="next",
            show=False,
            tooltip="next note in the note's series",
        ),
        Binding(
            "ctrl+y",
            "copy_link",
            "Copy URL",
            id="copy",
            show=False,
            tooltip="copy the highlighted link's URL or target",
        ),
    ]

    if TYPE_CHECKING:  # the app owns the screens: they name its type, never import it
        app = getters.app(KbApp)
    breadcrumb = getters.query_one("#breadcrumb", Static)
    outline = getters.query_one("#outline", OptionList)
    document = getters.query_one("#doc", Reader)
    scroller = getters.query_one("#document", VerticalScroll)
    side = getters.query_one("#side", TabbedContent)
    links = getters.query_one("#links", LinkList)

    def __init__(self) -> None:
        super().__init__(id="note")
        self.history = History()
        self.page: NotePage | None = None
        self.shown = ""  # the Markdown on screen: the page's, formulas as Unicode
        self.series_order: list[int] = []
        self.titles: dict[int, str] = {}
        self.mounted = asyncio.Event()  # a note can arrive before the screen is built
        self.wide = False
        self.outline_wanted: bool | None = None  # None: as the note and the window suit
        self.side_wanted: bool | None = None
        self.finder = Finder()

    def on_mount(self) -> None:
        self.query_one("#find-bar").display = False
        self.mounted.set()

    def compose(self) -> ComposeResult:
        with Horizontal(id="find-bar"):
            yield Input(placeholder="Find in the note", id="find")
            yield Static(id="find-count")
        yield Static(id="breadcrumb")
        with Horizontal(id="reader"):
            yield OptionList(id="outline")
            with VerticalScroll(id="document"):
                yield Reader(id="doc", open_links=False, parser_factory=markdown_parser)
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
        yield Footer(show_command_palette=False)  # ctrl+p: in the help (F1)

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Lay the screen out for the terminal's width (the app's: a screen not yet shown
        may not have been sized)."""
        width = self.app.size.width
        self.set_class(width < SIDE_BESIDE, "-narrow")
        self.wide = width >= OUTLINE_BESIDE
        self._show_outline()
        self._show_side()
        self._show_breadcrumb()

    def _show_side(self) -> None:
        """The connections show beside the note on wide windows; below it on narrow ones
        only when asked for (ctrl+k, ctrl+b, ctrl+l), so the note keeps the screen."""
        wanted = self.side_wanted
        self.side.display = not self.has_class("-narrow") if wanted is None else wanted

    def _show_outline(self) -> None:
        """The outline shows when the user asked for it (ctrl+o), else when the note has
        enough headings to need one and the window has room for it beside the text."""
        headings = len(self.page.headings) if self.page else 0
        wanted = self.outline_wanted
        if wanted is None:
            wanted = self.wide and headings >= OUTLINE_HEADINGS
        self.outline.display = wanted

    # -- showing a note -------------------------------------------------------------------

    def show(self, note_id: int, anchor: str = "", remember: bool = True) -> None:
        if remember:
            self.history.visit(note_id)
        self.load(note_id, anchor)

    @work(thread=True, exclusive=True, group="note")
    def load(self, note_id: int, anchor: str) -> None:
        worker = get_current_worker()
        kb = self.app.kb
        try:
            page = kb.note_page(note_id)
            series = kb.series(note_id)
            titles = kb.titles(self.history.trail())
        except KbError as exc:
            self._tell_error(exc)
            return
        shown = render_math(page.markdown)  # here, off the UI thread: ~1 ms a formula
        images = note_images(page.markdown)
        if worker.is_cancelled:
            return
        # call_from_thread awaits the coroutine; mypy cannot infer its type (Never).
        show_page = cast("Callable[..., Awaitable[None] | None]", self.show_page)
        self.app.call_from_thread(show_page, page, shown, images, series, titles, anchor)

    async def show_page(
        self,
        page: NotePage,
        shown: str,
        images: list[tuple[str, str]],
        series: Series,
        titles: dict[int, str],
        anchor: str,
    ) -> None:
        """Show ``page``, whose Markdown is ``shown`` (with its formulas as Unicode) and
        whose images are ``images`` (alt, src)."""
        await self.mounted.wait()
        reloading = self.page is not None and self.page.id == page.id and not anchor
        self.page = page
        self.shown = shown
        self.finder.forget()
        focused = self.focused  # a list the user is working through keeps the focus
        if focused is None or not any(
            panel in focused.ancestors_with_self for panel in (self.side, self.outline)
        ):
            self.scroller.focus()
        self.titles = titles
        self._fit()
        self.outline.clear_options()
        self.outline.add_options(  # a long heading wraps under itself, not at column 0
            Option(Hanging(None, [Prefix(indent, indent)], [Content(one_line(text))]))
            for level, text, _ in page.headings
            for indent in [Content("  " * (level - 1))]
        )
        self._show_outline()
        self.links.show_links(page.links, images)
        series_list = self.query_one("#series", ConnectionList)
        self.series_order = [n.id for _, notes in series[:1] for n in notes]
        series_list.show_series(series[0][1] if series else [], page.id)
        document = self.document
        scroller = self.scroller
        kept = scroller.scroll_y if reloading else 0  # a refresh keeps the reader's place
        scroller.scroll_home(animate=False)
        first, *rest = split_for_display(shown)
        # The first piece at once, the rest in one go after the screen has been drawn: a
        # long note is readable at the top while its end is still being laid out. (One
        # append, not one a piece: each lays the whole screen out again.)
        await document.update(first)
        # Now, not before (its thread would slow the first part down), nor after the rest.
        self.load_connections(page.id)
        # An anchor whose heading is in the rest waits for it.
        pending = anchor if anchor and not self.goto_anchor(anchor) else ""
        if rest:
            if self.page is not page:
                return
            await document.add_rest("\n".join(rest))
            if pending:
                self.goto_anchor(pending)
        if kept:
            scroller.scroll_to(y=kept, animate=False)
        elif anchor and rest:
            # Once the whole note is laid out, jump again: pieces appended after the
            # heading moved nothing above it, but the first jump may have come too early.
            self.set_timer(0.1, lambda: self.goto_anchor(anchor))

    def _show_breadcrumb(self) -> None:
        if self.page is None:
            return
        trail = [self.titles.get(i, "?") for i in self.history.trail()[:-1]]
        width = (self.breadcrumb.content_size.width or self.size.width - 2) or 80
        line = breadcrumb(
            trail,
            self.page.title,
            width,
            self.history.can_go_back,
            self.history.can_go_forward,
        )
        self.breadcrumb.update(line)

    @work(thread=True, exclusive=True, group="connections")
    def load_connections(self, note_id: int) -> None:
        worker = get_current_worker()
        kb = self.app.kb
        try:
            connections = kb.links.connections(kb.note_ref(note_id))
        except KbError:
            return  # the note went away meanwhile: its page says so already, or will

        if not worker.is_cancelled:
            self.app.call_from_thread(self.show_connections, connections)

    def show_connections(self, connections: Connections) -> None:
        self.query_one("#backlinks", ConnectionList).show_backlinks(connections.backlinks)
        self.query_one("#mentions", ConnectionList).show_mentions(connections.mentions)
        self.query_one("#related", ConnectionList).show_related(connections.related)
        tabs = self.side
        counts = {
            "tab-links": len(self.links.links) + len(self.links.images),
            "tab-backlinks": len(connections.backlinks),
            "tab-mentions": len(connections.mentions),
            "tab-related": len(connections.related),
            "tab-series": len(self.series_order),
        }
        for pane, count in counts.items():
            label = pane.removeprefix("tab-").capitalize()
            tabs.get_tab(pane).label = Content(f"{label} {count}")
        if not counts.get(tabs.active):  # never open on an empty tab while another has entries
            tabs.active = next((pane for pane, count in counts.items() if count), tabs.active)

    def goto_anchor(self, anchor: str) -> bool:
        """Scroll to the heading an anchor names, by kb's own slugs (Chinese kept).
        False while that heading is not on screen yet (a later piece of a long note)."""
        if self.page is None:
            return False
        wanted = {unquote(anchor).casefold(), slugify(unquote(anchor))}
        for index, (_, _, slug) in enumerate(self.page.headings):
            if slug.casefold() in wanted:
                return self.scroll_to_heading(index)
        return True  # no such heading: nothing to wait for

    def scroll_to_heading(self, index: int) -> bool:
        headers = list(self.document.query(MarkdownHeader))
        if index >= len(headers):
            return False
        scroller = self.scroller
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
        if self.page is None:
            return
        if message.href.startswith(IMAGE_LINK):  # an image's placeholder: open it
            self.open_image(message.href.removeprefix(IMAGE_LINK))
        else:
            self.resolve_link(self.page.id, message.href)

    def open_image(self, src: str) -> None:
        """Open an image of the note with the system's viewer; a remote one is not opened
        (its URL is copied), a missing file is named."""
        if self.page is None:
            return
        if is_remote(src):
            self.app.copy_to_clipboard(src)
            self.notify(strip_controls(f"Remote image (not opened), copied: {src}"), markup=False)
        elif (file := image_file(self.page.file, src)) is None:
            self.notify(strip_controls(f"Image not found: {src}"), severity="warning", markup=False)
        else:
            self.app.open_file(file)

    @work(thread=True, exclusive=True, group="follow")
    def resolve_link(self, note_id: int, href: str) -> None:
        try:
            where = self.app.kb.follow(note_id, href)
        except KbError as exc:
            self._tell_error(exc)
            return
        self.app.call_from_thread(self.go, where)

    def go(self, where: Follow) -> None:
        if where.kind == "note" and where.note_id is not None:
            self.show(where.note_id, where.anchor)
        elif where.kind == "anchor":
            self.goto_anchor(where.anchor)
        elif where.kind in ("tag", "category"):  # a site's list page: kb's own list
            self.post_message(ListTerm(where.kind, where.target))
        elif where.kind == "external":
            self.app.copy_to_clipboard(where.url)
            self.notify(
                strip_controls(f"External link (not opened), copied: {where.url}"), markup=False
            )
        else:
            self.notify(
                strip_controls(f"Unresolved link: {where.target}"),
                severity="warning",
                markup=False,
            )

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
            self.app.action_edit(self.page.file)

    def action_focus_links(self) -> None:
        self.side_wanted = True
        self._show_side()
        self.side.active = "tab-links"
        self.links.focus()

    def action_focus_connections(self) -> None:
        """Backlinks first; pressed again, the next list (mentions, related, series, links)."""
        tabs = self.side
        self.side_wanted = True
        self._show_side()
        order = ["tab-backlinks", "tab-mentions", "tab-related", "tab-series", "tab-links"]
        inside = self.focused is not None and tabs in self.focused.ancestors
        if inside and tabs.active in order:
            tabs.active = order[(order.index(tabs.active) + 1) % len(order)]
        else:
            tabs.active = order[0]
        tabs.query_one(f"#{tabs.active} OptionList", OptionList).focus()

    def action_toggle_outline(self) -> None:
        self.outline_wanted = not self.outline.display
        self._show_outline()
        if self.outline.display:
            self.outline.focus()

    def action_toggle_side(self) -> None:
        side = self.side
        self.side_wanted = not side.display
        self._show_side()
        if not side.display and self.focused is not None and side in self.focused.ancestors:
            self.scroller.focus()

    # -- reading: keys readers of less and vim expect, and find in the note --------------

    def action_read(self, where: str) -> None:
        scroller = self.scroller
        moves = {
            "down": scroller.scroll_down,
            "up": scroller.scroll_up,
            "page_down": scroller.scroll_page_down,
            "page_up": scroller.scroll_page_up,
            "home": scroller.scroll_home,
            "end": scroller.scroll_end,
        }
        moves[where](animate=False)

    def action_escape(self) -> None:
        """One step back towards the search: out of the find bar or a list beside the note
        (links, connections, outline) to the note; from the note, to the search."""
        bar = self.query_one("#find-bar")
        focused = self.focused
        if bar.display:
            bar.display = False
            self.finder.forget()
            self.scroller.focus()
        elif focused is not None and any(
            panel in focused.ancestors_with_self for panel in (self.side, self.outline)
        ):
            if self.has_class("-narrow") and self.side_wanted:
                self.side_wanted = None  # opened by ctrl+l or ctrl+b over the note: closed
                self._show_side()
            self.scroller.focus()
        else:
            self.app.pop_screen()

    def action_find(self) -> None:
        self.query_one("#find-bar").display = True
        self.query_one("#find", Input).focus()

    @on(Input.Changed, "#find")
    def find_as_you_type(self, event: Input.Changed) -> None:
        event.stop()
        self.finder.find(self.document, event.value)
        self._show_match(self.finder.step(0))

    @on(Input.Submitted, "#find")
    def find_first(self, event: Input.Submitted) -> None:
        event.stop()
        self.scroller.focus()  # now n and N step through the matches
        self._show_match(self.finder.step(0))

    def action_find_next(self, step: int) -> None:
        self._show_match(self.finder.step(step))

    def _show_match(self, widget: Widget | None) -> None:
        count = self.query_one("#find-count", Static)
        finder = self.finder
        if not finder.needle:
            count.update("")
        elif widget is None:
            count.update(Content.assemble(("no match", "$error")))
        else:
            count.update(Content(f"{finder.index + 1}/{len(finder.matches)}  n/N"))
            self._center_match(widget, finder.matches[finder.index][2])

    def _center_match(self, widget: Widget, offset: int) -> None:
        """Scroll the match mid-screen: in a flow (paragraphs and lists, a child of the
        document, maybe taller than the screen) its row, else its widget."""
        scroller = self.scroller
        if not isinstance(widget, Flow):
            scroller.scroll_to_center(widget, animate=False)
            return
        y = self.document.virtual_region.y + widget.virtual_region.y + widget.row_of(offset)
        scroller.scroll_to(y=max(0, y - scroller.content_region.height // 2), animate=False)

    def action_copy_link(self) -> None:
        target = self.links.highlighted_target()
        if target:
            self.app.copy_to_clipboard(target)
            self.notify(strip_controls(f"Copied {target}"), markup=False)

    def on_notes_changed(self, _: NotesChanged) -> None:
        if self.page is not None:
            self.show(self.page.id, remember=False)

    def _tell_error(self, error: KbError) -> None:
        """From a worker: show a core error (it may quote note text, never markup)."""
        self.app.call_from_thread(
            self.notify, strip_controls(str(error)), severity="error", markup=False
        )
