"""Faults around ingest: killed runs, special files, huge files, unreadable folders.

Each test is what a user meets: a run that must end, a lock that must not stay, a warning
that must name the file, notes that must not be lost.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.errors import IngestLocked
from kb.ingest.load import LoadJob, load_file
from kb.ingest.lock import ingest_lock
from kb.ingest.walk import NoteFile

PROC = Path("/proc")
NOTES = 800  # over the 300 changed files from which ingest parses in worker processes
BODY = "## 小节\n\n" + "显存带宽是GPU的瓶颈，roofline 模型说明了一切。\n\n" * 20


def kb_command(kb_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "kb", "--kb", str(kb_dir), *args]


def children_of(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux /proc), but multiprocessing's resource
    tracker, which holds no lock and exits when its last user does."""
    found = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # the command name may hold spaces and parentheses: fields follow the last ')'
            if int(stat.rpartition(")")[2].split()[1]) != pid:
                continue
            try:
                if b"resource_tracker" not in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _runs_worker(pid: int) -> bool:
    """Whether the process has exec'd kb's parse worker (its command line says so)."""
    try:
        return b"run_worker" in (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return True  # exited: nothing is held


def open_files(pid: int) -> dict[int, str]:
    """A process's descriptors and what they are; empty once it has exited."""
    try:
        fds = list((PROC / str(pid) / "fd").iterdir())
    except OSError:
        return {}
    files = {}
    for fd in fds:
        try:
            files[int(fd.name)] = str(fd.readlink())
        except OSError:
            continue
    return files


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


# -- killed parallel ingests -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(not PROC.is_dir(), reason="finds the worker processes in /proc")
@pytest.mark.parametrize(
    "signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name
)
def test_killed_parallel_ingest_leaves_no_lock_and_no_hang(
    make_kb, tmp_path: Path, signum: signal.Signals
) -> None:
    kb = make_kb({f"d{i % 20}/n{i}.md": f"# 笔记 {i}\n\n{BODY}" for i in range(NOTES)})
    process = subprocess.Popen(
        kb_command(tmp_path, "ingest"), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 30
        while len(workers) < 2 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
            workers = [p for p in children_of(process.pid) if open_files(p)]
        assert len(workers) >= 2, "the ingest never started its parse workers"
        # Started workers let go of the caller's pipes before they take work. A worker
        # is looked at once it runs its own program: between fork and exec a child
        # still holds every descriptor of the parent, the lock too, for an instant.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(
            open_files(p).get(1) != os.devnull or not _runs_worker(p) for p in workers
        ):
            time.sleep(0.05)
        for worker in workers:  # they hold neither the lock nor the caller's pipes
            files = open_files(worker)
            assert not [f for f in files.values() if f.endswith("ingest.lock")], files
            assert files.get(1) == files.get(2) == os.devnull, files
        process.send_signal(signum)
        # the caller's pipes close at once: no worker keeps them open
        _, stderr = process.communicate(timeout=20)
    finally:
        kill_all([process.pid, *workers])
        process.wait()
    if signum == signal.SIGKILL:
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode == 128 + signum, stderr
        name = signal.Signals(signum).name
        assert stderr.decode().strip().splitlines()[-1].startswith(f"kb: stopped by {name}")
        assert "Traceback" not in stderr.decode()
    deadline = time.monotonic() + 5
    while [p for p in workers if PROC.joinpath(str(p)).exists()] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in workers if PROC.joinpath(str(p)).exists()], "workers outlived it"
    if kb.config.store_path.exists():
        assert kb._store.notes.count() == 0  # the unfinished run was rolled back
    rerun = subprocess.run(
        kb_command(tmp_path, "ingest", "--wait", "0", "--json"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert f'"added": {NOTES}' in rerun.stdout


# -- the lock ----------------------------------------------------------------------------


def test_another_ingest_is_named_by_its_pid(make_kb) -> None:
    kb = make_kb({"a.md": "# a\n"})
    with ingest_lock(kb.config), pytest.raises(IngestLocked, match=rf"\(pid {os.getpid()}\)"):
        kb.ingest(lock_wait=0)


@pytest.mark.parametrize(
    ("make_bad", "message"),
    [
        (lambda index: (index / "ingest.lock").mkdir(parents=True), "is a folder, not a lock"),
        (lambda index: index.write_text("not a folder"), "is a file, not a folder"),
    ],
    ids=["lock-is-a-folder", "index-is-a-file"],
)
def test_a_lock_path_of_the_wrong_kind_is_one_line(make_kb, tmp_path: Path, make_bad, message):
    make_kb({"a.md": "# a\n"})
    make_bad(tmp_path / "index")
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "ingest"])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.count("\n") == 1
    assert message in result.stderr
    assert str(tmp_path / "index") in result.stderr


# -- special files -----------------------------------------------------------------------


def make_special_files(notes: Path) -> dict[str, str]:
    """Note names that are not regular files; returns name -> what the warning calls it."""
    os.mkfifo(notes / "fifo.md")
    (notes / "loop.md").symlink_to("loop.md")
    (notes / "dangling.md").symlink_to("missing.md")
    made = {"fifo.md": "a FIFO", "loop.md": "a symlink loop", "dangling.md": "a dangling symlink"}
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.bind(str(notes / "socket.md"))
            made["socket.md"] = "a socket"
        except OSError:  # a path too long for a socket address
            pass
    return made


def test_special_files_are_skipped_with_a_warning_and_remembered(make_kb, tmp_path: Path):
    kb = make_kb({"good.md": "# good\n"})
    made = make_special_files(tmp_path / "notes")
    stats = kb.ingest()
    assert stats.added == 1
    assert sorted((path, p.kind, p.message) for path, p in stats.problems) == sorted(
        (name, "not-a-file", f"{what}, not a regular file; skipped") for name, what in made.items()
    )
    again = kb.ingest()  # remembered: one stat each, no new warning
    assert (again.added, again.warnings) == (0, 0)
    assert {p.path for p in kb.links.check() if p.message.startswith("not-a-file: ")} == set(made)


def test_note_replaced_by_a_fifo_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "n.md"
    os.mkfifo(fifo)
    # the scan saw a regular file; a FIFO is there when it is read
    job = LoadJob(NoteFile("n.md", "notes", "n.md", str(fifo), 10, 0), "", 1 << 20, ())
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(load_file, job)
        try:
            result = future.result(timeout=5)
        finally:
            if not future.done():  # release the old code's blocked open()
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert result.status == "skipped"
    assert [(p.kind, p.message) for p in result.problems] == [
        ("not-a-file", "a FIFO, not a regular file; skipped")
    ]


@pytest.mark.parametrize("name", ["fifo.md", "loop.md", "dangling.md"])
def test_ingest_of_a_special_file_is_one_warning(make_kb, tmp_path: Path, name: str) -> None:
    make_kb({"good.md": "# good\n"})
    what = make_special_files(tmp_path / "notes")[name]
    result = CliRunner().invoke(
        cli, ["--kb", str(tmp_path), "ingest", str(tmp_path / "notes" / name)]
    )
    assert result.exit_code == 0, result.output
    assert result.stderr == f"warning: {name}: {what}, not a regular file; skipped\n"


def test_links_on_a_symlink_loop_is_one_line(make_kb, tmp_path: Path) -> None:
    kb = make_kb({"good.md": "# good\n"})
    (tmp_path / "notes/loop.md").symlink_to("loop.md")
    kb.ingest()
    result = CliRunner().invoke(
        cli, ["--kb", str(tmp_path), "links", str(tmp_path / "notes/loop.md")]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("kb: no note matches")
    assert result.stderr.count("\n") == 1


# -- bounded reads -----------------------------------------------------------------------


@pytest.mark.slow
def test_a_huge_sparse_file_costs_no_memory(make_kb, tmp_path: Path) -> None:
    make_kb({"good.md": "# good\n"})
    with (tmp_path / "notes/huge.md").open("wb") as huge:
        huge.truncate(4 << 30)  # 4 GB of holes: nothing on disk
    limit = 1 << 30

    def cap_memory() -> None:  # reading the file would need 4 GB
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    result = subprocess.run(
        kb_command(tmp_path, "ingest"),
        capture_output=True,
        text=True,
        preexec_fn=cap_memory,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "huge.md: file is 4096.0 MB, over max_file_size (10.0 MB); skipped" in result.stderr


def test_a_file_over_the_cap_is_not_read(tmp_path: Path) -> None:
    import kb.ingest.load as ingest_module

    path = tmp_path / "n.md"
    path.write_bytes(b"x" * 10)
    data, info = ingest_module.read_bytes(str(path), 100)
    assert (data, info.st_size) == (b"x" * 10, 10)
    path.write_bytes(b"y" * 5000)
    data, _ = ingest_module.read_bytes(str(path), 100)
    assert data == b""  # over the cap by its size: nothing read


# -- unreadable folders ------------------------------------------------------------------


def fail_scandir(monkeypatch, folder: Path, error: int = errno.EACCES) -> None:
    real = os.scandir

    def scandir(path):
        if Path(path) == folder:
            raise OSError(error, os.strerror(error), str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


@pytest.mark.parametrize("error", [errno.EACCES, errno.EIO])
def test_an_unreadable_folder_keeps_its_notes(make_kb, tmp_path: Path, monkeypatch, error):
    kb = make_kb({"top.md": "# top\n", "sub/a.md": "# a\n", "sub/deep/b.md": "# b\n"})
    kb.ingest()
    fail_scandir(monkeypatch, tmp_path / "notes/sub", error)
    (tmp_path / "notes/top.md").unlink()  # elsewhere, removal goes on as usual
    stats = kb.ingest()
    assert (stats.removed, stats.unchanged) == (1, 0)
    assert [(path, p.kind) for path, p in stats.problems] == [("sub", "unreadable-folder")]
    assert f"({os.strerror(error)}); its notes are kept" in stats.problems[0][1].message
    assert sorted(row.path for row in kb._store.notes.listing()) == ["sub/a.md", "sub/deep/b.md"]
    assert [hit.path for hit in kb.search("a").hits] == ["sub/a.md"]
    monkeypatch.undo()
    stats = kb.ingest()  # readable again: nothing to do, and the warning is gone
    assert (stats.added, stats.removed, stats.unchanged, stats.warnings) == (0, 0, 2, 0)
    assert kb.links.check() == []


def test_an_unreadable_root_keeps_every_note(make_kb, tmp_path: Path, monkeypatch) -> None:
    kb = make_kb({"a.md": "# a\n", "sub/b.md": "# b\n"})
    kb.ingest()
    fail_scandir(monkeypatch, tmp_path / "notes")
    stats = kb.ingest()
    assert (stats.removed, stats.warnings) == (0, 1)
    assert kb._store.notes.count() == 2


def test_a_folder_gone_during_the_walk_removes_its_notes(make_kb, tmp_path: Path, monkeypatch):
    kb = make_kb({"top.md": "# top\n", "sub/a.md": "# a\n"})
    kb.ingest()
    fail_scandir(monkeypatch, tmp_path / "notes/sub", errno.ENOENT)
    stats = kb.ingest()
    assert (stats.removed, stats.warnings) == (1, 0)
    assert [row.path for row in kb._store.notes.listing()] == ["top.md"]
