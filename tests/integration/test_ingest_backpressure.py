"""A slow writer slows the parse workers instead of letting their results pile up
(issue 40: an ingest's peak memory grew with how busy the machine was)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import kb.ingest.load as load
from kb.ingest.load import LoadJob, load_files
from kb.ingest.walk import NoteFile


@pytest.mark.slow
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: ingest starts no workers")
def test_parsed_notes_wait_for_a_slow_writer_a_few_chunks_at_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(40 * load._CHUNK):
        (tmp_path / f"n{number:04}.md").write_text(f"# {number}\n\n显存 word\n", encoding="utf-8")
    jobs = [
        LoadJob(NoteFile(p.name, str(p), "notes", p.name, 0, 0, ""), "", 1 << 20, ())
        for p in sorted(tmp_path.glob("*.md"))
    ]
    waiting: list[int] = []

    class Watched(load._ParsePool):
        def answers(self):  # type: ignore[no-untyped-def]
            for answer in super().answers():
                waiting.append(len(self.done))  # parsed, not yet taken by the writer
                yield answer

    monkeypatch.setattr(load, "_ParsePool", Watched)
    paths = []
    for number, result in enumerate(load_files(jobs)):
        if number % load._CHUNK == 0:
            time.sleep(0.05)  # a writer slower than the workers (a busy machine)
        paths.append(result.file.path)
    assert paths == [job.file.path for job in jobs]  # every note, in order
    workers = min(os.cpu_count() or 1, 4)
    assert max(waiting) <= 4 * workers
