"""Frozen value classes that cost next to nothing to define.

``@dataclass(frozen=True)`` compiles six methods per class, about 1 ms each class on this
2-core machine, and ``kb search`` imports some fifty classes before it reads a byte (README
"Design decisions" → Start-up). A ``Value`` subclass is declared the same way, with
annotated fields and optional defaults, and type checkers treat it as a frozen dataclass
(``dataclass_transform``), but defining it only records its field names::

    class Word(Value):
        text: str
        prefix: bool = False

Instances compare equal only to instances of the same class with equal fields (so a
``Word("a")`` is not a ``Phrase("a")``, unlike two NamedTuples), hash by their fields, print
like dataclasses and raise ``dataclasses.FrozenInstanceError`` on assignment. The price is
a slower constructor (a few microseconds): use ``Value`` for the few objects a query makes,
and a ``typing.NamedTuple`` for rows built by the thousand.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from inspect import get_annotations
from typing import Any, ClassVar, dataclass_transform


@dataclass_transform(frozen_default=True)
class Value:
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls) -> None:
        own = tuple(n for n, kind in get_annotations(cls).items() if "ClassVar" not in str(kind))
        cls._fields = cls._fields + own
        cls._defaults = {**cls._defaults, **{n: cls.__dict__[n] for n in own if n in cls.__dict__}}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) == len(fields) and not kwargs:
            self.__dict__.update(zip(fields, args, strict=True))
            return
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments")
        values = dict(zip(fields, args, strict=False))  # the rest by name or default
        for name, value in kwargs.items():
            if name not in fields or name in values:
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated {name!r}")
            values[name] = value
        state = self.__dict__
        for name in fields:
            if name in values:
                state[name] = values[name]
            elif name in self._defaults:
                state[name] = self._defaults[name]
            else:
                raise TypeError(f"{type(self).__name__}() missing argument {name!r}")

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash(tuple(self.__dict__.values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self.__dict__.items())
        return f"{type(self).__name__}({fields})"
