"""The spool that keeps an ingest's tokens for an engine outside the store: what goes in
comes out, whether it stayed in memory or went to the file, and closing frees both."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kb.ingest.spool import StreamSpool

STREAMS = {
    1: ("redis 学习 笔记", "", "sorted set 跳表"),
    2: ("显存 带宽 roofline", "gpu", "🙂 e\u0301 combining"),
    3: ("", "", ""),
    4: ("x" * 5000, "长" * 3000, "tail"),
}


@pytest.mark.parametrize("memory", [0, 40, 10**9], ids=["all-spilled", "some", "memory"])
def test_what_goes_in_comes_out(tmp_path: Path, memory: int) -> None:
    spool = StreamSpool(tmp_path / "index", memory)
    for note_id, streams in STREAMS.items():
        spool[note_id] = streams
    assert len(spool) == len(STREAMS)
    assert {i: spool[i] for i in spool} == STREAMS
    assert 5 not in spool
    assert spool.get(5) is None
    assert (spool.spilled == len(STREAMS)) is (memory == 0)
    assert (spool.spilled == 0) is (memory == 10**9)
    spool.close()
    assert len(spool) == 0


def test_a_note_written_twice_keeps_its_last_streams(tmp_path: Path) -> None:
    spool = StreamSpool(tmp_path, memory_characters=10)
    spool[1] = ("short",)
    spool[1] = ("a longer second version",)  # past the memory bound: to the file
    spool[2] = ("ok",)
    assert spool[1] == ("a longer second version",)
    assert list(spool).count(1) == 1
    assert len(spool) == 2
    spool.close()


def test_a_note_rewritten_in_memory_frees_its_share(tmp_path: Path) -> None:
    spool = StreamSpool(tmp_path, memory_characters=12)
    for _ in range(5):
        spool[1] = ("ten chars!",)  # the same note again and again: still in memory
    spool[2] = ("x",)
    assert spool.spilled == 0
    spool.close()


def test_the_file_is_never_left_in_the_folder(tmp_path: Path) -> None:
    spool = StreamSpool(tmp_path, memory_characters=0)
    spool[1] = ("tokens",)
    if os.name == "posix":  # unnamed while open: a killed ingest leaves nothing
        assert list(tmp_path.iterdir()) == []
    spool.close()
    assert list(tmp_path.iterdir()) == []
