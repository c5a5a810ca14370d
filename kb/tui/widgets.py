"""Widgets that show core data as plain text (never markup) and post what the user wants."""

from __future__ import annotations

from rich.text import Text
from textual.content import Content
from textual.widgets import OptionList, Tree
from textual.widgets.option_list import Option

from kb.browse import NoteSummary, PageLink, TagNode
from kb.connections import Backlink, Mention, Related
from kb.search import SearchHit
from kb.tui.messages import FilterByTag, FollowLink, OpenNote

HIGHLIGHT = "bold $accent"
DIM = "dim"


def highlighted(text: str, spans: list[tuple[int, int]], style: str = "") -> Content:
    """Note text as Content, with matches styled: the text is never parsed as markup."""
    content = Content(text)
    if style:
        content = content.stylize(style)
    for start, end in spans:
        content = content.stylize(HIGHLIGHT, start, end)
    return content


def note_line(title: str, path: str, date: str | None, tags: list[str]) -> Content:
    meta = "  ".join(
        part for part in ((date or "")[:10], path, " ".join(f"#{t}" for t in tags)) if part
    )
    return Content.assemble((title, "bold"), "\n", (meta, DIM))


class ResultList(OptionList):
    """Search results, or the newest notes when the search box is empty."""

    def show_hits(self, hits: list[SearchHit]) -> None:
        self.clear_options()
        self.add_options(
            Option(
                Content.assemble(
                    highlighted(hit.title, hit.title_highlights, "bold"),
                    "\n",
                    (_meta(hit.date, hit.path, hit.tags), DIM),
                    "\n",
                    highlighted(hit.snippet, hit.highlights),
                ),
                id=str(hit.note_id),
            )
            for hit in hits
        )
        if hits:
            self.highlighted = 0

    def show_notes(self, notes: list[NoteSummary]) -> None:
        self.clear_options()
        self.add_options(
            Option(note_line(n.title, n.path, n.date, n.tags), id=str(n.id)) for n in notes
        )
        if notes:
            self.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id:
            self.post_message(OpenNote(int(event.option.id)))


def _meta(date: str | None, path: str, tags: list[str]) -> str:
    return "  ".join(p for p in ((date or "")[:10], path, " ".join(f"#{t}" for t in tags)) if p)


class TagTree(Tree[str]):
    """Hierarchical tags with counts; choosing one filters the results."""

    def show_tags(self, nodes: list[TagNode]) -> None:
        self.clear()
        self.root.set_label(Text("All notes"))
        self.root.data = ""
        for node in nodes:
            self._add(self.root, node)
        self.root.expand()

    def _add(self, parent, node: TagNode) -> None:
        label = Text.assemble(node.name, (f"  {node.count}", "dim"))
        if node.children:
            branch = parent.add(label, data=node.tag)
            for child in node.children:
                self._add(branch, child)
        else:
            parent.add_leaf(label, data=node.tag)

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        event.stop()
        self.post_message(FilterByTag(event.node.data or None))


class LinkList(OptionList):
    """The links of the open note, selectable from the keyboard."""

    def show_links(self, links: list[PageLink]) -> None:
        self.links = links
        self.clear_options()
        for index, link in enumerate(links):
            label = f"{link.rel}: " if link.rel else ""
            if link.url:
                line = Content.assemble((f"{label}{link.text}", ""), "\n", (f"↗ {link.url}", DIM))
            elif link.note_id is not None:
                flag = {"missing-heading": "  (no such heading)", "ambiguous": "  (ambiguous)"}.get(
                    link.status, ""
                )
                line = Content.assemble(
                    (f"{label}{link.note_title}", "bold"),
                    (flag, "$warning"),
                    "\n",
                    (f"→ {link.target}  :{link.line}", DIM),
                )
            elif link.status == "attachment":
                line = Content.assemble(
                    (f"{label}{link.text}", ""), "\n", (f"attachment {link.target}", DIM)
                )
            else:
                line = Content.assemble(
                    (f"{label}{link.text}", "$error"),
                    "\n",
                    (f"unresolved: {link.target}  :{link.line}", DIM),
                )
            self.add_option(Option(line, id=str(index)))
        if links:
            self.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        link = self.links[int(event.option.id or 0)]
        if link.note_id is not None:
            anchor = link.target.partition("#")[2]
            self.post_message(OpenNote(link.note_id, anchor))
        else:
            self.post_message(FollowLink(link.url or link.target))


class ConnectionList(OptionList):
    """Backlinks, mentions, related notes or a series: each entry opens a note."""

    def show_backlinks(self, backlinks: list[Backlink]) -> None:
        self._show(
            [
                (
                    b.id,
                    Content.assemble(
                        ((f"{b.rel}: " if b.rel else "") + b.title, "bold"),
                        "\n",
                        (f"{b.path}:{b.line}", DIM),
                    ),
                )
                for b in backlinks
            ]
        )

    def show_mentions(self, mentions: list[Mention]) -> None:
        self._show(
            [
                (
                    m.id,
                    Content.assemble(
                        (m.title, "bold"), "\n", (f"{m.path}:{m.line or ''}  “{m.context}”", DIM)
                    ),
                )
                for m in mentions
            ]
        )

    def show_related(self, related: list[Related]) -> None:
        self._show(
            [(r.id, Content.assemble((r.title, "bold"), "\n", (r.reason, DIM))) for r in related]
        )

    def show_series(self, notes: list[NoteSummary], current: int) -> None:
        self._show(
            [
                (
                    n.id,
                    Content.assemble(
                        ("▶ " if n.id == current else "  ", "bold"),
                        (n.title, "bold" if n.id == current else ""),
                        ("  " + (n.date or "")[:10], DIM),
                    ),
                )
                for n in notes
            ]
        )
        for index, note in enumerate(notes):
            if note.id == current:
                self.highlighted = index

    def _show(self, entries: list[tuple[int | None, Content]]) -> None:
        # A note can appear several times (one backlink per line): ids go in a list,
        # not in option ids, which must be unique.
        self.note_ids = [note_id for note_id, _ in entries]
        self.clear_options()
        self.add_options(Option(line) for _, line in entries)
        if entries:
            self.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        note_id = self.note_ids[event.option_index]
        if note_id is not None:
            self.post_message(OpenNote(note_id))
