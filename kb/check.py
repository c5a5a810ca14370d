"""What ``kb check`` reports: broken links (with the notes they may have meant), missing
files, links to missing headings, ambiguous wikilinks, duplicate titles and the warnings
ingest recorded. Only what is wrong: a link to any file that exists is fine."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from kb.config import Config
    from kb.store import Store
    from kb.store.rows import LinkProblemRow

_SUGGESTIONS = 3
_SUGGESTION_SCORE = 75  # rapidfuzz WRatio: close spellings, not shared fragments
_NAME_KINDS = frozenset({"wikilink", "embed", "front-matter", "liquid-post"})


@dataclass(slots=True)
class CheckProblem:
    path: str
    line: int | None
    # broken-link | missing-file | missing-heading | ambiguous-link | duplicate-title
    # | parse-warning
    kind: str
    message: str


def check(store: Store) -> list[CheckProblem]:
    problems: list[CheckProblem] = []
    rows = store.links.problems()
    suggest = _Suggestions(store) if any(r.status == "broken" for r in rows) else None
    for row in rows:
        problems.append(_link_problem(row, store, suggest))
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


def _link_problem(row: LinkProblemRow, store: Store, suggest: _Suggestions | None) -> CheckProblem:
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


class _Suggestions:
    """The notes a broken link most likely meant: close in name, path or site URL."""

    def __init__(self, store: Store) -> None:
        from kb.links import fold, site_path

        # A note is named by its path (with its root's name when there are several).
        self.paths = {row.id: row.path for row in store.notes.listing()}
        self.by_key: dict[str, set[int]] = {}
        for note in store.notes.names():
            keys = {fold(note.stem), fold(note.title), *(fold(a) for a in note.aliases)}
            keys |= {site_path(note.rel), *(site_path(u) for u in note.url_aliases)}
            for key in keys - {""}:
                self.by_key.setdefault(key, set()).add(note.id)
        self.choices = list(self.by_key)

    def close_to(self, target: str, kind: str) -> list[str]:
        from rapidfuzz import fuzz, process

        from kb.links import fold, site_path

        wanted = fold(unquote(target)) if kind in _NAME_KINDS else site_path(target)
        wanted = wanted.removesuffix(".md")
        if not wanted:
            return []
        found: list[str] = []
        for key, _score, _ in process.extract(
            wanted,
            self.choices,
            scorer=fuzz.WRatio,
            limit=_SUGGESTIONS * 3,
            score_cutoff=_SUGGESTION_SCORE,
        ):
            for note_id in sorted(self.by_key[key]):
                path = self.paths.get(note_id, "")
                if path and path not in found:
                    found.append(path)
        return found[:_SUGGESTIONS]


def _close_headings(store: Store, path: str | None, anchor: str) -> list[str]:
    if not path or not anchor:
        return []
    from rapidfuzz import fuzz, process

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
    if config.prefixed:
        name, _, rel = note_path.partition("/")
        for root in config.roots:
            if root.name == name:
                return root.path / rel
    return config.roots[0].path / note_path


def shown_path(config: Config, note_path: str, cwd: Path | None = None) -> str:
    """A note's file relative to the current folder, as editors and terminals open it."""
    file = file_of(config, note_path)
    try:
        return os.path.relpath(file, cwd or Path.cwd())
    except ValueError:  # another drive (Windows)
        return str(file)
