"""Reads from several threads at once, while an ingest holds the write transaction: each
thread reads through its own connection, so none fails and none waits for the writer."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from kb.store.notes import NoteDao

WRITE_HOLD = 2.0  # seconds the ingest keeps its write transaction open
# No read may take this long: half the hold, so a read that waited for the write (up to
# WRITE_HOLD) fails, while the four threads contending for the GIL on a loaded machine (CI
# measured 0.55 s for every thread at once) do not.
READ_BOUND = WRITE_HOLD / 2


def test_reads_from_four_threads_never_wait_for_an_ingest(
    make_kb: Callable[..., KnowledgeBase], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = {f"n{i}.md": f"# Note {i}\n\nalpha words [next](n{i + 1}.md)\n" for i in range(40)}
    kb = make_kb(notes)
    kb.ingest()
    first = kb.find_note("n0.md", cwd=tmp_path / "notes").id
    writing = threading.Event()
    real_write = NoteDao.write

    def slow_write(self: NoteDao, records: list, generation: int) -> list[int]:
        ids = real_write(self, records, generation)
        writing.set()
        time.sleep(WRITE_HOLD)  # inside BEGIN IMMEDIATE: the store is locked for writing
        return ids

    monkeypatch.setattr(NoteDao, "write", slow_write)
    (tmp_path / "notes" / "new.md").write_text("# New\n\nomega words\n", encoding="utf-8")
    done = threading.Event()
    errors: list[BaseException] = []
    slowest: list[float] = []
    during: list[int] = []

    def read() -> None:
        reads = [
            lambda: kb.search("alpha", limit=100).hits,
            lambda: kb.recent(10),
            lambda: kb.note_page(first),
            lambda: kb.links.connections(kb.note_ref(first)),
        ]
        worst, count = 0.0, 0
        try:
            writing.wait(10)
            while not done.is_set():
                for call in reads:
                    start = time.perf_counter()
                    result = call()
                    worst = max(worst, time.perf_counter() - start)
                    assert result
                count += 1
            # After the ingest every thread sees the new note.
            assert [hit.path for hit in kb.search("omega").hits] == ["new.md"]
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        slowest.append(worst)
        during.append(count)

    def ingest() -> None:
        try:
            assert kb.ingest().added == 1
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            done.set()

    readers = [threading.Thread(target=read) for _ in range(4)]
    writer = threading.Thread(target=ingest)
    for thread in (*readers, writer):
        thread.start()
    for thread in (*readers, writer):
        thread.join(30)
    kb.close()
    assert not errors, errors
    assert len(slowest) == 4
    assert all(count > 0 for count in during), during  # every thread read during the write
    assert max(slowest) < READ_BOUND, slowest
