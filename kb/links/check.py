"""What ``kb check`` reports: broken links (with the notes they may have meant), missing
files, links to missing headings, ambiguous wikilinks, duplicate titles and the warnings
ingest recorded. Only what is wrong: a link to any file that exists is fine."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from kb.locations import note_file_of, shown_note_path

if TYPE_CHECKING:
    from kb.config import Config
    from kb.store import Store
    from kb.store.rows import LinkProblemRow

_SUGGESTIONS = 3
_SUGGESTION_SCORE = 75  # rapidfuzz WRatio: close spellings, not shared fragments
_NAME_KINDS = frozenset({"wikilink", "embed", "front-matter", "liquid-post"})
# Above this many names a broken link is scored only against the names that can come
# close (_NearNames); below it, against all of them.
_FULL_SCAN = 20_000
_CLOSE_NAMES = 24  # names sharing a start (or an end) with a wanted one
_SHARING_BOTH = 1_000  # ... and names sharing both a shorter start and a shorter end
_LAST_CHAR = chr(0x10FFFF)
_BY_WORD = 8  # names sharing a word with a wanted one
_WORD = re.compile(r"[^\W_]+")


@dataclass(slots=True)
class CheckProblem:
    path: str
    line: int | None
    # broken-link | missing-file | missing-heading | ambiguous-link | duplicate-title
    # | parse-warning
    kind: str
    message: str


def check(store: Store, full_scan: int = _FULL_SCAN) -> list[CheckProblem]:
    """What is wrong in the store. A broken link's suggestions come from scoring every
    name when there are at most ``full_scan`` of them, else from a shortlist."""
    problems: list[CheckProblem] = []
    rows = store.links.problems()
    broken = any(r.status == "broken" for r in rows)
    suggest = Suggestions(store, full_scan) if broken else None
    for row in rows:
        problems.append(link_problem(row, store, suggest))
    for paths in store.notes.duplicate_titles():
        for path in paths:
            others = ", ".join(p for p in paths if p != path)
            problems.append(CheckProblem(path, None, "duplicate-title", f"same title as {others}"))
    for problem in store.problems.all():
        problems.append(
            CheckProblem(
                problem.path, problem.line, "parse-warning", f"{problem.kind}: {problem.message}"
            )
        )
    problems.sort(key=lambda p: (p.path, p.line or 0, p.kind))
    return problems


def link_problem(row: LinkProblemRow, store: Store, suggest: Suggestions | None) -> CheckProblem:
    anchor = link_anchor(row.target, row.anchor, row.kind)
    target = shown_target(row.target, row.anchor, row.kind)
    if row.status == "broken":
        message = f"{target} ({row.kind}) points to no note"
        close = suggest.close_to(row.target, row.kind) if suggest else []
        if close:
            message += f"; did you mean {', '.join(close)}?"
        return CheckProblem(row.path, row.line, "broken-link", message)
    if row.status == "missing-file":
        return CheckProblem(row.path, row.line, "missing-file", f"{target}: no such file")
    if row.status == "missing-heading":
        message = f"{target}: {row.target_path} has no heading #{anchor}"
        close = _close_headings(store, row.target_path, anchor)
        if close:
            message += f"; did you mean {', '.join('#' + c for c in close)}?"
        return CheckProblem(row.path, row.line, "missing-heading", message)
    return CheckProblem(
        row.path,
        row.line,
        "ambiguous-link",
        f"{target} names several notes; chose {row.target_path}",
    )


def link_anchor(target: str, anchor: str, kind: str) -> str:
    """The heading a link names, decoded (``#%E4%B8%A5`` → ``#严``); a URL keeps it in
    its target."""
    if not anchor and kind == "url":
        anchor = urlsplit(target).fragment
    return unquote(anchor).strip()


def shown_target(target: str, anchor: str, kind: str) -> str:
    """A link's target as a reader wants it, decoded: ``显存 估算.md#严格``, never
    ``%E6%98%BE…``; the anchor only when it names something."""
    anchor = link_anchor(target, anchor, kind)
    written = target.split("#", 1)[0] if kind == "url" else target
    return unquote(written) + (f"#{anchor}" if anchor else "")


class Suggestions:
    """The notes a broken link most likely meant: close in name, path or site URL.

    Each distinct target is scored once. Over a small collection every name is scored;
    over a large one (scoring 100,000 notes' names takes 0.4 s per link) only the names
    that share the most of its start or of its end (_NearNames)."""

    def __init__(self, store: Store, full_scan: int = _FULL_SCAN) -> None:
        from kb.names.resolve import fold, site_path  # deferred: 3 modules more

        # A note is named by its path (with its root's name when there are several).
        self.paths = store.notes.paths()
        self.by_key: dict[str, set[int]] = {}
        for note in store.notes.names():
            keys = {fold(note.stem), fold(note.title), *(fold(a) for a in note.aliases)}
            keys |= {site_path(note.rel), *(site_path(u) for u in note.url_aliases)}
            for key in keys - {""}:
                self.by_key.setdefault(key, set()).add(note.id)
        self.choices = list(self.by_key)
        self._found: dict[str, list[str]] = {}
        self._near = _NearNames(self.choices) if len(self.choices) > full_scan else None

    def close_to(self, target: str, kind: str) -> list[str]:
        from kb.names.resolve import fold, site_path  # deferred: 3 modules more

        wanted = fold(unquote(target)) if kind in _NAME_KINDS else site_path(target)
        wanted = wanted.removesuffix(".md")
        if not wanted:
            return []
        found = self._found.get(wanted)
        if found is None:
            found = self._found[wanted] = self._close_to(wanted)
        return found

    def _close_to(self, wanted: str) -> list[str]:
        from rapidfuzz import fuzz, process  # deferred: loads rapidfuzz

        choices = self._near.near(wanted) if self._near else self.choices
        found: list[str] = []
        for key, _score, _ in process.extract(
            wanted,
            choices,
            scorer=fuzz.WRatio,
            limit=_SUGGESTIONS * 3,
            score_cutoff=_SUGGESTION_SCORE,
        ):
            for note_id in sorted(self.by_key[key]):
                path = self.paths.get(note_id, "")
                if path and path not in found:
                    found.append(path)
        return found[:_SUGGESTIONS]


class _NearNames:
    """The names worth scoring against a wanted one, out of very many: those sharing its
    start, its end (a typo late or early in the name), both, or one of its rarer words, in
    the names' own order (rapidfuzz breaks ties by it, as it does over the whole list)."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.orders = [_SortedNames(names), _SortedNames([name[::-1] for name in names])]
        self.by_word: defaultdict[str, list[int]] = defaultdict(list)
        words = _WORD.findall
        for index, name in enumerate(names):
            for word in words(name):  # a word twice in a name: the index twice, harmless
                self.by_word[word].append(index)

    def near(self, wanted: str) -> list[str]:
        forward, backward = self.orders
        found = set(forward.sharing_start(wanted, _CLOSE_NAMES))
        found.update(backward.sharing_start(wanted[::-1], _CLOSE_NAMES))
        # A typo in the middle: names sharing both a shorter start and a shorter end.
        both = set(forward.sharing_start(wanted, _SHARING_BOTH)).intersection(
            backward.sharing_start(wanted[::-1], _SHARING_BOTH)
        )
        found.update(sorted(both)[:_CLOSE_NAMES])
        # A word in the middle (``peak-memory`` in ``archive/missing-peak-memory-951``):
        # the first names with each of its words. Names that contain a word score alike,
        # and rapidfuzz, given them all, would keep the first.
        for word in set(_WORD.findall(wanted)):
            found.update(self.by_word.get(word, ())[:_BY_WORD])
        return [self.names[i] for i in sorted(found)]


class _SortedNames:
    def __init__(self, names: list[str]) -> None:
        self.order = sorted(range(len(names)), key=names.__getitem__)
        self.keys = [names[i] for i in self.order]

    def sharing_start(self, wanted: str, most: int) -> list[int]:
        """The indexes of the names that share the shortest start of ``wanted`` that at
        most ``most`` names share; when more share even its longest shared start, the
        ``most`` of them around where ``wanted`` would go."""
        keys = self.keys
        at = bisect_left(keys, wanted)
        longest = max(
            (_common_start(wanted, keys[i]) for i in (at - 1, at) if 0 <= i < len(keys)),
            default=0,
        )
        low, high, best = 0, longest, None
        while low <= high:  # the names sharing wanted[:k] are fewer the larger k is
            k = (low + high) // 2
            start = bisect_left(keys, wanted[:k], hi=at)
            end = bisect_left(keys, wanted[:k] + _LAST_CHAR, lo=at)
            if end - start <= most:
                best, high = (start, end), k - 1
            else:
                low = k + 1
        if best is None:
            half = most // 2
            best = (max(0, at - half), at + half)
        return self.order[best[0] : best[1]]


def _common_start(a: str, b: str) -> int:
    pairs = enumerate(zip(a, b, strict=False))
    return next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))


def _close_headings(store: Store, path: str | None, anchor: str) -> list[str]:
    if not path or not anchor:
        return []
    from rapidfuzz import fuzz, process  # deferred: loads rapidfuzz

    ids = store.notes.ids_of([path])
    if path not in ids:
        return []
    slugs = sorted(store.notes.heading_slugs(ids[path]))
    return [
        slug
        for slug, _score, _ in process.extract(
            anchor.casefold(), slugs, scorer=fuzz.WRatio, limit=2, score_cutoff=_SUGGESTION_SCORE
        )
    ]


def file_of(config: Config, note_path: str) -> Path:
    """The file behind a note path (``rel``, or ``root/rel`` with several roots)."""
    return note_file_of(config, note_path)


def shown_path(config: Config, note_path: str, cwd: Path | None = None) -> str:
    """A note's file as every command prints it (kb.locations.shown_note_path)."""
    return shown_note_path(config, note_path, cwd)
