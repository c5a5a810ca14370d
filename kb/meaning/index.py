"""Embedding the notes that changed, and the passages nearest to a query.

Embedding runs after the lexical ingest has committed: a search never waits for it. Each
batch of notes is its own transaction, so a killed run loses at most one batch and the
next run goes on from there (the notes whose stored hash differs from the note's).
Vectors are stored with 4 bits a component and one float32 scale (an eighth of float32's
size); a search scores them all while they are few, else those nearest by their signs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from threading import Lock
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

import numpy as np

from kb.meaning.arrays import read_arrays, write_arrays
from kb.meaning.passages import Passage, split_passages, splitting
from kb.store import PassageRow, PendingNote, Store

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from kb.meaning.embedder import Embedder

BATCH_NOTES = 16  # notes per transaction (a killed run loses at most these)
EMBED_THREADS = 2  # a batch's passages are encoded in this many threads
THREADS_FROM = 32  # passages in a batch from which the threads pay
SCALE = np.dtype(np.float32).itemsize
# Components per vector are stored in this many bits, with one float32 scale: 4 bits halve
# the store's growth against int8 (measured: 5,830 passages 3.0 MB -> 1.5 MB of vectors).
BITS = 4
LEVELS = {8: 127, 4: 7}  # the largest component maps to this many steps from zero
FORMAT = f"int{BITS}"  # kept with the vectors' signature: another format re-embeds


def stored_signature(embedder: Embedder) -> str:
    """What the store keeps beside the vectors: the embedder's signature, the format and
    how the notes were split into passages."""
    return f"{embedder.signature}+{FORMAT}+{splitting()}"


@dataclass(slots=True)
class EmbedStats:
    notes: int = 0
    passages: int = 0
    characters: int = 0
    seconds: float = 0.0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    reset: bool = False  # the vectors came from another embedder: dropped
    damaged: int = 0  # notes whose vectors could not be read (wrong size): embedded again
    stamp_damaged: bool = False  # the vectors' stamp was not a whole number: written anew


def pack(rows: np.ndarray, bits: int = BITS) -> list[bytes]:
    """Unit float32 rows as ``bits``-bit components (8: int8; 4: two a byte, offset by
    8) and a float32 scale each."""
    levels = LEVELS[bits]
    peak = np.abs(rows).max(axis=1, keepdims=True)
    peak[peak == 0] = 1.0
    quantized = np.round(rows / peak * levels).astype(np.int8)
    scales = (peak[:, 0] / levels).astype(np.float32)
    if bits == 4:
        if quantized.shape[1] % 2:  # an odd width: one zero component more
            quantized = np.pad(quantized, ((0, 0), (0, 1)))
        nibbles = (quantized + 8).astype(np.uint8)
        quantized = (nibbles[:, 0::2] << 4 | nibbles[:, 1::2]).view(np.int8)
    return [q.tobytes() + s.tobytes() for q, s in zip(quantized, scales, strict=True)]


def unpack(blobs: list[bytes], dimensions: int, bits: int = BITS) -> np.ndarray:
    """The float32 rows (unit length again) of packed vectors."""
    if not blobs:
        return np.zeros((0, dimensions), dtype=np.float32)
    width = _width(dimensions, bits)
    raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width + SCALE)
    return _unit_rows(raw[:, :width], dimensions, bits)


def embed_pending(
    store: Store,
    embedder: Embedder,
    progress: Callable[[int, int], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> EmbedStats:
    """Embed every note whose vectors are missing or stale; returns what it did. ``stop``
    is asked before each batch: true ends the run (the batches done are committed)."""
    stats = EmbedStats()
    started = time.perf_counter()
    if store.vectors.signature() != stored_signature(embedder):
        with store.transaction():  # another model's vectors are never mixed with these
            stats.reset = store.vectors.signature() is not None
            store.vectors.clear()
            store.vectors.set_signature(stored_signature(embedder))
    _repair(store, embedder.dimensions, stats)
    total = store.vectors.pending_count()
    done = 0
    while stop is None or not stop():
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


def _repair(store: Store, dimensions: int, stats: EmbedStats) -> None:
    """Vectors a search cannot read (another size than the model's) dropped, so that
    their notes are embedded again below, and a stamp that is not a whole number written
    anew: damage from outside kb that ``--rebuild`` alone used to repair."""
    damaged = store.vectors.wrong_size(_width(dimensions) + SCALE)
    stats.stamp_damaged = store.vectors.stamp_damaged()
    if damaged or stats.stamp_damaged:
        with store.transaction():
            store.vectors.forget(damaged)  # and a new stamp
    stats.damaged = len(damaged)


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
        rows = _encode(embedder, texts)
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


def _encode(embedder: Embedder, texts: list[str]) -> np.ndarray:
    """The texts' vectors; a batch of THREADS_FROM texts or more in two threads (numpy's
    products and the sentencepiece tokenizer release the GIL: measured 2.34 s -> 1.75 s
    wall for 320 passages with the second core busy, the same CPU seconds and vectors)."""
    if len(texts) < THREADS_FROM or getattr(embedder, "threads_itself", False):
        return embedder.encode_passages(texts)
    half = len(texts) // 2
    with _one_blas_thread():
        futures = [_threads().submit(embedder.encode_passages, part) for part in
                   (texts[:half], texts[half:])]  # fmt: skip
        return np.concatenate([future.result() for future in futures])


_POOL: list[ThreadPoolExecutor] = []


def _threads() -> ThreadPoolExecutor:
    # deferred: loads concurrent.futures and logging (5-30 ms of a search, which never embeds)
    from concurrent.futures import ThreadPoolExecutor

    with _CACHE_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(EMBED_THREADS, thread_name_prefix="kb-embed"))
        return _POOL[0]


def _one_blas_thread() -> AbstractContextManager[object]:
    """BLAS held to one thread for both embedding threads together: a model's own limit,
    entered and left by each thread, would otherwise hand BLAS back its threads while the
    other still runs (they spin against each other on two cores)."""
    try:
        from threadpoolctl import threadpool_limits  # meaning's: see pyproject
    except ImportError:
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


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


# Up to this many passages every one is scored against a float32 matrix (32 MB: about
# 1,400 notes). Beyond, the passages stay packed as stored (an eighth of float32) with one
# sign bit per component, and only the CANDIDATES whose signs differ least from the
# query's are scored. Measured (benchmarks/bench_nearest.py, 10,000 generated notes, the
# relevance benchmark's 132 queries): of the exact scan's 30 nearest notes the signs keep
# 99.97% at 17,590 passages, 99.4% at 35,602, 98.4% at 117,205 (there in 0.45x the time,
# 0.16x the memory and 0.07x the reading of the exact scan). A fixed number of candidates
# keeps less as the passages grow (at 1,174,909, 100,000 notes: 8,192 kept 94.7%, worst
# query 50%), so past 262,144 passages one in CANDIDATE_SHARE is scored (there 32,768 kept
# 98.6% in 24 ms a query, the exact scan 89 ms and 2.4 GB).
EXACT_AT_MOST = 16_384
CANDIDATES = 8_192
CANDIDATE_SHARE = 32
_READ_AT_ONCE = 16_384  # vectors read from the store (and their signs made) at a time
_SCORE_AT_ONCE = 2_048  # packed rows scored at a time (their temporaries stay small)


class VectorIndex:
    """Every stored passage's vector, read once per change of the vectors and kept in
    memory (the app and the servers ask many questions of one)."""

    def __init__(
        self,
        store: Store,
        dimensions: int,
        exact_at_most: int = EXACT_AT_MOST,
        candidates: int = CANDIDATES,
    ) -> None:
        self.dimensions = dimensions
        self.candidates = candidates
        self.notes, self.positions, packed = _read(store, dimensions)
        self.matrix: np.ndarray | None = None  # the exact scan's unit rows
        self.codes: np.ndarray | None = None  # else: the packed components, no scale
        self.signs: np.ndarray | None = None  # and their signs, 64 a word, word-major
        self.norms: np.ndarray | None = None  # the codes' lengths, when kept (a file)
        self.asked = 0
        if len(self.notes) <= exact_at_most:
            self.matrix = _unit_rows(packed, dimensions)
        else:
            self.codes = packed
            self.signs = _sign_words(packed, dimensions)

    @classmethod
    def kept(
        cls,
        arrays: dict[str, np.ndarray],
        dimensions: int,
        exact_at_most: int = EXACT_AT_MOST,
        candidates: int = CANDIDATES,
    ) -> VectorIndex:
        """The index over the arrays of the vectors' file (memory-mapped: nothing is read
        until a query asks). The exact scan's matrix is made on the second query: a cold
        ``kb search`` asks one and scores the packed rows (16-20 ms of CPU at 11,506
        passages, against 0.1-0.6 s to make the matrix), the app and the servers ask many."""
        index = cls.__new__(cls)
        index.dimensions = dimensions
        index.candidates = candidates
        index.asked = 0
        index.notes, index.positions = arrays["notes"], arrays["positions"]
        index.codes, index.norms = arrays["codes"], arrays["norms"]
        index.matrix = None
        index.signs = None
        if len(index.notes) > exact_at_most:
            index.signs = arrays.get("signs")
            if index.signs is None:  # kept for a larger exact scan than this one
                index.signs = _sign_words(index.codes, dimensions)
        return index

    def nearest(self, query: np.ndarray, notes: int) -> list[Near]:
        """The best passage of each of the ``notes`` nearest notes, nearest first."""
        if not len(self.notes):
            return []
        rows = None
        self._asked_again()
        if self.matrix is not None:
            # One product, no BLAS threads: numpy's BLAS matvec on two threads waits for a
            # busy second core (measured 20-33 ms at 5,830 passages on a loaded machine,
            # against 0.4 ms for this single-threaded loop; at 58,300 5 ms either way).
            scores = np.einsum("ij,j->i", self.matrix, query)
        elif self.signs is None:
            assert self.codes is not None  # the first query of a kept index: every row
            scores = _cosines(self.codes, query, norms=self.norms)
        else:
            assert self.codes is not None
            rows = self._nearest_by_signs(query)
            norms = None if self.norms is None else self.norms[rows]
            scores = _cosines(self.codes[rows], query, norms=norms)
        take = min(len(scores), notes * 8)
        best = np.argpartition(-scores, take - 1)[:take]
        best = best[np.argsort(-scores[best], kind="stable")]
        found: dict[int, Near] = {}
        for index in best:
            row = int(rows[index]) if rows is not None else int(index)
            note_id = int(self.notes[row])
            if note_id not in found:
                found[note_id] = Near(note_id, int(self.positions[row]), float(scores[index]))
                if len(found) == notes:
                    break
        return list(found.values())

    def _asked_again(self) -> None:
        """Count a query; a kept index (a file) makes its exact scan's matrix on the
        second one."""
        self.asked += 1
        if self.matrix is None and self.signs is None and self.asked > 1:
            assert self.codes is not None
            # Set whole when made; the codes stay for a thread that already chose them.
            self.matrix = _unit_rows(np.asarray(self.codes), self.dimensions)

    def _nearest_by_signs(self, query: np.ndarray) -> np.ndarray:
        """The rows of the ``candidates`` passages whose signs differ least from the
        query's (Hamming distance, one word of 64 components at a time over every row)."""
        assert self.signs is not None
        count = self.signs.shape[1]
        wanted_count = candidate_count(count, self.candidates)
        if count <= wanted_count:
            return np.arange(count)
        wanted = _pack_signs(query[np.newaxis, :] > 0)[0]
        distance = np.zeros(count, dtype=np.uint16)
        differ = np.empty(count, dtype=np.uint64)
        ones = np.empty(count, dtype=np.uint8)
        for column, word in zip(self.signs, wanted, strict=True):
            np.bitwise_xor(column, word, out=differ)
            np.bitwise_count(differ, out=ones)
            distance += ones
        # The distance at which the count reaches the candidates: all nearer, then the
        # first rows at that distance (a counting pass: cheaper than a partial sort).
        edge = int(np.searchsorted(np.cumsum(np.bincount(distance)), wanted_count))
        nearer = np.flatnonzero(distance < edge)
        at_edge = np.flatnonzero(distance == edge)[: wanted_count - len(nearer)]
        return np.concatenate([nearer, at_edge])


@dataclass(frozen=True, slots=True)
class NoteEvidence:
    """What the model says of every note it scored for one query (arrays, one row a note):
    its best passage's cosine and position, and the whole note's cosine."""

    note_ids: np.ndarray
    passage: np.ndarray
    whole: np.ndarray
    position: np.ndarray


def note_evidence(
    index: VectorIndex,
    query: np.ndarray,
    whole_for: Collection[int] | None = None,
    nearest: int = 0,
) -> NoteEvidence:
    """Each note's best passage and whole-note cosine with ``query``. The whole note is the
    mean of its passages' unit vectors: its cosine is the sum of theirs over that mean's
    length (each note's length worked out once per index, when first asked). With
    ``whole_for``, only those notes and the ``nearest`` notes by best passage get their
    whole (the rest: their best passage; kb.meaning.fusion picks its candidates among
    those nearest), so a search sums a few dozen notes' passages, not every note's. Past
    the exact scan only the candidates are scored: a note's whole is its best passage."""
    if not len(index.notes):
        empty = np.zeros(0)
        return NoteEvidence(empty.astype(np.int64), empty, empty, empty.astype(np.int32))
    index._asked_again()
    if index.matrix is not None:
        rows = np.arange(len(index.notes))
        scores = np.einsum("ij,j->i", index.matrix, query)
    elif index.signs is None:  # a kept index's first query: every packed row, exactly
        assert index.codes is not None
        rows = np.arange(len(index.notes))
        scores = _cosines(index.codes, query, norms=index.norms)
    else:
        assert index.codes is not None
        rows = index._nearest_by_signs(query)
        norms = None if index.norms is None else index.norms[rows]
        scores = _cosines(index.codes[rows], query, norms=norms)
    ids, inverse = np.unique(index.notes[rows], return_inverse=True)
    order = np.argsort(-scores, kind="stable")
    _, first = np.unique(inverse[order], return_index=True)  # each note's best row
    best_rows = order[first]
    passage = scores[best_rows].astype(np.float64)
    whole = passage.copy()
    if index.signs is None:  # every passage scored: a note's whole is the mean of them
        counts = np.bincount(inverse, minlength=len(ids))
        means = np.bincount(inverse, weights=scores, minlength=len(ids)) / counts
        if whole_for is None:
            chosen = np.arange(len(ids))
        else:
            wanted = np.isin(ids, np.fromiter(whole_for, dtype=np.int64))
            wanted[np.argsort(-passage, kind="stable")[:nearest]] = True
            chosen = np.flatnonzero(wanted)
        lengths = _mean_lengths(index, ids[chosen])
        whole[chosen] = means[chosen] / lengths
    return NoteEvidence(ids, passage, whole, index.positions[rows[best_rows]])


class _Lengths:
    """Each note's mean unit vector's length, worked out when first asked."""

    def __init__(self, index: VectorIndex) -> None:
        self.by_note = np.argsort(index.notes, kind="stable")  # rows grouped by note
        self.sorted_notes = index.notes[self.by_note]
        self.known: dict[int, float] = {}


_LENGTHS: WeakKeyDictionary[VectorIndex, _Lengths] = WeakKeyDictionary()  # kept with its index


def _mean_lengths(index: VectorIndex, notes: np.ndarray) -> np.ndarray:
    """The length of each of ``notes``' mean passage vector (exact scan only: from the
    matrix, or a kept index's packed rows before it has one)."""
    lengths = _LENGTHS.get(index)
    if lengths is None:
        lengths = _LENGTHS[index] = _Lengths(index)
    found = np.empty(len(notes))
    for at, note in enumerate(notes.tolist()):
        length = lengths.known.get(note)
        if length is None:
            left = np.searchsorted(lengths.sorted_notes, note, side="left")
            right = np.searchsorted(lengths.sorted_notes, note, side="right")
            own = lengths.by_note[left:right]
            if index.matrix is not None:
                rows = index.matrix[own]
            else:
                assert index.codes is not None
                rows = _unit_rows(np.asarray(index.codes[own]), index.dimensions)
            length = float(np.linalg.norm(rows.mean(axis=0))) or 1.0
            lengths.known[note] = length
        found[at] = length
    return found


def candidate_count(passages: int, least: int = CANDIDATES) -> int:
    """How many passages the signs hand on to be scored exactly: ``least``, or one in
    CANDIDATE_SHARE of them when that is more (the share keeps what a fixed number loses
    as the passages grow)."""
    return max(least, passages // CANDIDATE_SHARE)


def _read(store: Store, dimensions: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every passage's note, position and packed components (without the scale: a
    cosine does not need it), read in slices so that no list of a million blobs is kept."""
    width = _width(dimensions)
    notes: list[int] = []
    positions: list[int] = []
    parts: list[np.ndarray] = []
    rows = store.vectors.all_vectors(width + SCALE)  # a damaged one left out: kb ingest repairs
    while True:
        blobs = []
        for note_id, position, blob in islice(rows, _READ_AT_ONCE):
            notes.append(note_id)
            positions.append(position)
            blobs.append(blob)
        if not blobs:
            break
        raw = np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(len(blobs), width + SCALE)
        parts.append(raw[:, :width])
    packed = np.concatenate(parts) if parts else np.zeros((0, width), dtype=np.uint8)
    return np.asarray(notes, dtype=np.int64), np.asarray(positions, dtype=np.int32), packed


def _width(dimensions: int, bits: int = BITS) -> int:
    return dimensions if bits == 8 else (dimensions + 1) // 2


def _components(packed: np.ndarray, dimensions: int, bits: int = BITS) -> np.ndarray:
    """The packed rows' components as float32 steps (-7..7 for 4 bits), unscaled."""
    if bits == 8:
        return packed.view(np.int8).astype(np.float32)
    values = np.empty((len(packed), packed.shape[1] * 2), dtype=np.float32)
    values[:, 0::2] = (packed >> 4).astype(np.float32) - 8
    values[:, 1::2] = (packed & 0x0F).astype(np.float32) - 8
    return values[:, :dimensions]


def _unit_rows(packed: np.ndarray, dimensions: int, bits: int = BITS) -> np.ndarray:
    """The packed rows as float32 unit vectors (a row's scale would cancel here)."""
    rows = _components(packed, dimensions, bits)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    rows /= norms
    return rows


def _cosines(
    packed: np.ndarray, query: np.ndarray, bits: int = BITS, norms: np.ndarray | None = None
) -> np.ndarray:
    """Each packed row's cosine with a unit query (the rows' scales cancel), high and low
    nibbles apart: a third of the time of unpacking them into one matrix first; with
    ``norms`` (the rows' lengths, kept) half of that again. _SCORE_AT_ONCE rows at a time:
    a fresh process's first query spent 3-4x the CPU time faulting in the pages of whole
    temporaries (76 -> 20 ms at 11,506 passages)."""
    if bits == 8:
        halves = [query]
    else:
        padded = np.zeros(packed.shape[1] * 2, dtype=np.float32)
        padded[: len(query)] = query
        halves = [padded[0::2].copy(), padded[1::2].copy()]
    scores = np.empty(len(packed), dtype=np.float32)
    for start in range(0, len(packed), _SCORE_AT_ONCE):
        block = packed[start : start + _SCORE_AT_ONCE]
        if bits == 8:
            parts = [(block.view(np.int8).astype(np.float32), halves[0])]
        else:
            high = (block >> 4).astype(np.float32) - 8
            low = (block & 0x0F).astype(np.float32) - 8
            parts = [(high, halves[0]), (low, halves[1])]
        dot = sum(np.einsum("ij,j->i", values, half) for values, half in parts)
        lengths = _norms(parts) if norms is None else norms[start : start + _SCORE_AT_ONCE]
        scores[start : start + len(block)] = dot / lengths
    return scores


def _norms(parts: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    norms = np.sqrt(sum(np.einsum("ij,ij->i", values, values) for values, _ in parts))
    norms[norms == 0] = 1.0
    return np.asarray(norms, dtype=np.float32)


def packed_norms(packed: np.ndarray, dimensions: int, bits: int = BITS) -> np.ndarray:
    """Each packed row's length (its components unscaled): the squares of a byte's
    components looked up, _SCORE_AT_ONCE rows at a time (a third of the time of unpacking
    them; an odd width's padding nibble is a zero component)."""
    values = np.arange(256)
    if bits == 8:
        squares = values.astype(np.uint8).view(np.int8).astype(np.float32) ** 2
    else:
        squares = ((values >> 4) - 8.0) ** 2 + ((values & 0x0F) - 8.0) ** 2
    squares = squares.astype(np.float32)
    norms = np.empty(len(packed), dtype=np.float32)
    for start in range(0, len(packed), _SCORE_AT_ONCE):
        block = packed[start : start + _SCORE_AT_ONCE]
        norms[start : start + len(block)] = np.sqrt(squares[block].sum(axis=1))
    norms[norms == 0] = 1.0
    return norms


def _pack_signs(positive: np.ndarray) -> np.ndarray:
    """Rows of booleans as rows of 64-bit words (padded with zeros)."""
    bits = np.packbits(positive, axis=1)
    padding = -bits.shape[1] % 8
    if padding:
        bits = np.pad(bits, ((0, 0), (0, padding)))
    return np.ascontiguousarray(bits).view(np.uint64)


def _sign_words(packed: np.ndarray, dimensions: int, bits: int = BITS) -> np.ndarray:
    """Each row's positive components as bits: (words, rows), a word's column contiguous
    so that one pass over a column serves every row."""
    words = (dimensions + 63) // 64
    signs = np.empty((words, len(packed)), dtype=np.uint64)
    for start in range(0, len(packed), _READ_AT_ONCE):
        part = packed[start : start + _READ_AT_ONCE]
        if bits == 8:
            positive = part.view(np.int8) > 0
        else:
            positive = np.empty((len(part), part.shape[1] * 2), dtype=bool)
            positive[:, 0::2] = part >= 0x90  # a high nibble above 8: above zero
            positive[:, 1::2] = (part & 0x0F) > 8
        signs[:, start : start + len(part)] = _pack_signs(positive[:, :dimensions]).T
    return signs


_CACHE: dict[tuple[str, str, int], VectorIndex] = {}
_CACHE_LOCK = Lock()
_PENDING: dict[tuple[str, int, int], int] = {}  # (store, generation, stamp): notes behind


def vector_index(store: Store, embedder: Embedder) -> VectorIndex | None:
    """The store's vectors when they come from ``embedder``, kept while they are unchanged."""
    if store.vectors.signature() != stored_signature(embedder):
        return None
    key = (str(store.path), embedder.signature, store.vectors.stamp())
    with _CACHE_LOCK:
        index = _CACHE.get(key)
        if index is None:
            _CACHE.clear()
            kept = read_vectors_file(store, embedder)
            if kept is not None:
                index = VectorIndex.kept(kept, embedder.dimensions, EXACT_AT_MOST, CANDIDATES)
            else:  # none yet, or stale: the store's rows (kb ingest writes the file)
                index = VectorIndex(store, embedder.dimensions, EXACT_AT_MOST, CANDIDATES)
            _CACHE[key] = index
    return index


# The vectors as a search reads them, beside the store (index/): derived from it, written
# by kb ingest after the embedding, trusted only when it names the store, the model, the
# vectors' stamp and the notes' generation it was made from (kb/meaning/arrays.py).
VECTORS_FILE = "vectors.kbarrays"
VECTORS_LAYOUT = 1


def vectors_path(store: Store) -> Path | None:
    return None if store.path is None else store.path.parent / VECTORS_FILE


def _vectors_meta(store: Store, embedder: Embedder) -> dict[str, object] | None:
    """What the vectors' file must say it was made from; None when the store cannot
    tell (no id, or a damaged stamp: the file is not trusted)."""
    store_id, stamp = store.meta.store_id, store.vectors.stamp()
    if not store_id or stamp < 0:
        return None
    return {
        "layout": VECTORS_LAYOUT,
        "store": store_id,
        "signature": stored_signature(embedder),
        "stamp": stamp,
        "generation": store.generation,
        "dimensions": embedder.dimensions,
    }


def read_vectors_file(store: Store, embedder: Embedder) -> dict[str, np.ndarray] | None:
    """The vectors' file's arrays when it was made from the store as it is; else None."""
    path, meta = vectors_path(store), _vectors_meta(store, embedder)
    if path is None or meta is None:
        return None
    arrays = read_arrays(path, meta)
    if arrays is None or set(arrays) - {"signs"} != {"notes", "positions", "codes", "norms"}:
        return None
    count = len(arrays["notes"])
    width = _width(embedder.dimensions)
    if arrays["codes"].shape != (count, width) or len(arrays["positions"]) != count:
        return None
    return arrays


def write_vectors_file(store: Store, embedder: Embedder) -> bool:
    """The vectors' file made again from the store when it is missing or stale (under the
    ingest lock: no other writer changes the vectors meanwhile); whether it was written.
    Raises OSError when index/ cannot be written."""
    path, meta = vectors_path(store), _vectors_meta(store, embedder)
    if path is None or meta is None or store.vectors.signature() != meta["signature"]:
        return False
    if read_vectors_file(store, embedder) is not None:
        return False
    notes, positions, packed = _read(store, embedder.dimensions)
    arrays = {
        "notes": notes,
        "positions": positions,
        "codes": packed,
        "norms": packed_norms(packed, embedder.dimensions),
    }
    if len(notes) > EXACT_AT_MOST:
        arrays["signs"] = _sign_words(packed, embedder.dimensions)
    assert store.path is not None
    write_arrays(path, meta, arrays, mode=store.path.stat().st_mode & 0o777)  # as the store's
    return True


def pending_notes(store: Store) -> int:
    """How many notes have no vectors of their current version, counted once per change
    of the notes or the vectors (a count over every note: 1 ms at 500, 20 at 10,000)."""
    key = (str(store.path), store.generation, store.vectors.stamp())
    with _CACHE_LOCK:
        count = _PENDING.get(key)
    if count is None:
        count = store.vectors.pending_count()
        with _CACHE_LOCK:
            _PENDING.clear()
            _PENDING[key] = count
    return count
