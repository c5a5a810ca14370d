"""Embedding the notes that changed, and the passages nearest to a query.

Embedding runs after the lexical ingest has committed: a search never waits for it. Each
batch of notes is its own transaction, so a killed run loses at most one batch and the
next run goes on from there (the notes whose stored hash differs from the note's).
Vectors are stored as int8 with one float32 scale each: a quarter of float32's size, and
a cosine within about 0.01 of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from threading import Lock
from typing import TYPE_CHECKING

import numpy as np

from kb.meaning.passages import Passage, split_passages
from kb.store import PassageRow, PendingNote, Store

if TYPE_CHECKING:
    from kb.meaning.embedder import Embedder

BATCH_NOTES = 16  # notes per transaction (a killed run loses at most these)
SCALE = np.dtype(np.float32).itemsize


@dataclass(slots=True)
class EmbedStats:
    notes: int = 0
    passages: int = 0
    characters: int = 0
    seconds: float = 0.0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    reset: bool = False  # the vectors came from another embedder: dropped


def pack(rows: np.ndarray) -> list[bytes]:
    """Unit float32 rows as int8 components and a float32 scale each."""
    peak = np.abs(rows).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    quantized = np.round(rows / peak * 127).astype(np.int8)
    scales = (peak[:, 0] / 127).astype(np.float32)
    return [q.tobytes() + s.tobytes() for q, s in zip(quantized, scales, strict=True)]


def unpack(blobs: list[bytes], dimensions: int) -> np.ndarray:
    """The float32 rows (unit length again) of packed vectors."""
    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), dimensions + SCALE)
    values = raw[:, :dimensions].view(np.int8).astype(np.float32)
    scales = raw[:, dimensions:].copy().view(np.float32)
    rows = values * scales
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms


def embed_pending(
    store: Store,
    embedder: Embedder,
    progress: Callable[[int, int], None] | None = None,
) -> EmbedStats:
    """Embed every note whose vectors are missing or stale; returns what it did."""
    stats = EmbedStats()
    started = time.perf_counter()
    if store.vectors.signature() != embedder.signature:
        with store.transaction():  # another model's vectors are never mixed with these
            stats.reset = store.vectors.signature() is not None
            store.vectors.clear()
            store.vectors.set_signature(embedder.signature)
    total = store.vectors.pending_count()
    done = 0
    while True:
        pending = store.vectors.pending(BATCH_NOTES)
        if not pending:
            break
        notes = []
        for note in pending:
            row = store.notes.by_id(note.note_id)
            if row is None:
                continue
            headings = [(h.level, h.text) for h in store.notes.headings(note.note_id)]
            notes.append((note, row.path, row.title, split_passages(row.title, row.text, headings)))
        vectors = _embed(embedder, notes, stats)
        with store.transaction():
            for (note, _path, _title, passages), rows in zip(notes, vectors, strict=True):
                # A note the embedder failed on keeps no passages (its words stay).
                packed = pack(rows) if rows is not None and len(rows) else []
                kept = zip(passages, packed, strict=True) if rows is not None else iter(())
                store.vectors.replace(
                    note.note_id,
                    note.hash,
                    [
                        PassageRow(note.note_id, p.position, p.start, p.end, p.heading, blob)
                        for p, blob in kept
                    ],
                    failed=rows is None,
                )
                stats.notes += 1
                stats.passages += len(packed)
        done += len(pending)
        if progress:
            progress(min(done, total), total)
    stats.seconds = time.perf_counter() - started
    return stats


def _embed(
    embedder: Embedder,
    notes: list[tuple[PendingNote, str, str, list[Passage]]],
    stats: EmbedStats,
) -> list[np.ndarray | None]:
    """Each note's passage vectors, or None for a note the embedder failed on (it keeps
    its words; one warning)."""
    texts = [p.embedded_text(title) for _, _, title, passages in notes for p in passages]
    stats.characters += sum(len(t) for t in texts)
    try:
        rows = embedder.encode_passages(texts)
        if rows.shape[0] != len(texts) or not np.isfinite(rows).all():
            raise ValueError("it returned a vector that is not a number")
    except Exception:  # one bad note must not cost the batch: try them one by one
        return [
            _embed_one(embedder, path, title, passages, stats) for _, path, title, passages in notes
        ]
    result: list[np.ndarray | None] = []
    at = 0
    for _, _, _, passages in notes:
        result.append(rows[at : at + len(passages)])
        at += len(passages)
    return result


def _embed_one(
    embedder: Embedder, path: str, title: str, passages: list[Passage], stats: EmbedStats
) -> np.ndarray | None:
    try:
        rows = embedder.encode_passages([p.embedded_text(title) for p in passages])
        if rows.shape[0] != len(passages) or not np.isfinite(rows).all():
            raise ValueError("it returned a vector that is not a number")
    except Exception as exc:
        stats.failed.append((path, f"{type(exc).__name__}: {exc}"))
        return None
    return rows


@dataclass(frozen=True, slots=True)
class Near:
    note_id: int
    position: int
    similarity: float


class VectorIndex:
    """Every stored passage's vector in one matrix, read once per change of the vectors."""

    def __init__(self, store: Store, dimensions: int) -> None:
        notes, positions, blobs = [], [], []
        for note_id, position, blob in store.vectors.all_vectors():
            notes.append(note_id)
            positions.append(position)
            blobs.append(blob)
        self.notes = np.asarray(notes, dtype=np.int64)
        self.positions = np.asarray(positions, dtype=np.int32)
        self.matrix = unpack(blobs, dimensions)

    def nearest(self, query: np.ndarray, notes: int) -> list[Near]:
        """The best passage of each of the ``notes`` nearest notes, nearest first."""
        if not len(self.notes):
            return []
        scores = self.matrix @ query
        take = min(len(scores), notes * 8)
        best = np.argpartition(-scores, take - 1)[:take]
        best = best[np.argsort(-scores[best])]
        found: dict[int, Near] = {}
        for index in best:
            note_id = int(self.notes[index])
            if note_id not in found:
                found[note_id] = Near(note_id, int(self.positions[index]), float(scores[index]))
                if len(found) == notes:
                    break
        return list(found.values())


_CACHE: dict[tuple[str, str, int], VectorIndex] = {}
_CACHE_LOCK = Lock()


def vector_index(store: Store, embedder: Embedder) -> VectorIndex | None:
    """The store's vectors when they come from ``embedder``, kept while they are unchanged."""
    if store.vectors.signature() != embedder.signature:
        return None
    key = (str(store.path), embedder.signature, store.vectors.stamp())
    with _CACHE_LOCK:
        index = _CACHE.get(key)
        if index is None:
            _CACHE.clear()
            index = _CACHE[key] = VectorIndex(store, embedder.dimensions)
    return index
