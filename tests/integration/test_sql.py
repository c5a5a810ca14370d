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


# -- bounded: time, rows, size, Ctrl-C (issue 37) -------------------------------------------

ENDLESS = "with recursive c(x) as (select 1 union all select x + 1 from c)"
COUNT_FOREVER = f"{ENDLESS} select count(*) from c"


def _kb_with(make_kb, settings: str) -> KnowledgeBase:
    kb = make_kb({"a.md": "# A\n\nhello\n"}, config=f"roots: [notes]\n{settings}")
    kb.ingest()
    return kb


def test_an_endless_query_stops_at_the_time_limit(make_kb) -> None:
    kb = _kb_with(make_kb, "sql_time_limit: 0.5\n")
    result = run_cli(kb, "sql", COUNT_FOREVER)
    assert result.exit_code == 1
    assert result.stderr == (
        "kb: SQL: stopped after 0.5 s (sql_time_limit in kb.yaml); "
        "add a LIMIT or a narrower WHERE, or raise the setting\n"
    )


def test_rows_past_the_cap_end_the_output_whole_and_say_so(make_kb) -> None:
    kb = _kb_with(make_kb, "sql_max_rows: 3\n")
    result = run_cli(kb, "sql", f"{ENDLESS} select x from c", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout) == [{"x": 1}, {"x": 2}, {"x": 3}]  # closed JSON
    assert result.stderr == (
        "kb: SQL: stopped after 3 rows (sql_max_rows in kb.yaml); "
        "add a LIMIT, or raise the setting\n"
    )
    exact = run_cli(kb, "sql", f"{ENDLESS} select x from c limit 3", "--json")
    assert exact.exit_code == 0, exact.output  # three rows asked for: no complaint


def test_the_default_row_cap_stops_an_endless_csv(make_kb) -> None:
    kb = _kb_with(make_kb, "")
    result = run_cli(kb, "sql", f"{ENDLESS} select x from c", "--csv")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "100000"
    assert "stopped after 100,000 rows" in result.stderr


def test_a_result_larger_than_the_size_cap_stops(make_kb) -> None:
    kb = _kb_with(make_kb, "sql_max_rows: 0\n")
    query = f"{ENDLESS} select printf('%.*c', 4194304, 'x') as s from c"
    result = run_cli(kb, "sql", query, "--jsonl")
    assert result.exit_code == 1
    assert len(result.stdout.splitlines()) == 16  # 64 MB of text in 4 MB values
    assert "more than 64 MB of text" in result.stderr


@pytest.mark.parametrize(
    "setting", ["sql_time_limit: -1", "sql_time_limit: nan", "sql_max_rows: x"]
)
def test_a_bad_limit_setting_is_one_line(make_kb, setting: str) -> None:
    kb = make_kb({"a.md": "# A\n"})
    (kb.home / "kb.yaml").write_text(f"roots: [notes]\n{setting}\n", encoding="utf-8")
    result = run_cli(kb, "sql", "select 1")
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert setting.split(":", maxsplit=1)[0] in result.stderr


@pytest.mark.slow
def test_ctrl_c_stops_an_endless_query_at_once(make_kb) -> None:
    import signal
    import subprocess
    import sys
    import time

    kb = _kb_with(make_kb, "sql_time_limit: 0\n")  # no time limit: only Ctrl-C can stop it
    process = subprocess.Popen(
        [sys.executable, "-m", "kb", "--kb", str(kb.home), "sql", COUNT_FOREVER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(2)  # started, and deep in SQLite
    assert process.poll() is None
    process.send_signal(signal.SIGINT)
    try:
        out, err = process.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("kb sql did not stop on Ctrl-C")
    assert process.returncode == 130
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("kb: interrupted"), err


@pytest.mark.parametrize(
    "query",
    [
        "select name from pragma_table_info('notes')",
        "select * from pragma_index_list('notes', 'main')",
        "select user_version from pragma_user_version",
    ],
)
def test_pragma_functions_that_only_report_are_allowed(sample, query: str) -> None:
    before = sample.config.store_path.read_bytes()
    result = run_cli(sample, "sql", query, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)
    assert sample.config.store_path.read_bytes() == before


@pytest.mark.parametrize(
    "statement",
    ["pragma writable_schema = 1", "update main.sqlite_master set sql = 'x'"],
)
def test_the_schema_stays_out_of_reach(sample, statement: str) -> None:
    before = sample.config.store_path.read_bytes()
    result = run_cli(sample, "sql", statement)
    assert result.exit_code == 2
    assert "kb sql only reads" in result.stderr
    assert sample.config.store_path.read_bytes() == before


HOSTILE = "x\x1b]0;pwned\x07\x1b[2Jy\u202e.md"


def _on_a_terminal(kb: KnowledgeBase, *args: str) -> str:
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "kb", "--kb", str(kb.home), *args],
        stdout=follower,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the pty's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=30)
    os.close(leader)
    return b"".join(chunks).decode("utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["--csv", "--tsv"])
def test_csv_and_tsv_on_a_terminal_show_control_characters_escaped(make_kb, fmt: str) -> None:
    kb = make_kb({HOSTILE: "# T\n"})
    kb.ingest()
    shown = _on_a_terminal(kb, "sql", "select path from notes", fmt)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert "x\\x1b]0;pwned\\x07\\x1b[2Jy<U+202E>.md" in shown
    piped = run_cli(kb, "sql", "select path from notes", fmt)
    assert HOSTILE in piped.stdout  # piped to a program: exact
