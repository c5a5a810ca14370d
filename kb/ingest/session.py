"""Writing the store: one ingest under the ingest lock, a rebuild made beside the old store
and swapped in whole, then the embeddings for search by meaning (kb/meaning).

The facade's ``ingest`` is a call to ``write_store``; everything here runs with the lock
held, and the store is closed whatever happens.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from kb.engines.registry import configured_entry, engine_names
from kb.errors import KbError, StoreError, os_error_message
from kb.ingest.lock import ingest_lock
from kb.ingest.run import Ingester, IngestStats, ProgressCallback
from kb.models import Problem
from kb.store import Store, check_location, store_errors

if TYPE_CHECKING:
    from kb.config import Config
    from kb.meaning.embedder import Embedder


def write_store(
    config: Config,
    paths: list[Path] | None,
    rebuild: bool,
    progress: ProgressCallback | None,
    lock_wait: float | None,
    engine: str | None,
    reset_readers: Callable[[], None],
    embed: bool = True,
) -> IngestStats:
    """Bring the store up to date with the notes (all roots, or only ``paths``), or
    rebuild it (``engine``: the one to switch to); ``reset_readers`` when an index kept
    outside the store may have been replaced; then, if ``embed``, embed what changed."""
    path = config.store_path
    check_location(path)
    try:
        with ingest_lock(config, lock_wait):
            _remove_database(_beside(path))  # left by a rebuild that was killed
            if rebuild:
                stats = _rebuild(config, progress, engine, reset_readers)
            else:
                # Readers need not reopen: WAL readers see the commit on their next
                # read, and the caches are keyed by the store's generation.
                stats = _ingest_into(config, path, paths, False, progress, None, reset_readers)
            if embed:
                try:
                    _embed(config, path, stats, progress)
                except (StoreError, OSError) as exc:
                    raise _embedding_stopped(stats, exc) from exc
            return stats
    except OSError as exc:
        raise StoreError(os_error_message(exc)) from exc


def _rebuild(
    config: Config,
    progress: ProgressCallback | None,
    engine: str | None,
    reset_readers: Callable[[], None],
) -> IngestStats:
    """Build a new store beside the old one and swap it in only when it is complete:
    a rebuild that fails (disk full, Ctrl-C) leaves the old store as it was. The old
    store is never opened for writing, so a damaged one is no obstacle."""
    path = config.store_path
    fresh = _beside(path)
    try:
        chosen = engine or _chosen_engine(path)
        stats = _ingest_into(config, fresh, None, True, progress, chosen, reset_readers)
        # The old store's journal files must not meet the new store: remove them first.
        _remove_database(path, main=False)
        fresh.replace(path)  # atomic: readers see the old store or the new one
    except BaseException:
        _remove_database(fresh)
        raise
    return stats


def _ingest_into(
    config: Config,
    path: Path,
    paths: list[Path] | None,
    rebuild: bool,
    progress: ProgressCallback | None,
    engine: str | None,
    reset_readers: Callable[[], None],
) -> IngestStats:
    store = Store.open(path, create=True)
    try:
        with store_errors(path):
            if engine is not None:
                store.meta.set("engine", engine)  # --engine on a rebuild: the new choice
            entry = configured_entry(config, store)
            ingester = Ingester(config, store, progress, engine=entry)
            try:
                stats = ingester.run(paths, rebuild=rebuild)
                entry.after_commit(config.index_dir, store, ingester.streams, rebuild)
            finally:
                if ingester.streams is not None:
                    ingester.streams.close()
            if not entry.in_store:  # its index may have been rebuilt: open it again
                reset_readers()
            if rebuild:
                store.seal()
        return stats
    finally:
        store.close()


def embed_store(
    config: Config,
    progress: ProgressCallback | None,
    stop: Callable[[], bool] | None,
    lock_wait: float | None,
) -> IngestStats:
    """Embed the notes whose vectors are missing or stale, under the ingest lock (the
    app's worker, after an ingest without embedding); ``stop`` is asked between batches
    (each batch is committed: what was embedded stays). Only ``embedded``,
    ``embed_seconds``, ``warnings`` and ``problems`` of the answer are filled. Raises
    IngestLocked when another ingest holds the lock past ``lock_wait``."""
    stats = IngestStats()
    path = config.store_path
    check_location(path)
    try:
        with ingest_lock(config, lock_wait):
            _embed(config, path, stats, progress, stop)
    except OSError as exc:
        raise StoreError(os_error_message(exc)) from exc
    return stats


def _embed(
    config: Config,
    path: Path,
    stats: IngestStats,
    progress: ProgressCallback | None,
    stop: Callable[[], bool] | None = None,
) -> None:
    """After the words are committed: embed the notes that changed for search by
    meaning (kb/meaning), each batch committed, so a search never waits for it."""
    # deferred: the embedder's settings; numpy and the model load only when configured
    from kb.meaning.embedder import EmbedderError, configured

    settings = str(config.home / "kb.yaml")
    try:
        choice = configured(config.raw)
        if choice is None:
            return
        from kb.meaning.hybrid import Meaning  # deferred: 4 modules more
        from kb.meaning.index import embed_pending, write_vectors_file  # deferred: loads numpy

        store = Store.open(path, create=True)
        try:
            with store_errors(path):
                embedder = Meaning(choice).embedder()
                done = embed_pending(store, embedder, progress, stop)
                if not (stop and stop()):
                    _write_vectors_file(store, embedder, write_vectors_file, stats)
                    from kb.meaning.floor import remeasure  # numpy is loaded by now

                    remeasure(store, embedder)
        finally:
            store.close()
    except EmbedderError as exc:
        stats.problems.append((settings, Problem("meaning", str(exc))))
        stats.warnings += 1
        return
    stats.embedded = done.notes
    stats.embed_seconds = done.seconds
    repaired = damage_repaired(done.damaged, done.stamp_damaged)
    if repaired:
        stats.problems.append((str(path), Problem("meaning", repaired)))
        stats.warnings += 1
    for note, why in done.failed:
        message = f"search by meaning skips this note (the embedder failed: {why})"
        stats.problems.append((note, Problem("meaning", message)))
        stats.warnings += 1


def _embedding_stopped(stats: IngestStats, exc: StoreError | OSError) -> StoreError:
    """A failure after the words were committed (a full disk while embedding) says so:
    the notes are stored, and only search by meaning lags."""
    cause = os_error_message(exc) if isinstance(exc, OSError) else str(exc)
    counts = stats.counts()
    done = ", ".join(f"{key} {counts[key]}" for key in ("added", "updated", "moved", "removed"))
    return StoreError(
        f"the notes are stored ({done}) and found by their words, but embedding them for "
        f"search by meaning stopped: {cause}; 'kb ingest' embeds the rest"
    )


def _write_vectors_file(
    store: Store,
    embedder: Embedder,
    write: Callable[[Store, Embedder], bool],
    stats: IngestStats,
) -> None:
    """The vectors as a search reads them (memory-mapped, beside the store) made again
    when stale; a folder that cannot take it costs searches their speed, not their
    answers: one warning."""
    try:
        write(store, embedder)
    except OSError as exc:
        where = str(store.path.parent) if store.path else "index/"
        message = f"search by meaning reads the store row by row: {os_error_message(exc)}"
        stats.problems.append((where, Problem("meaning", message)))
        stats.warnings += 1


def damage_repaired(notes: int, stamp: bool) -> str:
    """The one line that says what damage to the vectors this run repaired ('' none)."""
    parts = []
    if notes:
        parts.append(f"the vectors of {notes} note{'s' if notes != 1 else ''} had the wrong size")
    if stamp:
        parts.append("the vectors' stamp was not a number")
    if not parts:
        return ""
    done = "embedded again" if notes else "stamp written anew"
    return f"search by meaning was damaged ({'; '.join(parts)}): {done}"


def _beside(path: Path) -> Path:
    """Where a rebuild builds the new store."""
    return path.with_name(path.name + ".new")


def _remove_database(path: Path, main: bool = True) -> None:
    """Remove a database file (unless not ``main``) and its journal files."""
    for suffix in ("-wal", "-shm", "-journal", *([""] if main else [])):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _chosen_engine(path: Path) -> str | None:
    """The engine chosen with ``--engine`` in the old store, which a rebuild keeps; None
    when the old store cannot tell (missing or damaged) or names an engine kb does not
    know (the rebuild then takes kb.yaml's or the default)."""
    try:
        store = Store.open(path, create=False, check=False)  # a damaged store may tell
    except KbError:
        return None
    try:
        with store_errors(path):
            chosen = store.meta.get("engine")
        return chosen if chosen in engine_names() else None
    except KbError:
        return None
    finally:
        store.close()
