"""The nearest passages (kb/meaning/index.py): every passage scored while they are few,
else the candidates nearest by their signs, scored exactly. Both must name the same
notes where the candidates hold the nearest, with the same similarities."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import numpy as np
import pytest

from kb.meaning.index import CANDIDATE_SHARE, VectorIndex, _cosines, candidate_count, pack, unpack
from kb.store import Store

DIMENSIONS = 512


def unit_rows(count: int, dimensions: int = DIMENSIONS, seed: int = 3) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, dimensions)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def store_of(rows: np.ndarray, per_note: int = 5) -> Store:
    """A stand-in for the store's vectors: passage i is note i // per_note's."""
    packed = pack(rows)
    stored = [(i // per_note, i % per_note, blob) for i, blob in enumerate(packed)]
    return cast(
        Store, SimpleNamespace(vectors=SimpleNamespace(all_vectors=lambda size=None: iter(stored)))
    )


def exact_and_by_signs(
    rows: np.ndarray, candidates: int, per_note: int = 5
) -> tuple[VectorIndex, VectorIndex]:
    dimensions = rows.shape[1]
    exact = VectorIndex(store_of(rows, per_note), dimensions, exact_at_most=len(rows))
    by_signs = VectorIndex(
        store_of(rows, per_note), dimensions, exact_at_most=0, candidates=candidates
    )
    assert exact.matrix is not None and by_signs.matrix is None
    return exact, by_signs


@pytest.mark.parametrize("dimensions", [512, 511, 64, 70])
def test_packed_cosines_equal_the_unpacked_rows_products(dimensions: int) -> None:
    rows = unit_rows(40, dimensions)
    query = unit_rows(1, dimensions, seed=9)[0]
    from_matrix = unpack(pack(rows), dimensions) @ query
    packed = np.frombuffer(b"".join(b[:-4] for b in pack(rows)), dtype=np.uint8)
    assert np.allclose(_cosines(packed.reshape(40, -1), query), from_matrix, atol=1e-5)


def test_with_every_passage_a_candidate_the_signs_change_nothing() -> None:
    rows = unit_rows(600)
    exact, by_signs = exact_and_by_signs(rows, candidates=600)
    for query in unit_rows(5, seed=11):
        want, got = exact.nearest(query, 30), by_signs.nearest(query, 30)
        assert [(n.note_id, n.position) for n in got] == [(n.note_id, n.position) for n in want]
        assert np.allclose([n.similarity for n in got], [n.similarity for n in want], atol=1e-5)


def test_a_few_candidates_by_their_signs_still_find_the_nearest_passage() -> None:
    rows = unit_rows(3000)
    exact, by_signs = exact_and_by_signs(rows, candidates=60)
    noise = unit_rows(20, seed=5)
    for source, jitter in zip([7, 150, 1999, 2500, 2999], noise, strict=False):
        query = rows[source] + 0.4 * jitter  # near one passage, far from the rest
        query /= np.linalg.norm(query)
        got = by_signs.nearest(query, 10)
        assert (got[0].note_id, got[0].position) == (source // 5, source % 5)
        similarities = [n.similarity for n in got]
        assert similarities == sorted(similarities, reverse=True)
        exact_by_note = {n.note_id: n for n in exact.nearest(query, 600)}
        for near in got:  # scored exactly: the same cosine the exact scan gives
            same = exact_by_note[near.note_id]
            assert near.position == same.position
            assert near.similarity == pytest.approx(same.similarity, abs=1e-5)


def test_passages_at_one_distance_are_cut_at_the_candidates() -> None:
    rows = np.repeat(unit_rows(1), 300, axis=0)  # every passage the same (300: the least wins)
    _, by_signs = exact_and_by_signs(rows, candidates=10, per_note=1)
    assert len(by_signs._nearest_by_signs(rows[0])) == 10
    assert len(by_signs.nearest(rows[0], 30)) == 10  # one passage a note: ten notes


@pytest.mark.parametrize(
    ("passages", "least", "expected"),
    [
        (100, 8_192, 8_192),  # few passages: every one (the caller scores them all)
        (117_205, 8_192, 8_192),  # 10,000 notes: the least
        (8_192 * CANDIDATE_SHARE, 8_192, 8_192),  # where the share takes over
        (1_174_909, 8_192, 1_174_909 // CANDIDATE_SHARE),  # 100,000 notes: a share
        (1_000, 10, 1_000 // CANDIDATE_SHARE),
    ],
)
def test_the_candidates_grow_with_the_passages_past_the_least(
    passages: int, least: int, expected: int
) -> None:
    assert candidate_count(passages, least) == expected


def test_a_share_of_many_passages_is_scored_not_just_the_least() -> None:
    rows = np.repeat(unit_rows(1), 40 * CANDIDATE_SHARE, axis=0)  # every passage the same
    _, by_signs = exact_and_by_signs(rows, candidates=10, per_note=1)
    assert len(by_signs._nearest_by_signs(rows[0])) == 40


def test_no_vectors_no_nearest() -> None:
    empty = np.zeros((0, DIMENSIONS), dtype=np.float32)
    for exact_at_most in (0, -1):  # the exact scan, and the signs
        index = VectorIndex(store_of(empty), DIMENSIONS, exact_at_most=exact_at_most)
        assert index.nearest(unit_rows(1)[0], 30) == []


def test_the_whole_note_is_the_cosine_with_the_mean_of_its_passages() -> None:
    from kb.meaning.index import note_evidence

    rows = unit_rows(60)
    exact, _ = exact_and_by_signs(rows, candidates=60, per_note=4)
    assert exact.matrix is not None
    query = unit_rows(1, seed=5)[0]
    found = note_evidence(exact, query)
    for note, passage, whole in zip(found.note_ids, found.passage, found.whole, strict=True):
        own = exact.matrix[exact.notes == note]
        mean = own.mean(axis=0)
        assert whole == pytest.approx(float(mean @ query / np.linalg.norm(mean)), abs=1e-5)
        assert passage == pytest.approx(float(np.max(own @ query)), abs=1e-5)
    # A search works out the whole of the notes it asks for and of the nearest only.
    some = note_evidence(exact, query, whole_for=[3], nearest=2)
    nearest = set(found.note_ids[np.argsort(-found.passage)[:2]].tolist()) | {3}
    for at, note in enumerate(some.note_ids.tolist()):
        expected = found.whole[at] if note in nearest else found.passage[at]
        assert some.whole[at] == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(("dimensions", "bits"), [(512, 4), (511, 4), (70, 8), (64, 8)])
def test_the_kept_lengths_are_the_packed_rows_own(dimensions: int, bits: int) -> None:
    from kb.meaning.index import _components, packed_norms

    rows = unit_rows(50, dimensions)
    rows[7] = 0.0  # a zero row: length 1, as the scan takes it
    packed = np.frombuffer(b"".join(b[:-4] for b in pack(rows, bits)), dtype=np.uint8)
    packed = packed.reshape(50, -1)
    expected = np.linalg.norm(_components(packed, dimensions, bits), axis=1)
    expected[expected == 0] = 1.0
    assert np.allclose(packed_norms(packed, dimensions, bits), expected, rtol=1e-6)
    query = unit_rows(1, dimensions, seed=5)[0]
    kept = packed_norms(packed, dimensions, bits)
    assert np.allclose(
        _cosines(packed, query, bits, norms=kept), _cosines(packed, query, bits), atol=1e-6
    )
