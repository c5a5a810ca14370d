"""An unknown ``--option`` is a usage error that names it (exit 2), in ``kb search`` and
``kb list`` alike; only a single ``-word`` is the query's exclusion (issue 23, item 4)."""

from __future__ import annotations

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import run_cli as run

NOTES = {
    "roofline.md": "---\ntitle: Roofline 模型\n---\n\nroofline format 带宽\n",
    "other.md": "---\ntitle: Other\n---\n\nroofline only\n",
}


@pytest.fixture
def kb(make_kb) -> KnowledgeBase:
    made: KnowledgeBase = make_kb(NOTES)
    made.ingest()
    return made


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("search", "roofline", "--format", "x"), "--format"),
        (("search", "roofline", "--nosuchoption"), "--nosuchoption"),
        (("search", "--rebuild", "roofline"), "--rebuild"),
        (("search", "roofline", "--limit=3", "--wat=1"), "--wat"),
        (("list", "roofline", "--nosuchoption"), "--nosuchoption"),
    ],
)
def test_an_unknown_long_option_is_a_usage_error_naming_it(kb, args, named) -> None:
    result = run(kb, *args)
    assert result.exit_code == 2, result.output
    assert f"No such option '{named}'" in result.stderr
    assert result.stdout == ""  # nothing was searched


def test_a_single_dash_word_is_still_the_exclusion(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.home)
    result = run(kb, "search", "--paths", "roofline", "-format")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["notes/other.md"]


def test_after_double_dash_a_long_word_is_query_text(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.home)
    result = run(kb, "search", "--paths", "--", "--format")  # the word "format"
    assert result.stdout.splitlines() == ["notes/roofline.md"]
