"""kb sql: read-only SQL over the store's documented views, printed as sqlite-utils does."""

from __future__ import annotations

import json

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import SAMPLE_NOTES, run_cli


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> KnowledgeBase:
    import shutil

    home = tmp_path_factory.mktemp("sql")
    shutil.copytree(SAMPLE_NOTES, home / "notes")
    kb = KnowledgeBase.open(home)
    kb.ingest()
    return kb


def test_counting_the_bundled_notes(sample) -> None:
    result = run_cli(sample, "sql", "select count(*) as n from notes", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"n": 44}]


@pytest.mark.parametrize(
    "statement",
    [
        "delete from notes",
        "delete from main.notes",
        "update main.notes set title = 'x'",
        "drop table main.links",
        "create table t(x)",
        "attach 'elsewhere.db' as x",
        "pragma user_version = 3",
        "insert into main.meta values ('a', 'b')",
    ],
)
def test_anything_that_writes_is_refused(sample, statement: str) -> None:
    before = sample.config.store_path.read_bytes()
    result = run_cli(sample, "sql", statement)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1  # one line, no traceback
    assert "kb sql only reads" in result.stderr
    assert sample.config.store_path.read_bytes() == before
    assert not (sample.home / "elsewhere.db").exists()


def test_the_views_join_what_a_reader_wants(sample) -> None:
    result = run_cli(
        sample,
        "sql",
        "select distinct source from links where target_path = 'engineering/redis-study.md' "
        "order by source",
        "--jsonl",
    )
    assert result.exit_code == 0, result.output
    sources = [json.loads(line)["source"] for line in result.stdout.splitlines()]
    assert "engineering/compute-platform-time-window.md" in sources  # the project using Redis
    tags = json.loads(run_cli(sample, "sql", "select tag, notes from tags", "--json").stdout)
    assert {"tag": "cs336", "notes": 10} in tags


def test_csv_tsv_and_the_table(sample) -> None:
    query = "select path, title from notes where path = 'cs336/_index.md'"
    csv_lines = run_cli(sample, "sql", query, "--csv").stdout.splitlines()
    assert csv_lines[0] == "path,title"
    assert csv_lines[1].startswith("cs336/_index.md,")
    assert run_cli(sample, "sql", query, "--tsv").stdout.splitlines()[0] == "path\ttitle"
    table = run_cli(sample, "sql", query, "--table").stdout
    assert "cs336/_index.md" in table
    assert "path" in table.splitlines()[0]


def test_a_bad_query_is_one_line(sample) -> None:
    for query in ("select nope from notes", "select 1; select 2", "selec"):
        result = run_cli(sample, "sql", query)
        assert result.exit_code == 2
        assert result.stderr.startswith("kb: SQL: ")
        assert result.stderr.count("\n") == 1
