"""What the engines with an index folder of their own share (whoosh, tantivy): the index
commits after the store and records the store generation it reflects, and ``sync`` brings
a lagging index up to date from the store's per-note generations and tombstones (or
rebuilds it beside the old one); ``SyncedEntry`` is such an engine's registry entry."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import import_module
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Protocol

from kb.engines import contract
from kb.errors import KbError, StoreError, os_error_message
from kb.words.streams import document_streams, query_signature, tokenizer_signature

if TYPE_CHECKING:
    from pathlib import Path

    from kb.engines.fts5 import DroppedFts5
    from kb.store import Store

# The tokens of the notes an ingest wrote, by note id (kb.words.streams.STREAMS, in order).
Streams = Mapping[int, tuple[str, ...]]


class Package(NamedTuple):
    """The package an engine needs, and how to install it."""

    module: str
    engine: str
    distribution: str
    extra: str

    def available(self) -> bool:
        """Whether it is installed (imported: a broken install is not)."""
        try:
            import_module(self.module)
        except ImportError:
            return False
        return True

    def require(self) -> None:
        if not self.available():
            raise KbError(
                f"the {self.engine} engine needs {self.distribution}: "
                f"pip install '.[{self.extra}]' in kb's folder"
            )


def index_signature(engine: str, schema_version: str) -> str:
    """What an index's tokens depend on: its schema and kb's tokenizer."""
    return f"{engine} {schema_version}; {tokenizer_signature()}"


def in_step(state: tuple[int, str] | None, store: Store, engine: str, schema_version: str) -> bool:
    """Whether an index in ``state`` (see ``SyncedIndex.state``) answers as the store
    would: at its generation, built from this store, read as kb reads queries today."""
    return (
        state is not None
        and state[0] == store.generation
        and state[1].startswith(f"{engine} {schema_version}; {query_signature()};")
        and state[1].endswith(f"; store {store.meta.store_id}")
    )


class Target(NamedTuple):
    """What ``sync`` brings an index to: the store's notes at its generation (with the
    tokens the ingest made, ``streams``), under the index's signature and the store's."""

    store: Store
    streams: Streams
    generation: int
    signature: str


class SyncedIndex(Protocol):
    """An engine's index folder as ``sync`` keeps it in step with the store."""

    path: Path

    def sync(self, store: Store, streams: Streams | None = None, rebuild: bool = False) -> int:
        """``sync(self, ...)`` below, with the engine's signature."""
        ...

    def state(self) -> tuple[int, str] | None:
        """(store generation the index reflects, its signature), None if no index;
        IndexDamaged if it cannot be read."""
        ...

    def rebuild(self, target: Target) -> int:
        """Every note of the store, in a new folder swapped in (see ``rebuild_beside``)."""
        ...

    def catch_up(self, target: Target, changed: list[int], removed: list[int]) -> int:
        """The notes changed and removed since the index's generation, into the index."""
        ...


def sync(
    index: SyncedIndex, store: Store, streams: Streams | None, rebuild: bool, signature: str
) -> int:
    """Bring the index to the store's generation; returns how many notes it wrote.
    ``signature`` is the index's ``index_signature``."""
    generation = store.generation
    try:
        state = index.state()
    except contract.IndexDamaged:
        state = None  # derived data: an index that cannot be read is made again
    signature = f"{signature}; store {store.meta.store_id}"
    target = Target(store, streams if streams is not None else {}, generation, signature)
    if rebuild or state is None or state[1] != signature or state[0] > generation:
        # Also when the store is not the one this index was built from (it was deleted
        # and made again: its generations restarted), or when it is behind the index.
        return index.rebuild(target)
    current = state[0]
    if current == generation:
        return 0
    changed, removed = store.notes.changes_since(current)
    return index.catch_up(target, changed, removed)


def note_streams(
    store: Store, note_ids: Sequence[int], streams: Streams
) -> Iterator[tuple[int, tuple[str, ...]]]:
    """Each note's tokens: those the ingest made, else made again from the store's search
    document; a note removed meanwhile is left out. ``note_ids`` each once."""
    missing = [i for i in note_ids if i not in streams]
    documents = dict(store.notes.search_documents(missing)) if missing else {}
    for note_id in note_ids:
        columns = streams.get(note_id)
        if columns is None:
            if note_id not in documents:
                continue  # removed meanwhile
            columns = document_streams(documents[note_id])
        yield note_id, columns


def rebuild_beside(path: Path, build: Callable[[Path], int]) -> int:
    """Build an engine's index in a new folder beside ``path`` (``build`` writes it and
    says how many notes it wrote) and swap it in; a failed build leaves nothing, and until
    the swap readers see the old index."""
    fresh = path.with_name(path.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        fresh.mkdir(parents=True)
        written = build(fresh)
    except BaseException as exc:
        shutil.rmtree(fresh, ignore_errors=True)
        if isinstance(exc, OSError):
            raise StoreError(os_error_message(exc, fresh)) from exc
        raise
    old = path.with_name(path.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if path.exists():
        path.rename(old)
    fresh.rename(path)
    shutil.rmtree(old, ignore_errors=True)
    return written


class MakesEngine(Protocol):
    def __call__(self, index_dir: Path, store: Store, /) -> contract.SearchEngine: ...


class MakesIndex(Protocol):
    def __call__(self, index_dir: Path, /) -> SyncedIndex: ...


class SyncedEntry(contract.EngineEntry):
    """An index in its own folder, brought up to date after each store commit."""

    in_store = False
    package: ClassVar[Package]
    # The engine's reader, and its index's writer side, as made from the index folder.
    engine: ClassVar[MakesEngine]
    index: ClassVar[MakesIndex]

    def reader(self, index_dir: Path, store: Store) -> contract.SearchEngine:
        return self.engine(index_dir, store)

    def writer(self, store: Store) -> DroppedFts5:
        # The store keeps no FTS5 index meanwhile; a switch back to FTS5 rebuilds it.
        self.package.require()  # before the store is written: choosing it without it says so
        from kb.engines.fts5 import DroppedFts5  # deferred: 23 modules more

        return DroppedFts5(store)

    def after_commit(
        self, index_dir: Path, store: Store, streams: Streams | None, rebuild: bool
    ) -> None:
        # After the store's commit: a crash between the two leaves the index behind, and
        # the next ingest catches it up from the store's generations.
        self.index(index_dir).sync(store, streams, rebuild)
