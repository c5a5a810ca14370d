"""The notes near one note in meaning, for related notes (kb/links/related.py).

Two similarities a note has with each other: the whole notes' (the cosine of their mean
passage vectors) and their nearest pair of passages (one of each: the pair a reader is
shown as the reason). Both are read from the vector index as it is (kb/meaning/index.py);
nothing is embedded here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from threading import Lock
from weakref import WeakKeyDictionary

import numpy as np

from kb.meaning.index import VectorIndex, _unit_rows

MY_PASSAGES = 8  # of a long note, its first this many passages are paired
# Up to this many passages every one is paired with this note's; beyond, the passages of
# the PAIRED_NEAREST notes nearest as wholes and of one note in PAIRED_SAMPLE_EVERY (what
# is usual) are: 8 passages against 12,815 took 55 ms on one busy core (rust-blog-toml),
# against its 64 nearest notes and a sixteenth of the rest 13 ms.
PAIRS_EVERYWHERE = 4_096
PAIRED_NEAREST = 64
PAIRED_SAMPLE_EVERY = 16
_CHUNK = 16_384  # rows unpacked at a time when the index keeps them packed


@dataclass(frozen=True, slots=True)
class NearNote:
    note_id: int
    note: float  # cosine of the two notes' mean passage vectors
    pair: float  # of their nearest pair of passages
    mine: int  # that pair: this note's passage position
    theirs: int  # and the other note's


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """The nearest notes, and how near the other notes are on the whole (mean and spread
    of each similarity over every other note): what near means for this note."""

    near: list[NearNote]
    note_mean: float
    note_spread: float
    pair_mean: float
    pair_spread: float


@dataclass(slots=True)
class _Layout:
    """The index's rows grouped by note: each note's first row, and its mean vector."""

    order: np.ndarray  # rows sorted by note (the index's own order when already sorted)
    ids: np.ndarray  # the notes, ascending
    starts: np.ndarray  # each note's first position in ``order``
    means: np.ndarray  # unit mean vector of each note's passages
    hubs: np.ndarray  # each note's mean similarity to every note, less the usual


_LAYOUTS: WeakKeyDictionary[VectorIndex, _Layout] = WeakKeyDictionary()
_LOCK = Lock()


def neighbourhood(
    index: VectorIndex, note_id: int, count: int, hubness: float = 0.0
) -> Neighbourhood | None:
    """The ``count`` notes nearest to ``note_id`` by either similarity (both given for
    each), nearest whole note first; None when the note has no vectors. ``hubness``
    lowers both similarities of a note by that share of how much nearer than usual it is
    to every note (a table of contents, a reading list: near everything, related to
    nothing in particular)."""
    layout = _layout(index)
    at = int(np.searchsorted(layout.ids, note_id))
    if at >= len(layout.ids) or layout.ids[at] != note_id or len(layout.ids) < 2:
        return None
    mine_rows = layout.order[layout.starts[at] : _end(layout, at)][:MY_PASSAGES]
    mine = _rows(index, mine_rows)
    note_sims = _products(layout.means, layout.means[at][np.newaxis, :])[:, 0]
    others = np.ones(len(layout.ids), dtype=bool)
    others[at] = False
    if len(layout.order) <= PAIRS_EVERYWHERE:
        # Each passage's best cosine with one of mine, then each note's best passage.
        best_row = np.empty(len(layout.order), dtype=np.float32)
        for start, block in _blocks(index, layout.order):
            best_row[start : start + len(block)] = _products(block, mine).max(axis=1)
        pair_sims = np.maximum.reduceat(best_row, layout.starts)
        paired = others
    else:  # the notes nearest as wholes, and a sample of the rest for what is usual
        pair_sims, paired = _some_pairs(index, layout, mine, note_sims, others)
    if hubness:
        note_sims = note_sims - hubness * layout.hubs
        pair_sims = pair_sims - hubness * layout.hubs
    take = min(count, int(others.sum()))
    chosen: dict[int, None] = {}
    for sims, where in ((note_sims, others), (pair_sims, paired)):
        masked = np.where(where, sims, -np.inf)
        for j in np.argsort(-masked, kind="stable")[:take]:
            chosen[int(j)] = None
    near = []
    for j in sorted(chosen, key=lambda j: -float(note_sims[j])):
        theirs_rows = layout.order[layout.starts[j] : _end(layout, j)]
        block = _products(_rows(index, theirs_rows), mine)  # theirs x mine
        t, m = np.unravel_index(int(np.argmax(block)), block.shape)
        near.append(
            NearNote(
                int(layout.ids[j]),
                float(note_sims[j]),
                float(pair_sims[j]),
                int(index.positions[mine_rows[m]]),
                int(index.positions[theirs_rows[t]]),
            )
        )
    return Neighbourhood(
        near,
        float(note_sims[others].mean()),
        float(note_sims[others].std()),
        float(pair_sims[paired].mean()),
        float(pair_sims[paired].std()),
    )


def _some_pairs(
    index: VectorIndex,
    layout: _Layout,
    mine: np.ndarray,
    note_sims: np.ndarray,
    others: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Best-pair similarities of some notes (-inf for the rest), and which."""
    masked = np.where(others, note_sims, -np.inf)
    nearest = np.argpartition(-masked, min(PAIRED_NEAREST, len(masked) - 1))[:PAIRED_NEAREST]
    paired = np.zeros(len(layout.ids), dtype=bool)
    paired[nearest] = True
    paired[::PAIRED_SAMPLE_EVERY] = True
    paired &= others
    notes = np.flatnonzero(paired)
    ends = np.append(layout.starts[1:], len(layout.order))
    spans = [np.arange(layout.starts[j], ends[j]) for j in notes]
    rows = layout.order[np.concatenate(spans)]
    best = _products(_rows(index, rows), mine).max(axis=1)
    local = np.cumsum([0] + [len(span) for span in spans[:-1]])
    pair_sims = np.full(len(layout.ids), -np.inf, dtype=np.float32)
    pair_sims[notes] = np.maximum.reduceat(best, local)
    return pair_sims, paired


def _products(rows: np.ndarray, mine: np.ndarray) -> np.ndarray:
    """Every row's cosine with each of ``mine``, without BLAS threads: on two busy cores
    numpy's BLAS waits for the second (as kb/meaning/index.py measured for a query)."""
    return np.einsum("ij,kj->ik", rows, mine)


def _end(layout: _Layout, at: int) -> int:
    return int(layout.starts[at + 1]) if at + 1 < len(layout.starts) else len(layout.order)


def _layout(index: VectorIndex) -> _Layout:
    """The index's rows by note, computed once per index (an index lives while the
    vectors are unchanged)."""
    with _LOCK:
        found = _LAYOUTS.get(index)
    if found is not None:
        return found
    notes = np.asarray(index.notes)
    order = (
        np.arange(len(notes))
        if len(notes) < 2 or bool(np.all(notes[1:] >= notes[:-1]))
        else np.argsort(notes, kind="stable")
    )
    ids, starts = np.unique(notes[order], return_index=True)
    sums = np.zeros((len(ids), index.dimensions), dtype=np.float32)
    owner = np.repeat(np.arange(len(ids)), np.diff(np.append(starts, len(order))))
    for start, block in _blocks(index, order):
        owners = owner[start : start + len(block)]  # ascending: a note's rows are together
        firsts = np.flatnonzero(np.diff(owners, prepend=-1))
        sums[owners[firsts]] += np.add.reduceat(block, firsts)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    means = sums / norms
    hubs = means @ means.mean(axis=0)  # the mean of its cosines with every note
    found = _Layout(order, ids, starts, means, hubs - hubs.mean())
    with _LOCK:
        _LAYOUTS[index] = found
    return found


def _rows(index: VectorIndex, rows: np.ndarray) -> np.ndarray:
    """Unit float32 vectors of the index's ``rows``."""
    if index.matrix is not None:
        return np.asarray(index.matrix[rows])
    assert index.codes is not None
    return _unit_rows(np.asarray(index.codes[rows]), index.dimensions)


def _blocks(index: VectorIndex, order: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(position in ``order``, unit rows) a chunk at a time: a packed index is never
    unpacked whole, and rows already in order are read in place (not copied)."""
    in_place = index.matrix is not None and bool(np.array_equal(order, np.arange(len(order))))
    for start in range(0, len(order), _CHUNK):
        if in_place:
            assert index.matrix is not None
            yield start, index.matrix[start : start + _CHUNK]
        else:
            yield start, _rows(index, order[start : start + _CHUNK])
