"""Named numpy arrays kept in one file and read memory-mapped: what a cold process would
otherwise rebuild (the model's unpacked weights, the store's vectors) costs a page-in
instead of a decompression or a read row by row.

A file is trusted only when its header says what it was built from (``meta``, compared
whole with what the reader expects) and its size is what the header adds up to; anything
else (missing, truncated, from another model or another state of the store, damaged) is
None to the reader, which builds it again. It is written to a temporary file beside it and
renamed over it, so a reader sees the old file or the new one, never a part.
"""

from __future__ import annotations

import json
import mmap
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"KBARRAYS\x01\n"
_LENGTH = 8  # bytes of the header's length, after the magic
_ALIGN = 64  # each array starts on a multiple of this (numpy and the cache lines like it)
_KINDS = frozenset("fiubS")  # numbers and byte strings: never objects
_STALE_TEMPORARY = 3600  # seconds after which a temporary file left by a crash is removed


def write_arrays(
    path: Path, meta: dict[str, Any], arrays: dict[str, np.ndarray], mode: int | None = None
) -> None:
    """``arrays`` and ``meta`` written to ``path`` at once (a temporary file renamed over
    it), readable by its owner alone unless ``mode`` says otherwise. Raises OSError when
    the folder cannot be written."""
    described: list[dict[str, Any]] = []
    offsets: list[int] = []
    offset = 0
    for name, array in arrays.items():
        if array.dtype.kind not in _KINDS:
            raise ValueError(f"{name}: arrays of {array.dtype} are not kept")
        described.append(
            {"name": name, "dtype": array.dtype.str, "shape": list(array.shape), "at": offset}
        )
        offsets.append(offset)
        offset = _aligned(offset + array.nbytes)
    header = json.dumps({"meta": meta, "arrays": described, "data": offset}).encode()
    start = _aligned(len(MAGIC) + _LENGTH + len(header))
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(path)
    import tempfile  # deferred: only a writer needs it (random, shutil: 10 ms of a search)

    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(MAGIC + len(header).to_bytes(_LENGTH, "little") + header)
            for at, array in zip(offsets, arrays.values(), strict=True):
                out.seek(start + at)
                out.write(np.ascontiguousarray(array).tobytes())
            out.truncate(start + offset)
            out.flush()
            if mode is not None:
                os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_arrays(path: Path, meta: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """The arrays kept in ``path``, memory-mapped and read-only, when its header's meta is
    ``meta`` and the file is whole; None otherwise (the caller builds them again)."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size < len(MAGIC) + _LENGTH or file.read(len(MAGIC)) != MAGIC:
                return None
            length = int.from_bytes(file.read(_LENGTH), "little")
            if length > size:
                return None
            header = json.loads(file.read(length))
            if not isinstance(header, dict) or header.get("meta") != meta:
                return None
            start = _aligned(len(MAGIC) + _LENGTH + length)
            if size != start + int(header["data"]):
                return None  # truncated, or grown: not what was written
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        arrays = {}
        for item in header["arrays"]:
            dtype = np.dtype(item["dtype"])
            shape = tuple(int(n) for n in item["shape"])
            count = int(np.prod(shape, dtype=np.int64))
            at = start + int(item["at"])
            if dtype.kind not in _KINDS or at + count * dtype.itemsize > size:
                return None
            arrays[str(item["name"])] = np.frombuffer(mapped, dtype, count, at).reshape(shape)
        return arrays
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None  # unreadable or damaged: built again


def _aligned(offset: int) -> int:
    return -(-offset // _ALIGN) * _ALIGN


def _remove_stale_temporaries(path: Path) -> None:
    """Temporary files a crashed writer left beside ``path`` (not one being written now)."""
    now = time.time()
    for left in path.parent.glob(f".{path.name}.*.tmp"):
        try:
            if now - left.stat().st_mtime > _STALE_TEMPORARY:
                left.unlink()
        except OSError:
            continue
