"""A store kb cannot read says what it is: damaged ones name 'kb ingest --rebuild' (which
repairs each), one from a newer kb says so, and one from any older kb is upgraded by the
next ingest, keeping its notes where the upgrade allows."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from kb.knowledge_base import KnowledgeBase
from kb.store import SCHEMA_VERSION
from tests.conftest import run_cli as run

NOTES = {
    "redis.md": "---\ntags: [db]\n---\n# Redis 学习笔记\n\nskiplist，见 [GPU](gpu.md)。\n",
    "gpu.md": "# GPU 显存带宽\n\nroofline 模型。\n",
    "inbox/todo.md": "# 待办\n\n读完 Redis。\n",
}
REBUILD = "'kb ingest --rebuild'"


def assert_one_line_error(result: Result, *wanted: str) -> str:
    """Exit 1 with a single ``kb: ...`` line on stderr holding ``wanted``, no traceback."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kb: "), result.stderr
    for text in wanted:
        assert text in lines[0], lines[0]
    return lines[0]


def found(kb: KnowledgeBase, query: str) -> list[str]:
    result = run(kb, "search", "--json", query)
    assert result.exit_code == 0, result.output
    return sorted(hit["path"] for hit in json.loads(result.stdout))


def ingested(make_kb: Callable[..., KnowledgeBase]) -> KnowledgeBase:
    kb = make_kb(NOTES)
    assert run(kb, "ingest").exit_code == 0
    return kb


def sql(script: str) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.executescript(script)
        conn.close()

    return damage


def flip(offset: int) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[offset] ^= 0xFF
        path.write_bytes(bytes(data))

    return damage


def overwrite(data: bytes) -> Callable[[Path], None]:
    def damage(path: Path) -> None:
        path.write_bytes(data)

    return damage


def truncate(path: Path) -> None:
    with path.open("r+b") as file:
        file.truncate(path.stat().st_size // 2)


# -- damaged: one line naming the rebuild, which repairs it -----------------------------

DAMAGED = {
    # The user_version field is bytes 60-63 of the header: a flipped byte made
    # "written by a newer kb (schema 16711685); upgrade kb".
    "a flipped byte of the schema number": (flip(61), f"schema number {0xFF0000 + SCHEMA_VERSION}"),
    "a schema number no kb writes": (sql("PRAGMA user_version = 123456"), "schema number"),
    "a negative schema number": (sql("PRAGMA user_version = -3"), "schema number -3"),
    # Was "from an older kb: run 'kb ingest' to upgrade it", and that ingest then failed.
    "tables but no schema number": (sql("PRAGMA user_version = 0"), "no schema number"),
    # Was "no notes match 'skiplist'".
    "no notes table": (sql("DROP TABLE notes"), "the table notes is missing"),
    "no meta or links table": (
        sql("DROP TABLE meta; DROP TABLE links"),
        "the tables meta, links are missing",
    ),
    "a header that is not SQLite's": (flip(0), "file is not a database"),
    "not a database at all": (overwrite(b"\x00garbage " * 500), "not a database"),
    "a store cut in half": (truncate, "damaged"),
}


@pytest.mark.parametrize("case", list(DAMAGED), ids=list(DAMAGED))
def test_a_damaged_store_says_so_and_names_the_rebuild_which_repairs_it(make_kb, case: str) -> None:
    damage, words = DAMAGED[case]
    kb = ingested(make_kb)
    damage(kb.config.store_path)
    for command in (["search", "skiplist"], ["links", "redis.md"], ["list"], ["ingest"]):
        assert_one_line_error(run(kb, *command), "damaged", words, REBUILD)
    result = run(kb, "ingest", "--rebuild")
    assert result.exit_code == 0, result.output
    assert found(kb, "skiplist") == ["redis.md"]
    assert found(kb, "tag:db") == ["redis.md"]
    assert run(kb, "ingest").stdout.startswith("added 0, updated 0, moved 0, removed 0")


def test_a_store_from_a_newer_kb_says_so_and_names_the_rebuild_too(make_kb) -> None:
    kb = ingested(make_kb)
    sql(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")(kb.config.store_path)
    for command in (["search", "skiplist"], ["ingest"]):
        line = assert_one_line_error(run(kb, *command), "newer kb", "upgrade kb", REBUILD)
        assert "damaged" not in line
    assert run(kb, "ingest", "--rebuild").exit_code == 0
    assert found(kb, "skiplist") == ["redis.md"]


def test_an_empty_store_file_is_built_by_the_next_ingest(make_kb) -> None:
    """A store file with nothing in it (a first ingest killed as it began) is no damage."""
    kb = make_kb(NOTES)
    kb.config.index_dir.mkdir()
    kb.config.store_path.write_bytes(b"")
    line = assert_one_line_error(run(kb, "search", "skiplist"), "empty", "run 'kb ingest'")
    assert "damaged" not in line
    assert run(kb, "ingest").exit_code == 0
    assert found(kb, "skiplist") == ["redis.md"]


def test_the_rebuild_of_a_damaged_store_keeps_the_engine_it_chose(make_kb) -> None:
    pytest.importorskip("whoosh")
    kb = ingested(make_kb)
    assert run(kb, "ingest", "--rebuild", "--engine", "whoosh").exit_code == 0
    flip(61)(kb.config.store_path)
    assert run(kb, "ingest", "--rebuild").exit_code == 0
    assert kb.engine_name() == "whoosh"


@pytest.mark.slow
def test_every_header_byte_flipped_answers_truly_or_names_the_rebuild(
    make_kb, tmp_path: Path
) -> None:
    """Each of the 100 header bytes flipped in turn: kb answers as before (SQLite ignores
    the byte) or says in one line what is wrong and names the rebuild, which repairs it."""
    kb = ingested(make_kb)
    good = tmp_path / "good.sqlite"
    shutil.copyfile(kb.config.store_path, good)
    for offset in range(100):
        shutil.copyfile(good, kb.config.store_path)
        flip(offset)(kb.config.store_path)
        result = run(kb, "search", "--json", "skiplist")
        if result.exit_code == 0:
            assert [hit["path"] for hit in json.loads(result.stdout)] == ["redis.md"], offset
            continue
        assert_one_line_error(result, REBUILD)
        assert run(kb, "ingest", "--rebuild").exit_code == 0, offset
        assert found(kb, "skiplist") == ["redis.md"], offset


# -- older: the next ingest upgrades it -------------------------------------------------

# Each schema kb has had, made from today's store by taking back what each later step
# added (the steps are MIGRATIONS in kb/store/schema.py; the shapes are in git history).
_TO_5 = "DROP TABLE passages; DROP TABLE embedded;"
_TO_4 = _TO_5 + (
    "DROP INDEX notes_changed; DROP INDEX notes_date; CREATE INDEX notes_date ON notes(date);"
)
_TO_3 = _TO_4 + "DROP INDEX links_missing_file;"
_TO_2 = _TO_3 + "DROP TABLE link_lookups; DROP TABLE name_keys; DROP INDEX links_new;"
_TO_1 = _TO_2 + "DELETE FROM meta WHERE key = 'store_id';"
OLDER = {1: _TO_1, 2: _TO_2, 3: _TO_3, 4: _TO_4, 5: _TO_5}
STARTED_OVER = {1, 2}  # the steps to 2 and 3 start over: the notes are read again


def test_every_older_schema_is_named() -> None:
    assert sorted(OLDER) == list(range(1, SCHEMA_VERSION))


def schema_of(path: Path) -> set[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    rows = conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ).fetchall()
    conn.close()
    return {(kind, name, text or "") for kind, name, text in rows}


@pytest.mark.parametrize("old", sorted(OLDER))
def test_a_store_of_every_older_schema_is_upgraded_by_the_next_ingest(
    make_kb, tmp_path: Path, old: int
) -> None:
    kb = ingested(make_kb)
    today = schema_of(kb.config.store_path)
    sql(OLDER[old] + f"PRAGMA user_version = {old};")(kb.config.store_path)
    assert schema_of(kb.config.store_path) != today
    line = assert_one_line_error(run(kb, "search", "skiplist"), "older kb", "run 'kb ingest'")
    assert "damaged" not in line
    result = run(kb, "ingest")
    assert result.exit_code == 0, result.output
    kept = "added 3, updated 0" if old in STARTED_OVER else "added 0, updated 0"
    assert result.stdout.startswith(kept), result.stdout
    assert schema_of(kb.config.store_path) == today  # as a new store is made
    assert found(kb, "skiplist") == ["redis.md"]
    assert found(kb, "tag:db") == ["redis.md"]
    assert "gpu.md" in run(kb, "links", "redis.md").stdout


def test_the_first_schema_as_an_early_kb_made_it_is_started_over(make_kb) -> None:
    kb = make_kb(NOTES)
    kb.config.index_dir.mkdir()
    sql("CREATE TABLE notes (id INTEGER PRIMARY KEY, path TEXT); PRAGMA user_version = 1;")(
        kb.config.store_path
    )
    assert run(kb, "ingest").exit_code == 0
    assert found(kb, "skiplist") == ["redis.md"]


def test_a_missing_search_index_table_is_damage_not_no_match(make_kb) -> None:
    import sqlite3

    from tests.conftest import run_cli

    kb = make_kb({"a.md": "# Redis\n\nredis zset\n"})
    kb.ingest()
    kb.close()
    from kb.engines.fts5 import TABLE

    with sqlite3.connect(kb.config.store_path) as conn:
        conn.execute(f"DROP TABLE {TABLE}")
    result = run_cli(kb, "search", "redis")
    assert result.exit_code == 1
    assert "damaged" in result.stderr
    assert "kb ingest --rebuild" in result.stderr
    assert run_cli(kb, "ingest", "--rebuild").exit_code == 0
    assert "a.md" in run_cli(kb, "search", "redis").stdout
