"""Output that fits the terminal (issue 23, items 2 and 9): at 80 and 120 columns ``kb
list`` is a table padded by display width with titles cut at the end and paths in the
middle with ``…``; ``kb search`` wraps snippets where kb's line breaker allows; ``kb
links``, ``kb check`` and ``kb tags`` fit too; external URLs are shown decoded. Piped, each
prints whole records, one a line, as before.

The terminal is the one seam ``kb.cli.layout.stdout_is_terminal``; the width is
``COLUMNS``, as a shell sets it. Snapshots: ``pytest --snapshot-update`` on this module
after a deliberate change, and read the .ambr diff before committing.
"""

from __future__ import annotations

import itertools
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kb.cli import cli
from kb.knowledge_base import KnowledgeBase
from kb.linebreak import cell_width
from tests.conftest import SAMPLE_NOTES

WIDTHS = [80, 120]

TWO_PHASE = """---
title: 分布式事务：二阶段提交与三阶段提交的区别，以及它们在 MySQL XA 里的样子
date: 2024-06-01
tags: [distributed/transactions, mysql]
---

见 [维基百科：二阶段提交](https://zh.wikipedia.org/wiki/%E4%BA%8C%E9%98%B6%E6%AE%B5%E6%8F%90%E4%BA%A4)\
 和 [Redis 学习笔记](../engineering/redis-study.md)，还有 \
[MySQL XA](https://dev.mysql.com/doc/refman/8.0/en/xa.html)。

一段很长的话：二阶段提交的协调者在 prepare 之后宕机，参与者就只能等着，这就是 blocking 的由来；\
三阶段提交多了一个 pre-commit，路径 notes/posts/fsdp1-source-reading/index.md 不能被拆开。
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("terminal")
    shutil.copytree(SAMPLE_NOTES, folder / "notes")
    (folder / "notes" / "posts" / "two-phase.md").write_text(TWO_PHASE, encoding="utf-8")
    (folder / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    KnowledgeBase.open(folder).ingest()
    return folder


def on_terminal(
    home: Path, monkeypatch: pytest.MonkeyPatch, width: int | None, *args: str
) -> Result:
    """``kb ARGS`` from the knowledge base's folder, to a terminal ``width`` wide (None:
    piped)."""
    monkeypatch.chdir(home)
    monkeypatch.setattr("kb.cli.layout.stdout_is_terminal", lambda: width is not None)
    monkeypatch.setenv("COLUMNS", str(width or 80))
    result = CliRunner().invoke(cli, ["--kb", str(home), *args])
    assert result.exit_code in (0, 1), result.output
    return result


def assert_fits(result: Result, width: int) -> list[str]:
    lines = result.stdout.splitlines()
    wide = [line for line in lines if cell_width(line) > width]
    assert not wide, f"wider than {width} cells: {wide}"
    return lines


COMMANDS = {
    "list": ["list"],
    "search": ["search", "-n", "4", "roofline"],
    "links": ["links", "-n", "0", "posts/two-phase.md"],  # related: order not stable yet
    "check": ["check"],
    "tags": ["tags"],
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_fits_the_terminal(home, monkeypatch, snapshot, name, width) -> None:
    result = on_terminal(home, monkeypatch, width, *COMMANDS[name])
    assert_fits(result, width)
    assert result.stdout == snapshot


@pytest.mark.parametrize("width", [40, *WIDTHS])
def test_list_is_a_table_padded_by_display_width(home, monkeypatch, width) -> None:
    lines = assert_fits(on_terminal(home, monkeypatch, width, "list"), width)
    piped = on_terminal(home, monkeypatch, None, "list").stdout.splitlines()
    assert len(lines) == len(piped)  # one row a note: nothing wrapped
    # The file column starts at the same cell on every row, Chinese titles or not.
    shown_paths = [line.rsplit("  ", 1)[1] for line in lines]
    starts = {cell_width(line) - cell_width(p) for line, p in zip(lines, shown_paths, strict=True)}
    assert len(starts) == 1, starts
    for shown, path in zip(shown_paths, piped, strict=True):
        if shown != path:  # cut in the middle: its start and its end are the file's
            head, tail = shown.split("…")
            assert path.startswith(head) and path.endswith(tail), (shown, path)
    assert any("…" in line for line in lines)  # the long title is cut even at 120


def test_list_cuts_a_long_chinese_title_at_its_end(home, monkeypatch) -> None:
    lines = on_terminal(home, monkeypatch, 80, "list").stdout.splitlines()
    row = next(line for line in lines if "two-phase" in line)
    assert "分布式事务：二阶段提交" in row and "…" in row
    assert "样子" not in row  # the end of the title gave way


def test_search_wraps_snippets_without_splitting_a_word_or_a_path(home, monkeypatch) -> None:
    piped = on_terminal(home, monkeypatch, None, "search", "--all", "blocking").stdout
    snippet = piped.split("\n\n")[0].splitlines()[2]
    assert cell_width(snippet) > 80  # so it has to wrap
    lines = on_terminal(home, monkeypatch, 80, "search", "--all", "blocking").stdout
    wrapped = lines.split("\n\n")[0].splitlines()[2:]
    assert len(wrapped) > 1
    assert "".join(wrapped).replace(" ", "") == snippet.replace(" ", "")  # nothing lost
    for before, after in itertools.pairwise(wrapped):
        assert not (re.search(r"[A-Za-z0-9]$", before) and re.match(r"[A-Za-z0-9]", after))
    for word in re.findall(r"[A-Za-z][\w./-]+", snippet):
        assert any(word in line for line in wrapped), word


def test_links_lists_external_links_decoded(home, monkeypatch) -> None:
    for width in (None, 80):
        out = on_terminal(home, monkeypatch, width, "links", "posts/two-phase.md").stdout
        assert "External (2)" in out
        assert "维基百科：二阶段提交  ↗ https://zh.wikipedia.org/wiki/二阶段提交  :7" in out
        assert "%E4" not in out
        assert "↗ https://dev.mysql.com/doc/refman/8.0/en/xa.html" in out


def test_piped_output_is_whole_records_one_a_line(home, monkeypatch) -> None:
    listed = on_terminal(home, monkeypatch, None, "list").stdout.splitlines()
    assert all(line.startswith("notes/") and line.endswith(".md") for line in listed)
    hits = on_terminal(home, monkeypatch, None, "search", "-n", "4", "roofline").stdout
    records = hits.rstrip("\n").split("\n\n")
    assert len(records) == 4 and all(len(r.splitlines()) in (3, 4) for r in records)
    assert max(cell_width(line) for line in hits.splitlines()) > 120  # never wrapped
    problems = on_terminal(home, monkeypatch, None, "check").stdout.splitlines()
    assert all(re.match(r"notes/\S.*:\d+: [a-z-]+: ", line) for line in problems), problems
