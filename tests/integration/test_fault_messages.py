"""What kb says after a fault is true (issue 37, item 9): one line that names the cause,
never "the store is damaged" for what is not damage, never "nothing was changed" after
a change."""

from __future__ import annotations

from collections.abc import Callable

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
