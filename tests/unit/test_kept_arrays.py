"""Arrays kept in one file (kb/meaning/arrays.py): read back exactly when the file is
whole and says what it was made from; None, never a wrong array, for anything else."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from kb.meaning.arrays import MAGIC, read_arrays, write_arrays

META = {"model": "m/1", "stamp": 7}
ARRAYS = {
    "codes": np.arange(24, dtype=np.uint8).reshape(4, 6),
    "notes": np.array([3, 3, 5, 9], dtype=np.int64),
    "scale": np.asarray(0.25),
    "pieces": np.array([b"a", b"\xe4\xb8\xad", b"zz"], dtype="S3"),
}


def test_arrays_come_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "kept.kbarrays"
    write_arrays(path, META, ARRAYS)
    found = read_arrays(path, META)
    assert found is not None and list(found) == list(ARRAYS)
    for name, array in ARRAYS.items():
        assert found[name].dtype == array.dtype and np.array_equal(found[name], array)
    assert not found["codes"].flags.writeable  # mapped read-only: never written through
    assert [p.name for p in tmp_path.iterdir()] == ["kept.kbarrays"]  # no temporary left


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-1])


def _grown(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\0")


def _another_magic(path: Path) -> None:
    path.write_bytes(b"X" + path.read_bytes()[1:])


def _garbled_header(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(MAGIC) + 8 : len(MAGIC) + 20] = b"\xff" * 12
    path.write_bytes(bytes(data))


def _emptied(path: Path) -> None:
    path.write_bytes(b"")


@pytest.mark.parametrize(
    ("damage", "meta"),
    [
        (None, {"model": "m/2", "stamp": 7}),  # another model
        (None, {"model": "m/1", "stamp": 8}),  # the store changed since
        (None, {"model": "m/1"}),  # less said than expected
        (_truncated, META),  # a crash mid-write (without the rename) or a full disk
        (_grown, META),
        (_another_magic, META),
        (_garbled_header, META),
        (_emptied, META),
    ],
)
def test_a_file_that_is_stale_or_damaged_is_never_trusted(
    tmp_path: Path, damage: Callable[[Path], None] | None, meta: dict[str, object]
) -> None:
    path = tmp_path / "kept.kbarrays"
    write_arrays(path, META, ARRAYS)
    if damage is not None:
        damage(path)
    assert read_arrays(path, meta) is None


def test_a_missing_file_is_none_and_objects_are_never_kept(tmp_path: Path) -> None:
    assert read_arrays(tmp_path / "none.kbarrays", META) is None
    with pytest.raises(ValueError, match="not kept"):
        write_arrays(tmp_path / "o.kbarrays", META, {"o": np.array([object()])})
    assert list(tmp_path.iterdir()) == []


def test_writing_again_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "kept.kbarrays"
    write_arrays(path, META, ARRAYS)
    before = read_arrays(path, META)  # a reader still holding the old file's map
    write_arrays(path, {**META, "stamp": 8}, {"notes": np.array([1], dtype=np.int64)})
    assert before is not None and np.array_equal(before["notes"], ARRAYS["notes"])
    after = read_arrays(path, {**META, "stamp": 8})
    assert after is not None and after["notes"].tolist() == [1]
    assert read_arrays(path, META) is None


@pytest.mark.parametrize("xdg", [None, "", "  ", "/x/cache", "relative/cache"])
def test_the_user_cache_folder_is_platformdirs_own(
    xdg: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from platformdirs import user_cache_dir

    from kb.locations import user_cache_path

    if xdg is None:
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    assert user_cache_path() == Path(user_cache_dir("kb", appauthor=False))
