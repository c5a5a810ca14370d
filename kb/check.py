"""What ``kb check`` reports: broken, ambiguous and heading-less links, duplicate titles
and the warnings ingest recorded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.store import Store


@dataclass(slots=True)
class CheckProblem:
    path: str
    line: int | None
    kind: str  # broken-link | missing-heading | ambiguous-link | duplicate-title | parse-warning
    message: str


def check(store: Store) -> list[CheckProblem]:
    problems: list[CheckProblem] = []
    for row in store.links.problems():
        target = row.target + (f"#{row.anchor}" if row.anchor else "")
        if row.status == "broken":
            problems.append(
                CheckProblem(
                    row.path,
                    row.line,
                    "broken-link",
                    f"{target} ({row.kind}) points to no note",
                )
            )
        elif row.status == "missing-heading":
            problems.append(
                CheckProblem(
                    row.path,
                    row.line,
                    "missing-heading",
                    f"{target}: {row.target_path} has no heading #{row.anchor}",
                )
            )
        else:
            problems.append(
                CheckProblem(
                    row.path,
                    row.line,
                    "ambiguous-link",
                    f"{target} names several notes; chose {row.target_path}",
                )
            )
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
