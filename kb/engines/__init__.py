"""Search engines behind one interface; each engine lives in its own module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kb.documents import SearchDocument
from kb.query import Query


@dataclass(frozen=True, slots=True)
class EngineHit:
    note_id: int
    score: float  # higher is better


class SearchEngine(Protocol):
    """What kb's search needs of an engine. Writers are engine-specific."""

    name: str

    def is_ready(self) -> bool:
        """Whether the index exists and reflects the store; search warns when it does not."""
        ...

    def search(self, query: Query, limit: int) -> list[EngineHit]:
        """Note ids matching ``query``, best first."""
        ...

    def vocabulary_near(self, word: str, limit: int) -> list[str]:
        """Indexed words spelled like ``word``, for "did you mean"."""
        ...


class IndexWriter(Protocol):
    """How ingest keeps an engine's index in step with the store."""

    def prepare(self) -> bool:
        """Create the index if needed; True when it must be filled from the whole store."""
        ...

    def clear(self) -> None: ...

    def add(self, note_id: int, streams: tuple[str, ...]) -> None: ...

    def delete(self, documents: list[tuple[int, SearchDocument]]) -> None: ...

    def mark_synced(self, generation: int) -> None: ...
