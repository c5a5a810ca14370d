"""A bilingual glossary: Chinese and English technical terms that name the same thing.

A query word also matches its partners (推理 → inference, 显存 → gpu memory, vram), so a
note written in one language is found by a query in the other. The shipped groups live
in ``kb/data/glossary.tsv``, one group a line: ``中文<TAB>english[<TAB>more partners]``;
a ``#`` line is a comment. The user's ``synonyms:`` in kb.yaml add groups and win: the
term an entry is for (its key, or the first word of a list group) loses the shipped
partners, both ways, and every member of the entry is a partner of every other.

Engine-neutral and cheap: stdlib only, the file is read once, on the first
``load_glossary`` call, never at import, and partners are gathered when asked for, so
building a glossary costs next to nothing after the first. Terms are compared after
``kb.words.tokenize.normalise`` (NFKC + case folding) with runs of spaces collapsed, so
``GPU  Memory`` and ``gpu memory`` are one term.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

from kb.errors import KbError
from kb.words.tokenize import normalise

SHIPPED_SOURCE = "kb/data/glossary.tsv"
# A term's partners, at most: each is one more alternative a query word searches (the
# shipped groups have at most 3). kb.config warns about the user's terms that have more.
MAX_PARTNERS = 16

Group = tuple[str, ...]
Holding = dict[str, list[Group]]  # each term → the groups holding it, in file order


class Glossary:
    """Partners of each term: the user's groups, then the shipped ones."""

    __slots__ = ("_count", "_overridden", "_shipped", "_user")

    def __init__(self, user: Holding, shipped: Holding, overridden: frozenset[str]) -> None:
        self._user = user
        self._shipped = shipped
        self._overridden = overridden  # terms whose shipped partners the user replaced
        touched = dict.fromkeys(g for term in overridden for g in shipped.get(term, ()))
        emptied = sum(sum(m not in overridden for m in group) < 2 for group in touched)
        mine = dict.fromkeys(g for groups in user.values() for g in groups if len(g) > 1)
        self._count = len(mine) + len(shipped_groups()) - emptied

    def partners(self, term: str) -> tuple[str, ...]:
        """The other members of every group holding ``term``, user groups first; at most
        MAX_PARTNERS (a term in thousands of groups costs no more than one in a few)."""
        term = normalise_term(term)
        found: dict[str, None] = {}
        for group in self._user.get(term, ()):
            found.update(dict.fromkeys(group))
            if len(found) > MAX_PARTNERS:  # the term itself is among them
                break
        if term not in self._overridden:
            for group in self._shipped.get(term, ()):
                found.update(dict.fromkeys(m for m in group if m not in self._overridden))
        found.pop(term, None)
        return tuple(found)[:MAX_PARTNERS]

    def __len__(self) -> int:
        """How many groups are in force (the user's and the shipped ones left standing)."""
        return self._count


def normalise_term(term: str) -> str:
    """NFKC, case-folded, spaces trimmed and collapsed: one spelling per term."""
    return " ".join(normalise(term).split())


def parse_glossary(text: str, source: str) -> list[Group]:
    """Groups of a glossary file, normalised; a malformed line is a ``KbError`` naming it."""
    groups: list[Group] = []
    # One normalise over the whole text: field by field it was most of the load time.
    for number, line in enumerate(normalise(text).splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [" ".join(field.split()) for field in line.split("\t")]
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
    # The file is stored normalised and well formed (tests/unit/test_glossary.py checks it
    # against parse_glossary), so splitting is all it needs: a third of parsing's time.
    lines = data.decode("utf-8").splitlines()
    return tuple(tuple(line.split("\t")) for line in lines if line and line[0] != "#")


@cache
def _shipped() -> Holding:
    return _holding(shipped_groups())


def user_groups(user: Mapping[str, Sequence[str]]) -> list[Group]:
    """``{term: partners}`` as groups headed by the term, normalised, blanks dropped."""
    groups: list[Group] = []
    for term, partners in user.items():
        members = (normalise_term(m) for m in (term, *partners))
        group = tuple(dict.fromkeys(m for m in members if m))
        if group:
            groups.append(group)
    return groups


def crowded_terms(user: Mapping[str, Sequence[str]]) -> list[str]:
    """The user's terms with more than MAX_PARTNERS partners over all their groups."""
    crowded = []
    for term, groups in _holding(user_groups(user)).items():
        if len(groups) > 1 and len(set().union(*groups)) > MAX_PARTNERS + 1:
            crowded.append(term)
    return crowded


def load_glossary(user: Mapping[str, Sequence[str]] | None = None) -> Glossary:
    """The shipped groups plus the user's; a user entry replaces its term's shipped partners."""
    mine = user_groups(user or {})
    return Glossary(_holding(mine), _shipped(), frozenset(group[0] for group in mine))


def _holding(groups: Sequence[Group]) -> Holding:
    holding: Holding = {}
    for group in groups:
        for member in group:
            holding.setdefault(member, []).append(group)
    return holding
