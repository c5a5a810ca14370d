"""tantivy on a full disk (issue 37): the documented one line, as FTS5 gives, never a
ValueError traceback; the notes stay stored, and once space is free the next ingest brings
the index up to date (the failed write's segments collected, not left holding the space)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.engines import tantivy_index
from kb.engines.tantivy_index import available
from kb.knowledge_base import KnowledgeBase

pytestmark = pytest.mark.skipif(not available(), reason="tantivy is not installed")

NO_SPACE = "An IO error occurred: 'No space left on device (os error 28)'"
KILLED = (
    "An error occurred in a thread: 'An index writer was killed.. A worker thread "
    "encountered an error (io::Error most likely) or panicked.'"
)


def _tantivy_kb(tmp_path: Path, notes: Path) -> KnowledgeBase:
    (tmp_path / "kb.yaml").write_text(
        f"roots: [{notes}]\nengine: tantivy\nsemantic: off\n", encoding="utf-8"
    )
    return KnowledgeBase.open(tmp_path)


def _ingest(home: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--kb", str(home), "ingest"])
    return result.exit_code, result.stderr


def _disk_full_line(home: Path) -> str:
    return (
        f"kb: disk full: cannot write the tantivy index {home / 'index' / 'tantivy'}; free "
        "some space and run 'kb ingest' again (the notes are stored, and the next 'kb "
        "ingest' brings the tantivy index up to date)\n"
    )


@pytest.mark.parametrize("error", [NO_SPACE, KILLED], ids=["no-space", "writer-killed"])
def test_a_full_disk_is_one_line_and_the_next_ingest_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: str
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nfirst words\n", encoding="utf-8")
    home = tmp_path / "kb"
    home.mkdir()
    _tantivy_kb(home, notes).ingest()
    (notes / "b.md").write_text("# B\n\nzebracorn\n", encoding="utf-8")

    made = tantivy_index._document

    def failing(*args: object) -> object:
        raise ValueError(error)

    monkeypatch.setattr(tantivy_index, "_document", failing)
    # A writer thread that died does not say why: a disk with little free space does.
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        tantivy_index.shutil, "disk_usage", lambda path: usage._replace(free=1024**2)
    )
    code, stderr = _ingest(home)
    assert code == 1
    assert stderr == _disk_full_line(home)
    monkeypatch.setattr(tantivy_index, "_document", made)
    assert list(KnowledgeBase.open(home).sql("select count(*) from notes").rows) == [(2,)]
    code, stderr = _ingest(home)  # space is free again
    assert code == 0, stderr
    assert [hit.path for hit in KnowledgeBase.open(home).search("zebracorn").hits] == ["b.md"]


def test_a_killed_writer_with_space_to_spare_is_not_called_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n", encoding="utf-8")
    home = tmp_path / "kb"
    home.mkdir()
    _tantivy_kb(home, notes).ingest()
    (notes / "b.md").write_text("# B\n", encoding="utf-8")

    def failing(*args: object) -> object:
        raise ValueError(KILLED)

    monkeypatch.setattr(tantivy_index, "_document", failing)
    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(
        tantivy_index.shutil, "disk_usage", lambda path: usage._replace(free=1024**4)
    )
    code, stderr = _ingest(home)
    assert code == 1
    assert stderr.count("\n") == 1
    assert stderr.startswith(f"kb: cannot write the tantivy index {home / 'index' / 'tantivy'}")
    assert "An index writer was killed" in stderr and "disk full" not in stderr


@pytest.mark.slow
def test_a_real_full_disk(tmp_path: Path) -> None:
    """On a 24 MB tmpfs (root only; skipped where mount fails): the store commits, the
    index runs out of space, and after the space is freed the index catches up."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(disk)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (root only)")
    try:
        notes = tmp_path / "notes"
        notes.mkdir()
        for i in range(30):
            (notes / f"n{i}.md").write_text(f"# Note {i}\n\nword{i}\n", encoding="utf-8")
        home = disk / "kb"
        home.mkdir()
        with _tantivy_kb(home, notes) as kb:
            kb.ingest()
        chance = random.Random(37)
        for i in range(30, 400):  # text tantivy cannot compress away
            noise = "".join(chance.choices("abcdefghijklmnopqrstuvwxyz0123456789", k=3000))
            (notes / f"n{i}.md").write_text(f"# Note {i}\n\nword{i} {noise}\n", encoding="utf-8")
        # Leave room for the store's 370 notes (about 5.5 MB), not for the index's 8 MB more.
        filler = disk / "filler"
        free = shutil.disk_usage(disk).free
        with filler.open("wb") as file:
            file.truncate(0)
            file.write(b"\0" * (free - 9 * 1024**2))
        code, stderr = _ingest(home)
        assert code == 1
        assert stderr == _disk_full_line(home)
        with KnowledgeBase.open(home) as kb:  # the notes are stored, as the line says
            assert list(kb.sql("select count(*) from notes").rows) == [(400,)]
        filler.unlink()
        code, stderr = _ingest(home)
        assert code == 0, stderr
        with KnowledgeBase.open(home) as kb:
            assert [h.path for h in kb.search("word300").hits] == ["n300.md"]
    finally:
        # Lazy: a file a finished test left open must not keep the mount alive.
        subprocess.run(["umount", "-l", str(disk)], check=False)
