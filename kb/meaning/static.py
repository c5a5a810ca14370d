"""model2vec static models: a token table looked up and averaged (much faster than a
transformer, weaker). The model must be on disk: kb never downloads one."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path

import numpy as np


class StaticEmbedder:
    name = "model2vec"

    def __init__(self, model: str) -> None:
        path = Path(model).expanduser()
        if not model or not path.is_dir():
            raise FileNotFoundError(
                f"model2vec needs a model folder on disk ('model2vec:/path'); "
                f"{model or 'none'!r} is not one (kb downloads nothing)"
            )
        from model2vec import StaticModel  # deferred: an optional package

        self._model = StaticModel.from_pretrained(str(path))
        self.dimensions = int(self._model.dim)
        self.signature = f"model2vec-{version('model2vec')}/{path.resolve()}"

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        rows = np.asarray(self._model.encode(list(texts)), dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return rows / norms

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_passages([text])[0]
