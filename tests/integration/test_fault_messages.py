"""What kb says after a fault is true (issue 37, item 9): one line that names the cause,
never "the store is damaged" for what is not damage, never "nothing was changed" after
a change."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import run_cli


@pytest.mark.parametrize("option", ["--path", "--tag"])
def test_a_filter_too_long_for_sqlite_is_called_too_long(
    make_kb: Callable[..., KnowledgeBase], option: str
) -> None:
    kb = make_kb({"a.md": "# A\n"})
    kb.ingest()
    result = run_cli(kb, "list", option, "a" * 60_000)
    assert result.exit_code == 2
    name = option.removeprefix("--")
    assert result.stderr == (
        f"kb: the {name} filter is too long: 60,000 characters, where kb takes at most 4,096\n"
    )
    assert "damaged" not in result.stderr
    assert run_cli(kb, "list", option, "a" * 4096).exit_code == 0  # as long as a path may be


def test_an_unknown_engine_in_the_store_names_the_way_out_and_rebuild_takes_it(
    make_kb: Callable[..., KnowledgeBase],
) -> None:
    import sqlite3

    kb = make_kb({"a.md": "# A\n\nzebracorn\n"})
    kb.ingest()
    with sqlite3.connect(kb.config.store_path) as conn:  # a newer kb's engine, say
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('engine', 'lucene')")
    conn.close()
    result = run_cli(kb, "search", "zebracorn")
    assert result.exit_code == 1
    assert result.stderr == (
        "kb: the store names a search engine kb does not know ('lucene'; known: fts5, "
        "whoosh, tantivy); 'kb ingest --rebuild --engine fts5' chooses one again\n"
    )
    rebuilt = run_cli(kb, "ingest", "--rebuild")
    assert rebuilt.exit_code == 0, rebuilt.stderr
    found = run_cli(kb, "search", "zebracorn")
    assert found.exit_code == 0 and "a.md" in found.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(15, 143), (2, 130)], ids=["SIGTERM", "Ctrl-C"])
def test_kb_mv_stopped_after_the_move_says_it_moved(
    make_kb: Callable[..., KnowledgeBase], signum: int, code: int
) -> None:
    import subprocess
    import sys

    kb = make_kb({"t.md": "# T\n", "l.md": "# L\n\nsee [t](t.md)\n"})
    kb.ingest()
    destination = kb.notes_root / "u.md"
    # The signal comes during the ingest that follows the move (the second ingest of kb mv).
    script = (
        "import os, sys, time\n"
        "from kb.knowledge_base import KnowledgeBase\n"
        "ingest = KnowledgeBase.ingest\n"
        "calls = []\n"
        "def stopped(self, *args, **kwargs):\n"
        "    calls.append(1)\n"
        "    if len(calls) == 2:\n"
        f"        os.kill(os.getpid(), {signum})\n"
        "        time.sleep(10)\n"
        "    return ingest(self, *args, **kwargs)\n"
        "KnowledgeBase.ingest = stopped\n"
        "from kb.cli import main\n"
        f"sys.argv = ['kb', '--kb', {str(kb.home)!r}, 'mv', 't.md', {str(destination)!r}]\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == code
    assert "nothing was changed" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert "kb: moved " in done.stderr and "run 'kb ingest'" in done.stderr
    assert (kb.notes_root / "u.md").exists() and not (kb.notes_root / "t.md").exists()
    assert "(u.md)" in (kb.notes_root / "l.md").read_text(encoding="utf-8")


@pytest.mark.skipif(not Path("/proc/self/exe").exists(), reason="needs Linux's /proc")
def test_a_symlink_that_cannot_be_read_is_skipped_with_a_warning(
    make_kb: Callable[..., KnowledgeBase],
) -> None:
    """``roots: [/]`` met /proc/N/exe of a process that had ended, whose link cannot be
    read (realpath raises), and the whole ingest stopped on it."""
    import subprocess
    import time

    ended = subprocess.Popen(["true"])  # not waited for yet: its /proc entry stays
    try:
        deadline = time.monotonic() + 10
        exe = Path(f"/proc/{ended.pid}/exe")
        while time.monotonic() < deadline:
            try:
                exe.readlink()
            except FileNotFoundError:
                break  # ended: its exe cannot be read
            time.sleep(0.05)
        else:
            pytest.skip("the process did not end")
        kb = make_kb({"a.md": "# A\n"})
        (kb.notes_root / "exe.md").symlink_to(exe)
        result = run_cli(kb, "ingest")
        assert result.exit_code == 0, result.stderr
        assert "added 1," in result.stdout
        assert "warning: exe.md: symlink that cannot be read; skipped" in result.stderr
    finally:
        ended.wait()


def test_a_full_disk_while_embedding_says_the_notes_are_stored(
    make_kb: Callable[..., KnowledgeBase], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The words commit first; a full disk in the embedding that follows used to say
    "cannot write the store" as if nothing had been stored."""
    import errno

    kb = make_kb({"a.md": "# A\n"})
    kb.ingest()
    (kb.notes_root / "b.md").write_text("# B\n\nzebracorn\n", encoding="utf-8")

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(kb.config.store_path))

    monkeypatch.setattr("kb.ingest.session._embed", full)
    result = run_cli(kb, "ingest")
    assert result.exit_code == 1
    assert result.stderr == (
        "kb: the notes are stored (added 1, updated 0, moved 0, removed 0) and found by "
        "their words, but embedding them for search by meaning stopped: disk full: "
        f"{kb.config.store_path}; 'kb ingest' embeds the rest\n"
    )
    assert [hit.path for hit in kb.search("zebracorn").hits] == ["b.md"]  # true: stored
