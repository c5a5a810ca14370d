"""What the editor server (``kb lsp``) asks the knowledge base, answered over its store.

The open note (unsaved text) resolved and checked as ingest and ``kb check`` would,
names for completion, a note's card and headings, its backlinks placed in their files.
The facade keeps one-line methods over one ``EditorAnswers``; the values it keeps (the
names folded for completion, kb check's suggestions, a link index per thread) last until
the store changes, the titles' pinyin for good (a title's pinyin never changes).
"""

from __future__ import annotations

import posixpath
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast
from urllib.parse import unquote

from kb.errors import UsageError
from kb.names.resolve import fold
from kb.notes.buffer import (
    Buffer,
    BufferProblem,
    LinkPlace,
    NoteCard,
    backlink_places,
    buffer_problems,
    file_place,
    normalise,
    note_card,
    parse_buffer,
    parse_text,
    read_buffer,
)
from kb.notes.editor import (
    anchor_extent,
    anchor_names_heading,
    heading_at,
    heading_text_extent,
    own_anchor_extents,
    placed_links,
    renamed_anchor,
)

if TYPE_CHECKING:
    from kb.config import Config
    from kb.links.check import Suggestions
    from kb.links.moving import MovePlan
    from kb.models import ParsedNote
    from kb.names.resolve import LinkIndex, NoteName
    from kb.notes.editor import NameKeys, PlacedLink, RankedNote
    from kb.notes.name_index import NameIndex, PinyinSpeller
    from kb.notes.naming import NoteRef
    from kb.store import Store

T = TypeVar("T")
_PARSES_KEPT = 64  # texts whose parse is kept (the open notes, and a few more)
_PARSE_KEPT_UNDER = 1_000_000  # characters: a bigger buffer is parsed each time
_SPELLED_BETWEEN_PAUSES = 200  # titles the warm-up spells between letting requests go first


class EditorAnswers:
    """The editor's questions over one knowledge base, from any thread.

    ``store`` gives this thread's read-only store, ``epoch`` counts the facade's reader
    resets (a rebuilt store), ``link_index`` builds a link index over this thread's
    store, ``note_ref`` and ``note_file`` are the facade's."""

    def __init__(
        self,
        config: Config,
        store: Callable[[], Store],
        epoch: Callable[[], int],
        link_index: Callable[[], LinkIndex],
        note_ref: Callable[[int], NoteRef],
        note_file: Callable[[str, str], Path],
    ) -> None:
        self.config = config
        self._store = store
        self._epoch = epoch
        self._link_index = link_index
        self.note_ref = note_ref
        self.note_file = note_file
        self._local = threading.local()
        self._lock = threading.Lock()
        self._values: dict[tuple[str, int, int], object] = {}
        self._pinyin: dict[str, tuple[str, str]] = {}  # by title, kept across ingests
        self._folded: dict[NoteName, NameKeys] = {}  # each name's folded keys, likewise
        self._processed: dict[str, str] = {}  # names as rapidfuzz reads them, likewise
        self._speller: PinyinSpeller | None = None
        self._parsed: OrderedDict[tuple[str, str], tuple[ParsedNote, list[PlacedLink]]] = (
            OrderedDict()
        )  # the last texts parsed, newest last
        self._building: dict[str, threading.Lock] = {}  # one builder per kept value

    def file_place(self, file: Path) -> tuple[str, str] | None:
        """The (root name, path in the root) of a file in a notes root; None outside."""
        return file_place(file, {root.name: root.path for root in self.config.roots})

    def stored_note_at(self, file: Path) -> NoteRef | None:
        """The stored note whose file is ``file``; None when there is none."""
        place = self.file_place(file)
        if place is None:
            return None
        path = f"{place[0]}/{place[1]}" if self.config.prefixed else place[1]
        note_id = self._store().notes.ids_of([path]).get(path)
        return None if note_id is None else self.note_ref(note_id)

    def read_buffer(self, file: Path, text: str) -> Buffer:
        """The open note ``file`` as the editor holds it, its links resolved."""
        place = self.file_place(file)
        stored = self.stored_note_at(file) if place else None
        index = self.link_index() if place else None
        name = index.notes.get(stored.id) if index is not None and stored else None
        text = normalise(text)
        keys = self.config.typed_link_keys
        # The parse is kept by text, across store changes (only links resolve anew): an
        # ingest checks every open note again, each without parsing it.
        key = (text, place[1] if place else "note.md")
        with self._lock:
            parsed = self._parsed.get(key)
        if parsed is None:
            parsed = parse_text(text, key[1], keys)
            if len(text) <= _PARSE_KEPT_UNDER:
                with self._lock:
                    self._parsed[key] = parsed
                    while len(self._parsed) > _PARSES_KEPT:
                        self._parsed.popitem(last=False)
        else:
            with self._lock:
                self._parsed.move_to_end(key)
        return read_buffer(text, place, name, index, keys, parsed)

    def buffer_problems(self, buffer: Buffer) -> list[BufferProblem]:
        """What kb check reports for the open note, placed in its text."""
        from kb.links.check import link_problem  # deferred: 3 modules more

        store = self._store()
        suggest = self.suggestions()

        def word(row: object) -> tuple[str, str]:
            problem = link_problem(row, store, suggest)  # type: ignore[arg-type]
            return problem.kind, problem.message

        path = None
        if buffer.root is not None and buffer.rel is not None:
            path = f"{buffer.root}/{buffer.rel}" if self.config.prefixed else buffer.rel
        return buffer_problems(buffer, store, word, path)

    def complete_notes(self, typed: str, limit: int = 50) -> list[RankedNote]:
        """Notes for what was typed after ``[[`` (or ``](``), ranked by the naming rule."""
        return self.name_index().rank(typed, self._pinyin_of, limit)

    def name_index(self) -> NameIndex:
        """Every note's names indexed for completion, kept until the store changes (a
        rebuild folds again only the names that changed)."""
        from kb.notes.name_index import index_names  # deferred: 3 modules more

        return self.kept(
            "name-index", lambda: index_names(self.names(), self._folded, self._processed)
        )

    def warm(self, pause: Callable[[], None] = lambda: None) -> None:
        """Build now what completion and diagnostics need (the names, their pinyin, the
        fuzzy index, kb check's suggestions), calling ``pause`` between steps so that
        requests go first."""
        pause()
        index = self.name_index()
        # The titles spelled first, a few at a time (the longest step: a second at 10,000
        # notes), pausing in between; the index is then put together from the kept
        # spellings. The pause is never taken inside build_pinyin, which holds the lock a
        # request needing pinyin waits on.
        for number, entry in enumerate(e for e in index.entries if e.han):
            if number % _SPELLED_BETWEEN_PAUSES == 0:
                pause()
            self._pinyin_of(entry.note)
        index.build_pinyin(self._pinyin_of)
        pause()
        index.build_fuzzy()
        pause()
        index.rank("", self._pinyin_of)  # `[[` alone: the notes by path
        self.kept("stems", lambda: _stem_counts(self.names()))  # what a wikilink inserts
        pause()
        self.suggestions()  # what diagnostics of a broken link suggest

    def _pinyin_of(self, note: NoteName) -> tuple[str, str]:
        """``title_pinyin`` of the note's title (kept: a title's pinyin never changes)."""
        found = self._pinyin.get(note.title)
        if found is None:
            if self._speller is None:
                from kb.notes.name_index import PinyinSpeller  # deferred: 3 modules more

                self._speller = PinyinSpeller()
            found = self._pinyin[note.title] = self._speller(note.title)
        return found

    def names(self) -> list[NoteName]:
        """Every note's names, kept until the store changes."""
        return self.kept("names", self._store().notes.names)

    def stem_is_unique(self, note: NoteName) -> bool:

        counts = self.kept("stems", lambda: _stem_counts(self.names()))
        return counts.get(fold(note.stem), 0) <= 1

    def note_name(self, note_id: int) -> NoteName | None:
        found = self._store().notes.names([note_id])
        return found[0] if found else None

    def note_headings(self, note_id: int) -> list[tuple[int, str, str, int]]:
        """A note's headings: (level, text, slug, 1-based line)."""
        return [tuple(h) for h in self._store().notes.headings(note_id)]  # type: ignore[misc]

    def note_card(self, note_id: int) -> NoteCard:
        """What hovering a link to a note shows."""
        return note_card(self._store(), note_id, self.note_file)

    def backlink_places(self, note_id: int, open_texts: Mapping[Path, str]) -> list[LinkPlace]:
        """Every link to a note, placed by the parser's spans: in a file the editor has
        open (``open_texts``: its unsaved text by path), the links of that text that lead
        to the note; in any other file, the stored links, in the file as saved."""
        from kb.links.check import file_of  # deferred: 3 modules more

        rows = [
            row
            for row in self._store().links.backlinks(note_id)
            if file_of(self.config, row.source_path) not in open_texts
        ]
        places = backlink_places(
            rows, lambda path: file_of(self.config, path), self.config.typed_link_keys
        )
        for file, text in open_texts.items():
            buffer = self.open_buffer(file, text)
            if buffer is None or buffer.note_id == note_id:
                continue  # outside the roots, or the note itself
            lines = buffer.text.split("\n")
            for link in buffer.links:
                if link.target_id == note_id:
                    placed = link.placed
                    places.append(
                        LinkPlace(
                            file, placed.line, placed.start, placed.end, placed.kind,
                            placed.target, placed.anchor, lines[placed.line],
                        )
                    )  # fmt: skip
        return sorted(places, key=lambda p: (str(p.file), p.line, p.start))

    def open_buffer(self, file: Path, text: str) -> Buffer | None:
        """An open file's unsaved text read as a note, None outside the notes roots."""
        return self.read_buffer(file, text) if self.file_place(file) is not None else None

    def notes_tagged(self, tag: str) -> list[NoteRef]:
        """The notes carrying ``tag`` (any case), by path."""
        ids = self._store().notes.filter_ids("tag", tag)
        return sorted((self.note_ref(i) for i in ids), key=lambda n: n.path)

    def suggested_notes(self, target: str, kind: str) -> list[NoteName]:
        """The notes kb check suggests for a broken link to ``target``."""
        store = self._store()
        paths = self.suggestions().close_to(target, kind)
        ids = store.notes.ids_of(paths)
        return store.notes.names([ids[p] for p in paths if p in ids])

    def buffer_mentions(self, buffer: Buffer, line: int, index: int) -> list[BufferMention]:
        """The notes the open note names at (0-based ``line``, ``index``) without linking
        to them (kb's mention rules), longest name first; with every place in the file."""
        from kb.links.mentions import mention_places, normalise_name  # deferred: 7 modules more

        lines = buffer.text.split("\n")
        if not 0 <= line < len(lines):
            return []
        folded_line = normalise_name(lines[line])
        keys = self.kept(
            "mention-keys", lambda: _mention_keys(self.names(), self.config.mention_ignore)
        )
        linked = {link.target_id for link in buffer.links}
        found = []
        for folded, name, note in keys:
            if folded not in folded_line or note.id in linked or note.id == buffer.note_id:
                continue
            places = [(n - 1, start, end) for n, start, end in mention_places(buffer.text, name)]
            here = next((p for p in places if p[0] == line and p[1] <= index <= p[2]), None)
            if here is not None:
                found.append(BufferMention(note, name, here, places))
        return sorted(found, key=lambda m: (-len(m.name), m.note.rel))

    def new_note_draft(
        self, kind: str, target: str, title: str, place: tuple[str, str]
    ) -> tuple[Path, str] | None:
        """Where the note a broken link (of ``kind``, to ``target``, from the note at
        ``place``) asks for would be created, with ``kb new``'s template titled
        ``title``; None when it cannot be (outside the root, not a note, there already)."""

        from kb.notes.editing import new_note_name, new_note_text  # deferred: 5 modules more

        root = next((r.path for r in self.config.roots if r.name == place[0]), None)
        if root is None or not title.strip():
            return None
        if kind in ("wikilink", "embed") and "/" not in target:
            folder = root / (self.config.new_notes_folder or ".")
            try:
                existing = {p.name.casefold() for p in folder.iterdir()}
            except OSError:
                existing = set()
            file = folder / new_note_name(title, existing)
        else:
            written = unquote(target).strip()
            if kind in ("markdown", "reference", "image"):
                rel = posixpath.join(posixpath.dirname(place[1]), written)
            else:
                rel = written.lstrip("/")
            rel = posixpath.normpath(rel)
            if not posixpath.splitext(rel)[1]:
                rel += ".md"
            if rel.startswith("../") or rel in ("..", ".") or not rel.endswith(".md"):
                return None
            file = root / rel
        resolved = file.resolve()
        if file.exists() or (resolved != root.resolve() and root.resolve() not in resolved.parents):
            return None
        from kb.ingest.walk import exclusion_rule  # deferred: the walk's rules, on first use

        if exclusion_rule(resolved.relative_to(root.resolve()).as_posix(), self.config):
            return None  # a hidden or excluded folder: kb would never read the note
        return file, new_note_text(title)

    def plan_rename(self, note_id: int, new_path: str, open_files: Mapping[Path, str]) -> MovePlan:
        """``kb mv``'s plan for moving the note to ``new_path`` (a path ending in ``/``:
        into that folder), computed on the editor's open files as it holds them (their
        unsaved text and its links) and on the other files as saved."""
        from kb.links.moving import OpenLink, OpenText, plan_move  # deferred: on first use

        unsaved = {}
        for file, text in open_files.items():
            buffer = self.open_buffer(file, text)
            if buffer is not None:
                links = tuple(
                    OpenLink(link.placed.kind, link.placed.target, link.target_id)
                    for link in buffer.links
                )
                unsaved[file] = OpenText(buffer.text, links)
        return plan_move(self._store(), self.config, self.note_ref(note_id), new_path, unsaved)

    def rename_heading(
        self,
        file: Path,
        buffer: Buffer,
        line: int,
        new_text: str,
        open_files: Mapping[Path, str],
    ) -> list[TextChange]:
        """The edits that rename the heading on 0-based ``line`` of the open note to
        ``new_text``: the heading itself, the note's own anchors to it, and every anchor
        of another note's link to it (all of them, or a UsageError naming the one kb
        cannot place). A file the editor holds open (``open_files``: unsaved text by
        path) is edited as it holds it, the others as saved."""

        new_text = " ".join(new_text.split())
        old = heading_at(buffer.parsed.headings, line)
        lines = buffer.text.split("\n")
        extent = heading_text_extent(lines[line], old) if old is not None else None
        if old is None or extent is None or not new_text:
            raise UsageError("no heading here to rename")
        edited = lines[line][: extent[0]] + new_text + lines[line][extent[1] :]
        reparsed = parse_buffer(
            "\n".join([*lines[:line], edited, *lines[line + 1 :]]),
            buffer.rel or "note.md",
            self.config.typed_link_keys,
        )
        new = heading_at(reparsed.headings, line)
        if new is None:
            raise UsageError(f"'{new_text}' would not be a heading")
        changes = [TextChange(file, line, extent[0], extent[1], new_text, lines[line])]
        for link in buffer.parsed.links:  # the note's own [x](#slug) and [[#Heading]]
            if link.kind == "anchor" and anchor_names_heading(link.anchor, old):
                at = link.line - 1
                for start, end in own_anchor_extents(lines[at], link.anchor):
                    new_anchor = renamed_anchor(
                        link.anchor,
                        "wikilink" if lines[at][start - 3 : start] == "[[#" else "markdown",
                        old,
                        new,
                    )
                    changes.append(TextChange(file, at, start, end, new_anchor, lines[at]))
        if buffer.note_id is None:
            return _unique(changes)
        rows = [
            r for r in self._store().links.backlinks(buffer.note_id)
            if r.anchor and anchor_names_heading(r.anchor, old)
        ]  # fmt: skip
        from kb.links.check import file_of  # deferred: 3 modules more
        from kb.parse.decode import BinaryFile, decode_note  # deferred: 2 modules more

        by_file: dict[Path, list] = {}
        for row in rows:
            by_file.setdefault(file_of(self.config, row.source_path), []).append(row)
        for source, unsaved in open_files.items():
            held = self.open_buffer(source, unsaved) if source != file else None
            if held is None:
                continue  # outside the roots, or the note itself (read above)
            held_lines = held.text.split("\n")
            for held_link in held.links:
                placed_link = held_link.placed
                if held_link.target_id != buffer.note_id or not anchor_names_heading(
                    placed_link.anchor, old
                ):
                    continue
                where = anchor_extent(held_lines[placed_link.line], placed_link)
                if where is None:
                    raise UsageError(
                        f"{source}:{placed_link.line + 1}: kb cannot place the link's anchor"
                    )
                new_anchor = renamed_anchor(placed_link.anchor, placed_link.kind, old, new)
                at = placed_link.line
                changes.append(TextChange(source, at, *where, new_anchor, held_lines[at]))
        for source, found in sorted(by_file.items()):
            if source == file or source in open_files:
                continue  # the open texts were read above
            try:  # as the store read it: its lines are the rows' lines
                text = normalise(decode_note(source.read_bytes()).text)
            except (OSError, BinaryFile) as exc:
                raise UsageError(f"{source}: cannot be read to rename its link") from exc
            source_lines = text.split("\n")
            placed = placed_links(text, self.config.typed_link_keys)
            for row in found:
                at = row.line - 1
                here = [
                    p for p in placed
                    if p.line == at and p.target == row.target and p.anchor == row.anchor
                ]  # fmt: skip
                if not here:
                    raise UsageError(f"{source}:{row.line}: kb cannot place the link's anchor")
                for placed_link in here:
                    where = anchor_extent(source_lines[at], placed_link)
                    if where is None:
                        raise UsageError(f"{source}:{row.line}: kb cannot place the link's anchor")
                    new_anchor = renamed_anchor(placed_link.anchor, placed_link.kind, old, new)
                    changes.append(TextChange(source, at, *where, new_anchor, source_lines[at]))
        return _unique(changes)

    def suggestions(self) -> Suggestions:
        """kb check's suggestions for broken links, built once per store change."""
        from kb.links.check import Suggestions  # deferred: 3 modules more

        store = self._store()
        return self.kept("suggestions", lambda: Suggestions(store))

    def link_index(self) -> LinkIndex:
        """A link index for this thread, kept until the store changes (it fills itself
        from the store as links ask, so a new one per keystroke would read them again)."""
        stamp = (self._store().generation, self._epoch())
        kept = getattr(self._local, "index", None)
        if kept is None or kept[0] != stamp:
            kept = (stamp, self._link_index())
            self._local.index = kept
        return cast("LinkIndex", kept[1])

    def kept(self, name: str, build: Callable[[], T]) -> T:
        """A value kept for every thread until the store changes, built once (a thread
        asking while another builds it waits for that one)."""
        key = (name, self._store().generation, self._epoch())
        with self._lock:
            if key in self._values:
                return cast(T, self._values[key])
            building = self._building.setdefault(name, threading.Lock())
        with building:
            with self._lock:
                if key in self._values:
                    return cast(T, self._values[key])
            value = build()
        with self._lock:
            for old in [k for k in self._values if k[0] == name]:
                del self._values[old]
            self._values[key] = value
        return value


@dataclass(frozen=True, slots=True)
class TextChange:
    """One edit of a file: 0-based line, start and end (string indexes in ``text``, the
    line as the editor holds it), and the new text."""

    file: Path
    line: int
    start: int
    end: int
    new: str
    text: str


@dataclass(frozen=True, slots=True)
class BufferMention:
    """An unlinked mention of ``note`` in the open note: the name, the place under the
    cursor and every place in the file (0-based line, start, end: string indexes)."""

    note: NoteName
    name: str
    here: tuple[int, int, int]
    places: list[tuple[int, int, int]]


def _mention_keys(
    names: list[NoteName], ignored: tuple[str, ...]
) -> list[tuple[str, str, NoteName]]:
    """(folded name, name, note) of every name that counts for mentions (kb's rules)."""
    from kb.links.connections import INDEX_STEMS  # deferred: on first use

    # deferred: 7 modules more
    from kb.links.mentions import is_common_name, mention_names, normalise_name

    quiet = {normalise_name(name) for name in ignored}
    keys = []
    for note in names:
        if note.stem.casefold() in INDEX_STEMS:
            continue
        for name in mention_names(note, []):
            folded = normalise_name(name)
            if folded not in quiet and not is_common_name(name):
                keys.append((folded, name, note))
    return keys


def _unique(changes: list[TextChange]) -> list[TextChange]:
    """Each place once, in file order; an anchor that stays as it is, left out."""
    kept = {(c.file, c.line, c.start): c for c in changes}
    return [
        c for _, c in sorted(kept.items(), key=lambda item: (str(item[0][0]), *item[0][1:]))
        if c.text[c.start : c.end] != c.new
    ]  # fmt: skip


def _stem_counts(names: list[NoteName]) -> dict[str, int]:

    counts: dict[str, int] = {}
    for name in names:
        key = fold(name.stem)
        counts[key] = counts.get(key, 0) + 1
    return counts
