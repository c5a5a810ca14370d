"""Search engines behind one interface; each engine lives in its own module, named in
``kb.engines.registry``. ``kb.query.plan`` holds what they share: the stream layout and
the query plan each of them translates."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Protocol

from kb.errors import StoreError

if TYPE_CHECKING:
    from pathlib import Path

    from kb.query.plan import QueryPlan, Text
    from kb.query.syntax import Query
    from kb.store import Store
    from kb.words.documents import SearchDocument

# A note like another, as an engine finds it: its id, a score 0..1, the words the two share.
# kb.links.related turns these into Related notes with a reason a reader can check.
SimilarNote = tuple[int, float, list[str]]


class EngineHit(NamedTuple):
    note_id: int
    score: float  # higher is better


class SearchEngine(Protocol):
    """What kb's search needs of an engine. Writers are engine-specific."""

    name: str

    def is_ready(self) -> bool:
        """Whether the index exists and reflects the store; search warns when it does not."""
        ...

    def search(self, query: Query | QueryPlan, limit: int) -> list[EngineHit]:
        """Note ids matching ``query`` (or its plan, as ``kb.query.reading`` read it), best
        first."""
        ...

    def search_and_titled(
        self, planned: QueryPlan, titles: Text, limit: int
    ) -> tuple[list[EngineHit], list[EngineHit]]:
        """``search(planned, limit)`` and ``search(planned.kept_to(titles), limit)``: the
        best matches, and the best of those whose title holds the words (an engine may
        answer both from one pass over the matches; ``two_searches`` otherwise)."""
        ...

    def count(self, text: Text, cap: int) -> int:
        """How many notes match a plan node, counted up to ``cap``."""
        ...

    def holders(self, text: Text, among: Collection[int]) -> set[int]:
        """Which of the notes ``among`` match a plan node."""
        ...

    def more_like_this(
        self, note_id: int, document: SearchDocument, limit: int = 30
    ) -> list[SimilarNote]:
        """Notes sharing the document's most distinctive words, best first (see the
        function ``kb.engines.similar.more_like_this``, which engines call with their
        lookups)."""
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


class EngineEntry(ABC):
    """One engine as ingest and the facade use it: how to read it, how to write it."""

    name: ClassVar[str]
    # True when the index lives in the store's database and is written in the store's
    # transaction; False when it lives outside and catches up in ``after_commit``.
    in_store: ClassVar[bool]

    @abstractmethod
    def reader(self, index_dir: Path, store: Store) -> SearchEngine:
        """The engine searching through ``store`` (one thread's read connection)."""

    @abstractmethod
    def writer(self, store: Store) -> IndexWriter:
        """What ingest writes to inside the store's transaction."""

    def after_commit(  # noqa: B027 - a no-op unless the index lives outside the store
        self,
        index_dir: Path,
        store: Store,
        streams: Mapping[int, tuple[str, ...]] | None,
        rebuild: bool,
    ) -> None:
        """Bring an index kept outside the store up to date once the store committed;
        ``streams`` are the tokens of the notes this ingest wrote (None when
        ``in_store``). An index in the store committed with it: nothing to do."""


def two_searches(
    engine: SearchEngine, planned: QueryPlan, titles: Text, limit: int
) -> tuple[list[EngineHit], list[EngineHit]]:
    """``SearchEngine.search_and_titled`` as two searches."""
    return engine.search(planned, limit), engine.search(planned.kept_to(titles), limit)


def first_page(
    store: Store, scores: Mapping[int, float], exact: Collection[int], limit: int
) -> list[EngineHit]:
    """The first ``limit`` of the notes a query matched, in FTS5's order: a title equal to
    the query first, then by score, ties newest first (undated last), then by path. Only
    the scored notes are sorted here; the notes a filter keeps with no score (often most
    of them: ``tag:缓存`` keeps 5,000 of 100,000) come from the store in date order, as
    many as the page still needs (the engines whose filters are sets: whoosh, tantivy)."""
    scored = [i for i, score in scores.items() if score or i in exact]
    tied = len({scores[i] for i in scored}) < len(scored)
    dated = store.notes.dates_and_paths(scored) if tied else {}
    scored.sort(
        key=lambda i: (
            i not in exact,
            -scores[i],
            newest_first(dated.get(i, ("", ""))[0]),
            dated.get(i, ("", ""))[1],
        )
    )
    page = scored[:limit]
    if len(page) < limit:
        unscored = {i for i, score in scores.items() if not score and i not in exact}
        page.extend(store.notes.newest(unscored, limit - len(page)))
    return [EngineHit(i, scores[i]) for i in page]


def newest_first(date: str | None) -> tuple[int, list[int]]:
    """A sort key that puts later ISO dates first and undated notes last
    (first_page, for the engines whose filters are sets: whoosh, tantivy)."""
    if not date:
        return (1, [])
    # The 1 after the characters puts a longer date before its own prefix, as SQLite's
    # ``date DESC`` does ('2024-01-09T10:00' before '2024-01-09').
    return (0, [*(-ord(ch) for ch in date), 1])


class IndexDamaged(StoreError):
    """An engine's own index cannot be read: it is derived, so it is rebuilt, never
    repaired. Each engine names itself (``engine``)."""

    engine = "search"

    def __init__(self, path: Path, cause: BaseException | str) -> None:
        if isinstance(cause, BaseException):
            first = str(cause).splitlines()[0] if str(cause) else ""
            cause = f"{type(cause).__name__}: {first}"
        super().__init__(
            f"the {self.engine} index in {path} is damaged ({cause}); "
            "'kb ingest --rebuild' rebuilds it"
        )
