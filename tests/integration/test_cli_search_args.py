"""``kb search`` takes what the README shows: -words as query text, options anywhere,
-0/--print0 for xargs -0, --all, a note on stderr when the list is cut, UTF-8 JSON."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kb.cli import cli
from kb.knowledge_base import KnowledgeBase
from tests.conftest import SAMPLE_NOTES

NOTES = {
    "redis.md": "---\ntitle: Redis 学习笔记\ntags: [x]\n---\n\nredis 数据结构\n",
    "cluster.md": "---\ntitle: Redis Cluster\ntags: [x]\n---\n\nredis cluster 分片\n",
    "draft.md": "---\ntitle: 草稿\ntags: [x]\ndraft: true\n---\n\nredis 草稿\n",
    "nginx.md": "---\ntitle: Nginx\n---\n\nredis nginx\n",
}


@pytest.fixture
def kb(make_kb) -> KnowledgeBase:
    made: KnowledgeBase = make_kb(NOTES)
    made.ingest()
    return made


def run(kb: KnowledgeBase, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--kb", str(kb.home), "search", *args])


def paths(result: Result) -> list[str]:
    return sorted(Path(line).name for line in result.stdout.splitlines())


def test_a_dash_word_is_query_text(kb: KnowledgeBase) -> None:
    result = run(kb, "--paths", "redis", "-cluster")
    assert result.exit_code == 0, result.output
    assert paths(result) == ["draft.md", "nginx.md", "redis.md"]


def test_a_dash_word_after_a_filter(kb: KnowledgeBase) -> None:
    result = run(kb, "tag:x", "-draft:true", "--paths")
    assert result.exit_code == 0, result.output
    assert paths(result) == ["cluster.md", "redis.md"]


def test_options_may_come_first_or_last(kb: KnowledgeBase) -> None:
    first = run(kb, "-n", "5", "--paths", "redis", "-cluster")
    last = run(kb, "redis", "-cluster", "--paths", "-n", "5")
    joined = run(kb, "-n5", "--paths", "redis", "-cluster")
    assert first.exit_code == last.exit_code == joined.exit_code == 0
    assert paths(first) == paths(last) == paths(joined) == ["draft.md", "nginx.md", "redis.md"]


def test_a_word_that_looks_like_a_short_option_with_a_value(kb: KnowledgeBase) -> None:
    # -nginx is not "-n ginx": the value of -n is a number.
    result = run(kb, "--paths", "redis", "-nginx")
    assert result.exit_code == 0, result.output
    assert paths(result) == ["cluster.md", "draft.md", "redis.md"]


def test_double_dash_still_ends_the_options(kb: KnowledgeBase) -> None:
    result = run(kb, "--paths", "--", "redis", "-cluster")
    assert result.exit_code == 0, result.output
    assert paths(result) == ["draft.md", "nginx.md", "redis.md"]
    # After --, even a known option is query text (a lone "--json" word matches nothing).
    assert run(kb, "--", "--json").exit_code == 1


def test_a_mistyped_long_option_is_still_an_error(kb: KnowledgeBase) -> None:
    result = run(kb, "--jsno", "redis")
    assert result.exit_code == 2
    assert "--json" in result.stderr


def test_print0_ends_each_path_with_nul(kb: KnowledgeBase) -> None:
    result = run(kb, "-0", "redis", "-cluster")
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes.endswith(b"\0")
    names = sorted(Path(p).name for p in result.stdout_bytes.decode().split("\0") if p)
    assert names == ["draft.md", "nginx.md", "redis.md"]
    assert b"\n" not in result.stdout_bytes
    assert run(kb, "--print0", "--json", "redis").exit_code == 2


def test_a_cut_list_says_so_on_stderr_and_all_lifts_the_limit(kb: KnowledgeBase) -> None:
    cut = run(kb, "--paths", "-n", "2", "redis")
    assert len(cut.stdout.splitlines()) == 2
    assert "kb: showing the first 2 notes; more match: use --all" in cut.stderr
    whole = run(kb, "--json", "--all", "-n", "2", "redis")
    assert len(json.loads(whole.stdout)) == 4
    assert "showing" not in whole.stderr
    exact = run(kb, "--paths", "-n", "4", "redis")
    assert len(exact.stdout.splitlines()) == 4
    assert "showing" not in exact.stderr


def test_json_is_utf8_with_controls_still_escaped(make_kb) -> None:
    kb = make_kb({"显存.md": "---\ntitle: 显存 \u202e估算\n---\n\n显存带宽\n"})
    kb.ingest()
    result = run(kb, "--json", "显存")
    assert result.exit_code == 0, result.output
    assert "显存" in result.stdout
    assert "\\u663e" not in result.stdout
    assert "\u202e" not in result.stdout and "\\u202e" in result.stdout
    assert json.loads(result.stdout)[0]["title"] == "显存 \u202e估算"
    for args in (
        ["links", "显存.md", "--json"],
        ["check", "--json"],
        ["graph", "--format", "json"],
    ):
        out = CliRunner().invoke(cli, ["--kb", str(kb.home), *args]).stdout
        assert "\\u663e" not in out and "\u202e" not in out, args


@pytest.mark.skipif(shutil.which("xargs") is None, reason="needs xargs")
def test_print0_through_xargs_0_on_the_bundled_notes(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    (tmp_path / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    kb_cmd = [sys.executable, "-m", "kb", "--kb", str(tmp_path)]
    subprocess.run([*kb_cmd, "ingest"], check=True, capture_output=True)
    search = subprocess.Popen(
        [*kb_cmd, "search", "--all", "-0", "显存"], cwd=tmp_path, stdout=subprocess.PIPE
    )
    counted = subprocess.run(
        ["xargs", "-0", "wc", "-l"],
        cwd=tmp_path,
        stdin=search.stdout,
        capture_output=True,
        text=True,
        check=True,
    )
    assert search.stdout is not None
    search.stdout.close()
    assert search.wait() == 0
    assert "notes/engineering/显存 估算.md" in counted.stdout
    assert "No such file" not in counted.stderr
