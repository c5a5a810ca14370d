"""A bilingual glossary: Chinese and English technical terms that name the same thing.

A query word also matches its partners (推理 → inference, 显存 → gpu memory, vram), so a
note written in one language is found by a query in the other. The shipped groups live
in ``kb/data/glossary.tsv``, one group a line: ``中文<TAB>english[<TAB>more partners]``;
a ``#`` line is a comment. The user's ``synonyms:`` in kb.yaml add groups and win: the
term an entry is for (its key, or the first word of a list group) loses the shipped
partners, and every member of the entry is a partner of every other.

Engine-neutral and cheap: stdlib only, the file is read once, on the first
``load_glossary`` call, never at import (``kb search`` pays for it only when asked).
Terms are compared after ``kb.tokenize.normalise`` (NFKC + case folding) with runs of
spaces collapsed, so ``GPU  Memory`` and ``gpu memory`` are one term.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache

from kb.errors import KbError
from kb.tokenize import normalise

SHIPPED_SOURCE = "kb/data/glossary.tsv"

Group = tuple[str, ...]


class Glossary:
    """Partners of each term, looked up by the normalised term."""

    __slots__ = ("_groups", "_partners")

    def __init__(self, partners: dict[str, Group], groups: int) -> None:
        self._partners = partners
        self._groups = groups

    def partners(self, term: str) -> tuple[str, ...]:
        """The other members of every group holding ``term``, user groups first."""
        return self._partners.get(normalise_term(term), ())

    def __len__(self) -> int:
        """How many groups are in force (shipped and the user's)."""
        return self._groups

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and normalise_term(term) in self._partners


def normalise_term(term: str) -> str:
    """NFKC, case-folded, spaces trimmed and collapsed: one spelling per term."""
    return " ".join(normalise(term).split())


def parse_glossary(text: str, source: str) -> list[Group]:
    """Groups of a glossary file; a malformed line is a ``KbError`` naming it."""
    groups: list[Group] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [normalise_term(field) for field in line.split("\t")]
        if len(fields) < 2:
            raise KbError(
                f"{source}:{number}: a glossary line needs a term and a partner separated by a tab"
            )
        if not all(fields):
            raise KbError(f"{source}:{number}: a glossary line has an empty field")
        groups.append(tuple(fields))
    return groups


@cache
def shipped_groups() -> tuple[Group, ...]:
    """The groups kb ships, read once per process."""
    # pkgutil.get_data reads package data through the package's loader (zip-safe, like
    # importlib.resources) but imports in 0.5 ms where importlib.resources takes ~10 ms.
    import pkgutil

    data = pkgutil.get_data("kb", "data/glossary.tsv")
    if data is None:  # a loader that cannot read files: search without the glossary
        return ()
    return tuple(parse_glossary(data.decode("utf-8"), SHIPPED_SOURCE))


def user_groups(user: Mapping[str, Sequence[str]]) -> list[Group]:
    """``{term: partners}`` as groups headed by the term, normalised, blanks dropped."""
    groups: list[Group] = []
    for term, partners in user.items():
        members = [normalise_term(term), *(normalise_term(p) for p in partners)]
        groups.append(tuple(dict.fromkeys(m for m in members if m)))
    return [group for group in groups if group]


def load_glossary(user: Mapping[str, Sequence[str]] | None = None) -> Glossary:
    """The shipped groups plus the user's; a user entry replaces its term's shipped partners."""
    mine = user_groups(user or {})
    overridden = {group[0] for group in mine}
    shipped = [
        kept
        for group in shipped_groups()
        if len(kept := tuple(m for m in group if m not in overridden)) > 1
    ]
    in_force = [group for group in mine if len(group) > 1] + shipped
    return Glossary(_partner_map(in_force), groups=len(in_force))


def _partner_map(groups: Iterable[Group]) -> dict[str, Group]:
    """Each member → the other members of its groups, in group order, without repeats."""
    collected: dict[str, dict[str, None]] = {}
    for group in groups:
        for member in group:
            others = collected.setdefault(member, {})
            for other in group:
                if other != member:
                    others[other] = None
    return {member: tuple(others) for member, others in collected.items() if others}
