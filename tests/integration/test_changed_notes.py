"""Answers never silently older than the files (issue 38): a command that reads notes stats
the notes roots first and, as kb.yaml's `changed_notes` says, ingests what changed or says
in one line on stderr how many changed and what to run; `kb stats` reports the last
ingest's own time."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import run_cli as run

NOTES = {
    "posts/softmax.md": "---\ntitle: Softmax\ndate: 2024-01-01\n---\n\nsoftmax 数值稳定\n",
    "posts/old.md": "---\ntitle: Old\ndate: 2023-01-01\n---\n\nan older note\n",
}


def made(make_kb, setting: str | None = None) -> KnowledgeBase:
    config = "roots: [notes]\n" + (f"changed_notes: {setting}\n" if setting else "")
    kb = make_kb(NOTES, config=config)
    kb.ingest()
    return kb


def append(kb: KnowledgeBase, rel: str, text: str) -> None:
    """`echo … >> note`: the size changes, and the time (set ahead, so a coarse clock
    cannot hide the change)."""
    path = kb.notes_root / rel
    with path.open("a", encoding="utf-8") as file:
        file.write(text)
    later = time.time_ns() + 5_000_000_000
    os.utime(path, ns=(later, later))


@pytest.mark.parametrize("setting", [None, "auto", "ingest"])
def test_a_changed_note_is_ingested_before_a_search(make_kb, setting: str | None) -> None:
    kb = made(make_kb, setting)
    append(kb, "posts/softmax.md", "\nlogsumexp 技巧\n")
    (kb.notes_root / "posts" / "new.md").write_text("# New\n\nlogsumexp too\n", "utf-8")
    result = run(kb, "search", "--json", "logsumexp")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)  # stdout stays pure JSON
    assert sorted(hit["path"] for hit in found) == ["posts/new.md", "posts/softmax.md"]
    assert result.stderr.splitlines() == [
        "kb: 2 notes changed since the last ingest (added 1, updated 1): ingested first"
    ]
    again = run(kb, "search", "--json", "logsumexp")
    assert again.stderr == ""  # nothing changed since


def test_recent_and_list_see_an_edit_made_since_the_last_ingest(make_kb) -> None:
    kb = made(make_kb)
    append(kb, "posts/old.md", "\nedited\n")
    result = run(kb, "recent", "-n", "1", "--json")
    assert [note["path"] for note in json.loads(result.stdout)] == ["posts/old.md"]
    (kb.notes_root / "posts" / "softmax.md").unlink()
    result = run(kb, "list", "--json")
    assert [note["path"] for note in json.loads(result.stdout)] == ["posts/old.md"]
    assert "(removed 1): ingested first" in result.stderr


def test_tell_says_how_many_changed_and_what_to_run(make_kb) -> None:
    kb = made(make_kb, "tell")
    append(kb, "posts/softmax.md", "\nlogsumexp\n")
    result = run(kb, "search", "logsumexp")
    assert result.exit_code == 1  # the store is as it was: nothing holds the word yet
    assert result.stderr.splitlines()[0] == (
        "kb: 1 note changed since the last ingest (updated 1); run 'kb ingest' to bring them in"
    )
    assert run(kb, "ingest").exit_code == 0
    assert run(kb, "search", "--paths", "logsumexp").exit_code == 0


def test_off_does_not_look(make_kb) -> None:
    kb = made(make_kb, "off")
    append(kb, "posts/softmax.md", "\nlogsumexp\n")
    result = run(kb, "search", "logsumexp")
    assert (result.exit_code, result.stderr) == (1, "kb: no notes match 'logsumexp'\n")


def test_many_changes_are_left_to_kb_ingest(make_kb, monkeypatch) -> None:
    monkeypatch.setattr("kb.cli.output.CATCH_UP_AT_MOST", 1, raising=False)
    base = made(make_kb)
    append(base, "posts/softmax.md", "\nlogsumexp\n")
    append(base, "posts/old.md", "\nlogsumexp\n")
    result = run(base, "search", "logsumexp")
    assert result.exit_code == 1
    assert "kb: 2 notes changed since the last ingest (updated 2); run 'kb ingest'" in (
        result.stderr
    )


def test_auto_stops_looking_past_its_size(make_kb, monkeypatch) -> None:
    monkeypatch.setattr("kb.ingest.changes.AUTO_LOOKS_UP_TO", 1)
    base = made(make_kb)
    append(base, "posts/softmax.md", "\nlogsumexp\n")
    result = run(base, "search", "logsumexp")
    assert (result.exit_code, result.stderr) == (1, "kb: no notes match 'logsumexp'\n")


def test_another_ingest_holding_the_lock_turns_catching_up_into_a_line(make_kb) -> None:
    from kb.ingest.lock import ingest_lock

    base = made(make_kb)
    append(base, "posts/softmax.md", "\nlogsumexp\n")
    with ingest_lock(base.config, wait_seconds=0):
        result = run(base, "search", "logsumexp")
    assert result.exit_code == 1
    assert result.stderr.startswith("kb: 1 note changed since the last ingest (updated 1), ")
    assert "not ingested" in result.stderr and "run 'kb ingest'" in result.stderr


def test_an_unknown_setting_is_a_warning_and_the_default(make_kb) -> None:
    base = made(make_kb, "sometimes")
    result = run(base, "search", "softmax")
    assert result.exit_code == 0
    assert "changed_notes: 'sometimes' is none of auto, ingest, tell, off; using auto" in (
        result.stderr
    )


def test_stats_reports_the_ingest_time_not_the_store_files(make_kb) -> None:
    base = made(make_kb)
    first = json.loads(run(base, "stats", "--json").stdout)["last_ingest"]
    # Readers touch kb.sqlite-shm (and a checkpoint the store): none of it is an ingest.
    later = time.time_ns() + 3_600_000_000_000
    for file in Path(base.config.store_path).parent.glob("kb.sqlite*"):
        os.utime(file, ns=(later, later))
    assert run(base, "search", "softmax").exit_code == 0
    assert run(base, "check").exit_code in (0, 1)
    assert json.loads(run(base, "stats", "--json").stdout)["last_ingest"] == first
    text = run(base, "stats").stdout
    assert f"last ingest:  {first}" in text
