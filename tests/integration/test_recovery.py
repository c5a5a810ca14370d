"""Faults in what kb derives from the notes (the store, the whoosh index) and in the places
it keeps them: each is one line that tells the true cause, and what can be rebuilt is."""

from __future__ import annotations

import errno
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import kb.store
from kb.cli import cli
from kb.engines.whoosh import available as whoosh_available
from kb.knowledge_base import KnowledgeBase

NOTES = {
    "redis.md": "# Redis 学习笔记\n\nskiplist 与 listpack，见 [GPU](gpu.md)。\n",
    "gpu.md": "# GPU 显存带宽\n\nroofline 模型。\n",
    "inbox/todo.md": "# 待办\n\n读完 Redis。\n",
}
needs_whoosh = pytest.mark.skipif(not whoosh_available(), reason="whoosh-reloaded is missing")


def run(kb: KnowledgeBase, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--kb", str(kb.home), *args])


def assert_one_line_error(result: Result, *wanted: str, unwanted: tuple[str, ...] = ()) -> str:
    """Exit 1 with a single ``kb: ...`` line on stderr holding ``wanted``, no traceback."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kb: "), result.stderr
    assert "Traceback" not in result.output
    for text in wanted:
        assert text in lines[0], lines[0]
    for text in unwanted:
        assert text not in lines[0], lines[0]
    return lines[0]


def found(kb: KnowledgeBase, query: str) -> list[str]:
    result = run(kb, "search", "--json", query)
    assert result.exit_code in (0, 1), result.output
    import json

    return sorted(hit["path"] for hit in json.loads(result.stdout))


def limit_pages(
    monkeypatch: pytest.MonkeyPatch, pages: Callable[[sqlite3.Connection], int]
) -> None:
    """A disk that fills up: every connection that writes the store gets a page limit."""
    connect = kb.store.connect

    def limited(path: Path, readonly: bool = False) -> sqlite3.Connection:
        conn = connect(path, readonly)
        if not readonly:
            conn.execute(f"PRAGMA max_page_count = {pages(conn)}")
        return conn

    monkeypatch.setattr(kb.store, "connect", limited)


def big_notes(count: int, start: int = 0) -> dict[str, str]:
    return {
        f"big/n{i}.md": f"# 笔记 {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(800))
        for i in range(start, start + count)
    }


# -- the store ---------------------------------------------------------------------------


def test_a_rebuild_that_fills_the_disk_keeps_the_old_store(make_kb, monkeypatch) -> None:
    from tests.conftest import write_notes

    kb = make_kb({**NOTES, **big_notes(30)})
    assert run(kb, "ingest").exit_code == 0
    write_notes(kb.config.roots[0].path, big_notes(30, start=30))
    # Room for the store as it is and a little more, not for twice the notes.
    limit_pages(monkeypatch, lambda conn: max(conn.execute("PRAGMA page_count").fetchone()[0], 30))
    result = run(kb, "ingest", "--rebuild")
    assert_one_line_error(result, "disk full", str(kb.config.index_dir), unwanted=("--rebuild",))
    monkeypatch.undo()
    assert found(kb, "skiplist") == ["redis.md"]  # the old store answers as before
    assert found(kb, "word3x7") == ["big/n3.md"]
    assert sorted(p.name for p in kb.config.index_dir.iterdir() if ".new" in p.name) == []


def test_an_ingest_that_fills_the_disk_says_so_and_changes_nothing(make_kb, monkeypatch) -> None:
    # The store is read as the failed ingest left it: kb search does not catch up first.
    kb = make_kb(NOTES, config="roots: [notes]\nchanged_notes: off\n")
    assert run(kb, "ingest").exit_code == 0
    from tests.conftest import write_notes

    write_notes(kb.config.roots[0].path, big_notes(30))
    # The limit is the store's size now: the new notes cannot fit.
    limit_pages(monkeypatch, lambda conn: conn.execute("PRAGMA page_count").fetchone()[0])
    result = run(kb, "ingest")
    line = assert_one_line_error(result, "disk full", str(kb.config.store_path))
    assert "cannot rollback" not in line and "--rebuild" not in line
    monkeypatch.undo()
    assert found(kb, "skiplist") == ["redis.md"]
    assert found(kb, "word3x7") == []  # the run was rolled back whole
    assert run(kb, "ingest").exit_code == 0
    assert found(kb, "word3x7") == ["big/n3.md"]


def test_a_read_only_store_is_not_advised_a_rebuild(make_kb, monkeypatch) -> None:
    kb = make_kb(NOTES)
    assert run(kb, "ingest").exit_code == 0
    (kb.config.roots[0].path / "new.md").write_text("# 新的\n", encoding="utf-8")
    connect = sqlite3.connect

    def read_only(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if not kwargs.get("uri"):  # the writer: give it a file it may not write
            database, kwargs["uri"] = f"{Path(database).as_uri()}?mode=ro", True
        return connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    result = run(kb, "ingest")
    assert_one_line_error(result, "read-only", str(kb.config.store_path), unwanted=("--rebuild",))


def test_a_bad_generation_names_the_rebuild_which_recovers(make_kb) -> None:
    kb = make_kb(NOTES)
    assert run(kb, "ingest").exit_code == 0
    with sqlite3.connect(kb.config.store_path) as conn:
        conn.execute("UPDATE meta SET value = 'x' WHERE key = 'generation'")
    for command in (["search", "redis"], ["links", "redis.md"], ["ingest"]):
        assert_one_line_error(run(kb, *command), "damaged", "'kb ingest --rebuild'")
    assert run(kb, "ingest", "--rebuild").exit_code == 0
    assert found(kb, "redis") == ["inbox/todo.md", "redis.md"]


def test_garbage_compressed_text_names_the_note_and_the_rebuild(make_kb) -> None:
    kb = make_kb(NOTES)
    assert run(kb, "ingest").exit_code == 0
    with sqlite3.connect(kb.config.store_path) as conn:
        conn.execute("UPDATE note_texts SET text_z = x'00112233445566'")
    for command in (["search", "skiplist"], ["links", "redis.md"]):
        assert_one_line_error(run(kb, *command), "redis.md", "damaged", "'kb ingest --rebuild'")
    assert run(kb, "ingest", "--rebuild").exit_code == 0
    assert found(kb, "skiplist") == ["redis.md"]
    assert "skiplist" in run(kb, "search", "skiplist").stdout


def test_a_folder_where_the_store_belongs_is_named_not_deleted(make_kb) -> None:
    kb = make_kb(NOTES)
    kb.config.store_path.mkdir(parents=True)
    (kb.config.store_path / "mine.txt").write_text("keep me", encoding="utf-8")
    for command in (["ingest", "--rebuild"], ["ingest"], ["search", "redis"]):
        assert_one_line_error(run(kb, *command), str(kb.config.store_path), "not a file")
    assert (kb.config.store_path / "mine.txt").read_text(encoding="utf-8") == "keep me"


def test_a_file_where_the_index_folder_belongs_is_named_not_deleted(make_kb) -> None:
    kb = make_kb(NOTES)
    kb.config.index_dir.write_text("keep me", encoding="utf-8")
    for command in (["ingest", "--rebuild"], ["ingest"], ["search", "redis"], ["check"]):
        assert_one_line_error(run(kb, *command), str(kb.config.index_dir), "not a folder")
    assert kb.config.index_dir.read_text(encoding="utf-8") == "keep me"


def test_an_ingest_that_may_not_write_the_index_folder_says_so(make_kb, monkeypatch) -> None:
    import os

    kb = make_kb(NOTES)
    assert run(kb, "ingest").exit_code == 0
    (kb.config.roots[0].path / "new.md").write_text("# 新的\n", encoding="utf-8")
    real_open = os.open

    def denied(path: Any, *args: Any, **kwargs: Any) -> int:
        if Path(path).parent == kb.config.index_dir:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    line = assert_one_line_error(run(kb, "ingest"), str(kb.config.index_dir))
    assert "permission denied" in line.lower() and "--rebuild" not in line


def read_only_folder(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What SQLite does in a folder kb cannot write: a WAL store without its -shm file
    cannot be opened with ``mode=ro`` (seen on a read-only mount; root cannot see it)."""
    connect = sqlite3.connect
    uris: list[str] = []

    def no_shm(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        uris.append(str(database))
        if kwargs.get("uri") and "mode=ro" in database and "immutable=1" not in database:
            error = sqlite3.OperationalError("unable to open database file")
            error.sqlite_errorcode = 14  # type: ignore[attr-defined]
            raise error
        return connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", no_shm)
    return uris


def test_a_read_only_store_can_be_searched_linked_and_checked(make_kb, monkeypatch) -> None:
    kb = make_kb(NOTES)
    assert run(kb, "ingest").exit_code == 0
    uris = read_only_folder(monkeypatch)
    assert found(kb, "skiplist") == ["redis.md"]
    links = run(kb, "links", "redis.md")
    assert links.exit_code == 0, links.output
    assert "GPU 显存带宽" in links.stdout
    assert run(kb, "check").exit_code == 0
    # Every connection opened was a read-only one, so nothing could have been written.
    assert uris and all("mode=ro" in uri for uri in uris)


@pytest.mark.skipif(sys.platform != "linux" or not shutil.which("unshare"), reason="Linux")
def test_a_read_only_mount(make_kb, tmp_path: Path) -> None:
    """The real thing where the system allows it: index/ on a read-only bind mount."""
    kb = make_kb(NOTES)
    assert run(kb, "ingest").exit_code == 0
    index = kb.config.index_dir
    assert not (index / "kb.sqlite-shm").exists()  # closed cleanly: the case that failed
    kb_command = [sys.executable, "-m", "kb", "--kb", str(kb.home)]
    script = (
        f"mount --bind {index} {index} && mount -o remount,bind,ro {index} || exit 77\n"
        f"{' '.join(kb_command)} search skiplist --paths && "
        f"{' '.join(kb_command)} links redis.md >/dev/null && "
        f"{' '.join(kb_command)} ingest"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, check=False
    )
    if done.returncode == 77 or "unshare failed" in done.stderr:
        pytest.skip("no permission to mount here")
    assert done.stdout.strip().endswith("redis.md"), done.stderr
    assert done.returncode == 1  # the ingest: it cannot write
    assert done.stderr.count("\n") == 1 and "Read-only file system" in done.stderr
    assert "Traceback" not in done.stderr


# -- the whoosh index --------------------------------------------------------------------


def whoosh_kb(make_kb) -> KnowledgeBase:
    kb = make_kb(NOTES)
    result = run(kb, "ingest", "--rebuild", "--engine", "whoosh")
    assert result.exit_code == 0, result.output
    return kb


def _file(kb: KnowledgeBase, pattern: str) -> Path:
    (path,) = (kb.config.index_dir / "whoosh").glob(pattern)
    return path


DAMAGE: dict[str, Callable[[KnowledgeBase], None]] = {
    "empty toc": lambda kb: _file(kb, "_MAIN_*.toc").write_bytes(b""),
    "garbage toc": lambda kb: _file(kb, "_MAIN_*.toc").write_bytes(b"\x07garbage" * 40),
    "half a trm": lambda kb: _file(kb, "*.trm").write_bytes(
        _file(kb, "*.trm").read_bytes()[: _file(kb, "*.trm").stat().st_size // 2]
    ),
    "no pst": lambda kb: _file(kb, "*.pst").unlink(),
    "garbage nid.col": lambda kb: _file(kb, "*.nid.col").write_bytes(bytes(range(251, 0, -7)) * 8),
}


@needs_whoosh
@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_whoosh_index_says_so_and_is_rebuilt(make_kb, damage: str) -> None:
    kb = whoosh_kb(make_kb)
    DAMAGE[damage](kb)
    assert_one_line_error(
        run(kb, "search", "skiplist"), "whoosh index", "damaged", "'kb ingest --rebuild'"
    )
    result = run(kb, "ingest", "--rebuild")
    assert result.exit_code == 0, result.output
    assert found(kb, "skiplist") == ["redis.md"]
    assert KnowledgeBase.open(kb.home).engine().name == "whoosh"  # the rebuild kept it


@needs_whoosh
def test_a_plain_ingest_rebuilds_a_whoosh_index_it_cannot_open(make_kb) -> None:
    kb = whoosh_kb(make_kb)
    DAMAGE["empty toc"](kb)
    assert run(kb, "ingest").exit_code == 0
    assert found(kb, "skiplist") == ["redis.md"]


@needs_whoosh
def test_a_whoosh_rebuild_on_a_full_disk_leaves_the_old_index(make_kb, monkeypatch) -> None:
    from whoosh.filedb.filestore import FileStorage

    kb = whoosh_kb(make_kb)
    create_file = FileStorage.create_file

    def full(self: FileStorage, name: str, *args: Any, **kwargs: Any) -> Any:
        if self.folder.endswith(".new") and not name.endswith(".toc"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return create_file(self, name, *args, **kwargs)

    monkeypatch.setattr(FileStorage, "create_file", full)
    result = run(kb, "ingest", "--rebuild")
    assert_one_line_error(result, "disk full", "whoosh.new", unwanted=("--rebuild",))
    monkeypatch.undo()
    assert sorted(p.name for p in kb.config.index_dir.iterdir() if ".new" in p.name) == []
    assert found(kb, "skiplist") == ["redis.md"]  # the old store and index, as they were


# -- settings ------------------------------------------------------------------------------


def test_new_notes_folder_outside_the_root_names_the_setting(make_kb) -> None:
    kb = make_kb(NOTES, config="roots: [notes]\nnew_notes_folder: ../outside\n")
    result = run(kb, "new", "--no-edit", "标题")
    assert result.exit_code == 2
    assert "new_notes_folder" in result.stderr and "'../outside'" in result.stderr
    assert not (kb.home / "outside").exists()
