"""kb.values.Value: what the query tree and the query plan rely on from a frozen dataclass."""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError
from typing import ClassVar

import pytest

from kb.query.plan import Prefix, Term
from kb.query.syntax import Phrase, Word
from kb.values import Value


class Pair(Value):
    left: str
    right: tuple[str, ...] = ()


class Counted(Value):
    count: int
    made: ClassVar[str] = "not a field"


class OtherPair(Value):
    left: str
    right: tuple[str, ...] = ()


def test_fields_by_position_by_name_and_by_default() -> None:
    assert Pair("a", ("b",)) == Pair(left="a", right=("b",)) == Pair("a", right=("b",))
    assert Pair("a").right == ()
    assert Pair._fields == ("left", "right")
    assert Counted._fields == ("count",)


@pytest.mark.parametrize(
    "make",
    [
        Pair,  # no arguments
        lambda: Pair("a", (), "c"),  # type: ignore[call-arg]
        lambda: Pair("a", left="b"),  # type: ignore[misc]
        lambda: Pair("a", other=1),  # type: ignore[call-arg]
    ],
)
def test_wrong_arguments_raise_type_error(make) -> None:
    with pytest.raises(TypeError):
        make()


def test_equality_and_hash_are_by_type_and_fields() -> None:
    assert Pair("a") == Pair("a")
    assert Pair("a") != Pair("b")
    assert Pair("a") != OtherPair("a")  # unlike two NamedTuples
    assert hash(Pair("a", ("b",))) == hash(Pair("a", ("b",)))
    assert len({Pair("a"), Pair("a"), OtherPair("a")}) == 2
    assert Word("gpu") != Phrase("gpu")
    assert Term("gpu") != Prefix("gpu")


def test_frozen() -> None:
    pair = Pair("a")
    with pytest.raises(FrozenInstanceError):
        pair.left = "b"  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del pair.left


def test_repr_pickle_and_copy() -> None:
    pair = Pair("a", ("b",))
    assert repr(pair) == "Pair(left='a', right=('b',))"
    assert pickle.loads(pickle.dumps(pair)) == pair
    assert copy.deepcopy(pair) == pair
