"""kb's bash completion reads the line as typed (COMP_LINE), so words bash splits at the
characters of COMP_WORDBREAKS (``tag:gp``, ``--tag=ra``) complete, and answers only the
part bash replaces; fish keeps a title with a comma whole (issue 23, item 3). The real
shells in tmux: tests/tui/test_cli_in_tmux.py."""

from __future__ import annotations

import pytest

from kb.cli import cli
from kb.cli.shell_completion import KbBashComplete, completion_script
from kb.knowledge_base import KnowledgeBase

BASH_BREAKS = "\"'><=;|&(:"  # bash's default COMP_WORDBREAKS, but for the blanks

NOTES = {
    "eng/redis.md": "---\ntitle: Redis 学习笔记\ntags: [redis, cache]\n---\n\nx\n",
    "cs/gpu.md": "---\ntitle: GPU, 显存与带宽\ntags: [gpu/memory]\nseries: [CS336]\n"
    "date: 2024-03-10\n---\n\nx\n",
}


@pytest.fixture
def kb(make_kb) -> KnowledgeBase:
    made: KnowledgeBase = make_kb(NOTES)
    made.ingest()
    return made


def answers(kb: KnowledgeBase, monkeypatch, typed: str) -> list[str]:
    """What kb answers bash for the line ``typed`` with the cursor at its end."""
    line = f"kb --kb {kb.home} {typed}"
    monkeypatch.setenv("COMP_LINE", line)
    monkeypatch.setenv("COMP_WORDBREAKS", f" \t\n{BASH_BREAKS}")
    out = KbBashComplete(cli, {}, "kb", "_KB_COMPLETE").complete()
    return [row.split(",", 1)[1] for row in out.splitlines()]


def test_a_query_prefix_completes_the_part_after_the_colon(kb, monkeypatch) -> None:
    assert answers(kb, monkeypatch, "list tag:gp") == ["gpu/memory"]
    assert answers(kb, monkeypatch, "list series:C") == ["CS336"]
    assert sorted(answers(kb, monkeypatch, "list tag:")) == ["cache", "gpu/memory", "redis"]


def test_search_completes_filters_dates_and_titles_as_list_does(kb, monkeypatch) -> None:
    assert answers(kb, monkeypatch, "search tag:gp") == ["gpu/memory"]
    assert answers(kb, monkeypatch, "search series:C") == ["CS336"]
    assert answers(kb, monkeypatch, "search date:2024") == ["2024-03", "2024"]
    assert answers(kb, monkeypatch, "search date:2024-") == ["2024-03"]
    assert answers(kb, monkeypatch, "search Red") == ["Redis 学习笔记"]
    assert answers(kb, monkeypatch, "search 显存 gp") == ["GPU, 显存与带宽"]
    assert answers(kb, monkeypatch, 'search title:"Redis') == ['"Redis 学习笔记"']
    assert answers(kb, monkeypatch, "search -re") == []  # an exclusion is no title


def test_the_tag_option_completes_spaced_or_joined(kb, monkeypatch) -> None:
    assert sorted(answers(kb, monkeypatch, "list --tag ")) == ["cache", "gpu/memory", "redis"]
    assert answers(kb, monkeypatch, "list --tag re") == ["redis"]
    assert answers(kb, monkeypatch, "list --tag=ca") == ["cache"]


def test_a_title_is_answered_whole_for_bash_to_quote(kb, monkeypatch) -> None:
    assert answers(kb, monkeypatch, "show Redis") == ["Redis 学习笔记"]
    assert answers(kb, monkeypatch, "show Redis\\ 学") == ["Redis 学习笔记"]
    assert answers(kb, monkeypatch, 'show "Redis 学') == ["Redis 学习笔记"]
    assert answers(kb, monkeypatch, "show GPU") == ["GPU, 显存与带宽"]


def test_the_bash_script_reads_the_line_and_lets_bash_quote() -> None:
    script = completion_script("bash", cli)
    assert 'COMP_LINE="${COMP_LINE:0:COMP_POINT}"' in script
    assert "compopt -o filenames" in script
    assert 'COMPREPLY+=("$value")' in script


def test_the_fish_script_splits_an_answer_at_its_first_comma_only() -> None:
    assert 'string split -m 1 "," $completion' in completion_script("fish", cli)
