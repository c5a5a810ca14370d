"""kb show, list, recent, tags, stats, info, edit, completion and help, through click's
CliRunner, plus the few runs that need a real process (a pipe through xargs -0, the
shell's completion protocol, what each command imports)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kb.cli import cli
from kb.cli.notes import SORT_CHOICES
from kb.knowledge_base import KnowledgeBase
from kb.notes.listing import SORT_KEYS, format_note
from tests.conftest import run_cli as run

NOTES = {
    "eng/redis.md": (
        "---\ntitle: Redis 学习笔记\ndate: 2023-11-05\ntags: [redis, cache]\n"
        "aliases: [Redis 数据结构]\n---\n\n# Redis 学习笔记\n\n## 跳表\n\nZSET 用跳表。\n"
    ),
    "eng/limiter.md": (
        "---\ntitle: 全局限流\ndate: 2024-03-01\ntags: [redis, ratelimit]\nseries: [platform]\n"
        "---\n\n用 [Redis](redis.md) 的 ZSET 做时间窗口。\n"
    ),
    "cs/gpu.md": (
        "---\ntitle: GPU 显存估算\ndate: 2024-05-02\ntags: [gpu/memory]\nseries: [platform]\n"
        "---\n\n见 [[limiter]]。显存 = 参数 × 字节。\n"
    ),
    "cs/lone note.md": "---\ntitle: Lone\ndraft: true\ntags: [gpu]\n---\n\nnothing links here\n",
}


@pytest.fixture
def kb(make_kb) -> KnowledgeBase:
    kb = make_kb(NOTES)
    kb.ingest()
    return kb


def lines(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    return result.stdout.splitlines()


# -- kb show ---------------------------------------------------------------------------


def test_show_prints_the_markdown_as_written_when_piped(kb) -> None:
    result = run(kb, "show", "Redis 学习笔记")
    assert result.stdout == (kb.notes_root / "eng/redis.md").read_text(encoding="utf-8")


def test_show_json_has_the_note_fields(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.home)
    data = json.loads(run(kb, "show", "--json", "redis 数据结构").stdout)
    assert data["path"] == "eng/redis.md"
    assert data["file"] == "notes/eng/redis.md"  # from the current folder
    assert data["title"] == "Redis 学习笔记"
    assert data["tags"] == ["cache", "redis"]
    assert data["aliases"] == ["Redis 数据结构"]
    assert [h["text"] for h in data["headings"]] == ["Redis 学习笔记", "跳表"]
    assert "ZSET 用跳表" in data["text"]


def test_show_names_a_note_by_pinyin_and_a_typo(kb) -> None:
    assert "显存" in run(kb, "show", "gpuxc").stdout  # GPU 显存估算: g-p-u-x-c
    assert "ZSET 用跳表" in run(kb, "show", "redis xuexi biji").stdout


def test_show_of_several_notes_lists_them_and_exits_2(make_kb) -> None:
    kb = make_kb({"a/overview.md": "# A overview\n", "b/overview.md": "# B overview\n"})
    kb.ingest()
    result = run(kb, "show", "overview")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "kb: 'overview' names 2 notes: a/overview.md (A overview); b/overview.md (B overview);"
        " give its path to choose one\n"
    )


def test_show_of_no_note_names_what_comes_close(kb) -> None:
    result = run(kb, "show", "limitter")
    assert result.exit_code == 0  # a close misspelling of a file name is a match
    result = run(kb, "show", "qqqq")
    assert result.exit_code == 2
    assert "no note matches 'qqqq'" in result.stderr


def test_show_never_prints_terminal_controls(make_kb) -> None:
    kb = make_kb({"evil.md": "# Evil\n\nbell \x07 and \x1b]52;c;Zm9v\x07 here\n"})
    kb.ingest()
    out = run(kb, "show", "evil").stdout
    assert "\x1b" not in out and "\x07" not in out


# -- kb list ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), ["cs/gpu.md", "cs/lone note.md", "eng/limiter.md", "eng/redis.md"]),
        (("--tag", "redis"), ["eng/limiter.md", "eng/redis.md"]),
        (("--tag", "gpu"), ["cs/gpu.md", "cs/lone note.md"]),  # gpu/memory is below gpu
        (("--tag", "redis", "--tag", "cache"), ["eng/redis.md"]),  # every tag given
        (("--series", "PLATFORM"), ["cs/gpu.md", "eng/limiter.md"]),
        (("--path", "eng/"), ["eng/limiter.md", "eng/redis.md"]),
        (("--since", "2024"), ["cs/gpu.md", "eng/limiter.md"]),
        (("--until", "2024-03"), ["eng/limiter.md", "eng/redis.md"]),
        (("--since", "2024-04", "--until", "2024-05-02"), ["cs/gpu.md"]),
        (("--draft",), ["cs/lone note.md"]),
        (("--no-draft", "--tag", "gpu"), ["cs/gpu.md"]),
        (("--orphan",), ["cs/lone note.md"]),
        (("--linked-from", "GPU 显存估算"), ["eng/limiter.md"]),
        (("--linking-to", "eng/redis.md"), ["eng/limiter.md"]),
        (("--sort", "date"), ["cs/gpu.md", "eng/limiter.md", "eng/redis.md", "cs/lone note.md"]),
        (
            ("--sort", "date", "--reverse"),
            ["cs/lone note.md", "eng/redis.md", "eng/limiter.md", "cs/gpu.md"],
        ),
        (("--sort", "title", "-n", "2"), ["cs/gpu.md", "cs/lone note.md"]),
        (("跳表",), ["eng/redis.md"]),  # a query
        (("tag:redis", "-跳表"), ["eng/limiter.md"]),
    ],
)
def test_list_filters_and_sorts(kb, args: tuple[str, ...], expected: list[str]) -> None:
    result = run(kb, "list", "--format", "{path}", *args)
    assert lines(result) == expected


@pytest.mark.parametrize("sort", ["path", "date", "modified", "words"])
def test_a_limited_list_is_the_start_of_the_whole_list(make_kb, sort: str) -> None:
    # -n lets the store sort and stop; it must give what sorting every note gives.
    kb = make_kb(
        {
            f"{folder}/{name}.md": f"---\ndate: {date}\n---\n\n{'word ' * words}\n"
            for folder, name, date, words in [
                ("a", "one", "2024-01-01", 3),
                ("b", "two", "2024-01-01", 3),
                ("a", "three", "null", 5),
                ("c", "four", "2023-05-05", 1),
                ("c", "five", "null", 3),
            ]
        }
    )
    kb.ingest()
    whole = lines(run(kb, "list", "--format", "{path}", "--sort", sort))
    assert len(whole) == 5
    for count in range(1, 6):
        start = lines(run(kb, "list", "--format", "{path}", "--sort", sort, "-n", str(count)))
        assert start == whole[:count]


def test_list_with_a_query_keeps_the_search_order(kb) -> None:
    ranked = [hit.path for hit in kb.search("redis").hits]
    assert len(ranked) == 2
    assert lines(run(kb, "list", "--format", "{path}", "redis")) == ranked
    assert lines(run(kb, "list", "--format", "{path}", "--sort", "path", "redis")) == sorted(ranked)


def test_list_piped_prints_files_from_the_current_folder(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.notes_root / "eng")
    assert lines(run(kb, "list", "--tag", "ratelimit")) == ["limiter.md"]
    monkeypatch.chdir(kb.home)
    assert lines(run(kb, "list", "--tag", "ratelimit")) == ["notes/eng/limiter.md"]


def test_list_json_jsonl_and_print0(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.home)
    data = json.loads(run(kb, "list", "--json", "--tag", "ratelimit").stdout)
    assert [(n["path"], n["file"], n["title"], n["date"]) for n in data] == [
        ("eng/limiter.md", "notes/eng/limiter.md", "全局限流", "2024-03-01")
    ]
    assert data[0]["tags"] == ["ratelimit", "redis"] and data[0]["series"] == ["platform"]
    assert "全局限流" in run(kb, "list", "--json").stdout  # UTF-8, no \u escapes
    rows = [json.loads(line) for line in lines(run(kb, "list", "--jsonl", "--tag", "redis"))]
    assert [row["path"] for row in rows] == ["eng/limiter.md", "eng/redis.md"]
    result = run(kb, "list", "-0", "--tag", "gpu")
    assert result.stdout_bytes == b"notes/cs/gpu.md\0notes/cs/lone note.md\0"


def test_search_json_has_the_file_from_the_current_folder(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.notes_root)
    hits = json.loads(run(kb, "search", "--json", "跳表").stdout)
    assert [(hit["path"], hit["file"]) for hit in hits] == [("eng/redis.md", "eng/redis.md")]
    monkeypatch.chdir(kb.home)
    hits = json.loads(run(kb, "search", "--json", "跳表").stdout)
    assert [(hit["path"], hit["file"]) for hit in hits] == [("eng/redis.md", "notes/eng/redis.md")]


def test_list_format_template(kb) -> None:
    result = run(kb, "list", "--tag", "redis", "--format", "{date}\t{title} [{tags}]")
    assert (
        lines(result)
        == ["2024-03-01\t全局限流 [ratelimit redis]", "2023-11-05\tRedis 学习笔记 [cache redis]"][
            ::-1
        ][::-1]
        if False
        else lines(result)
    )
    assert lines(result) == [
        "2024-03-01\t全局限流 [ratelimit redis]",
        "2023-11-05\tRedis 学习笔记 [cache redis]",
    ]


def test_list_usage_errors_are_one_line_exit_2(kb) -> None:
    for args, message in (
        (("--format", "{nope}"), "--format has no field 'nope'"),
        (("--since", "March"), "--since takes a date such as 2024"),
        (("--json", "-0"), "choose one of --format, --json, --jsonl and --print0"),
        (("--linking-to", "qqqq"), "no note matches 'qqqq'"),
    ):
        result = run(kb, "list", *args)
        assert result.exit_code == 2, args
        assert message in result.stderr


def test_list_color_is_asked_for_or_refused(kb) -> None:
    colored = run(kb, "--color", "always", "list", "-n", "1")
    assert "\x1b[" in colored.stdout and "cs/gpu.md" in colored.stdout
    plain = run(kb, "--color", "never", "list", "-n", "1")
    assert plain.stdout == "notes/cs/gpu.md\n" or "\x1b" not in plain.stdout


def test_sort_choices_are_the_listing_sort_keys() -> None:
    assert tuple(SORT_CHOICES) == SORT_KEYS


def test_format_note_joins_lists_and_leaves_no_none() -> None:
    fields = {"title": "T", "date": None, "tags": ["a", "b"]}
    assert format_note("{date}|{title}|{tags}", fields) == "|T|a b"


# -- kb recent, tags, stats, info ------------------------------------------------------


def test_recent_lists_the_files_changed_last(kb, monkeypatch) -> None:
    monkeypatch.chdir(kb.home)
    target = kb.notes_root / "eng/redis.md"
    os.utime(target, (target.stat().st_atime, target.stat().st_mtime + 100))
    kb.ingest()
    assert lines(run(kb, "recent", "-n", "1")) == ["notes/eng/redis.md"]


def test_tags_counts_tree_and_json(kb) -> None:
    assert lines(run(kb, "tags")) == [
        "2  redis",
        "1  cache",
        "1  gpu",
        "1  gpu/memory",
        "1  ratelimit",
    ]
    assert lines(run(kb, "tags", "--sort", "name"))[:2] == ["1  cache", "1  gpu"]
    assert lines(run(kb, "tags", "--tree")) == [
        "gpu  2",
        "  memory  1",
        "redis  2",
        "cache  1",
        "ratelimit  1",
    ]
    data = json.loads(run(kb, "tags", "--json").stdout)
    assert data[0] == {"tag": "redis", "count": 2}


def test_stats_from_stored_counts(kb) -> None:
    data = json.loads(run(kb, "stats", "--json").stdout)
    assert (data["notes"], data["tags"], data["series"]) == (4, 5, 1)
    assert data["links"] == {
        "resolved": 2,
        "broken": 0,
        "external": 0,
        "attachments": 0,
        "missing_files": 0,
    }
    assert data["by_year"] == {"2023": 1, "2024": 2, "undated": 1}
    assert data["engine"] == "fts5" and data["store_bytes"] > 0 and data["last_ingest"]
    text = run(kb, "stats").stdout
    assert "notes:        4" in text
    assert "links:        2 resolved, 0 broken, 0 external, 0 attachments, 0 missing files" in text


def test_stats_json_and_text_agree_on_an_empty_knowledge_base(make_kb) -> None:
    kb = make_kb({})
    kb.ingest()
    data = json.loads(run(kb, "stats", "--json").stdout)
    assert data["links"] == dict.fromkeys(
        ["resolved", "broken", "external", "attachments", "missing_files"], 0
    )
    text = run(kb, "stats").stdout
    assert "links:        0 resolved, 0 broken, 0 external, 0 attachments, 0 missing files" in text


def test_info_says_which_knowledge_base_and_why(kb, monkeypatch) -> None:
    result = run(kb, "info")
    assert f"knowledge base: {kb.home} (found by --kb)" in result.stdout
    assert f"notes root:     {kb.notes_root}" in result.stdout
    monkeypatch.chdir(kb.notes_root / "eng")
    data = json.loads(CliRunner().invoke(cli, ["info", "--json"]).stdout)
    assert data["found_by"] == "the nearest folder upward with kb.yaml"
    assert data["engine"] == "fts5" and data["store_exists"] is True
    monkeypatch.setenv("KB_HOME", str(kb.home))
    data = json.loads(CliRunner().invoke(cli, ["info", "--json"]).stdout)
    assert data["found_by"] == "the KB_HOME variable"


# -- kb edit -----------------------------------------------------------------------------


def test_edit_opens_the_note_then_ingests_it(kb, tmp_path: Path, monkeypatch) -> None:
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\nopen(sys.argv[1], 'a', encoding='utf-8').write('\\n新的一行 flamingo\\n')\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.chdir(kb.home)
    result = run(kb, "edit", "全局限流")
    assert result.exit_code == 0, result.output
    assert result.stdout == "notes/eng/limiter.md: updated\n"
    assert [hit.path for hit in kb.search("flamingo").hits] == ["eng/limiter.md"]


def test_edit_when_the_editor_cannot_start(kb, monkeypatch) -> None:
    monkeypatch.setenv("EDITOR", "/no/such/editor")
    monkeypatch.delenv("VISUAL", raising=False)
    result = run(kb, "edit", "eng/redis.md")
    assert result.exit_code == 1
    assert "cannot start the editor /no/such/editor" in result.stderr


# -- completion and help -----------------------------------------------------------------


def _complete(kb: KnowledgeBase, words: str) -> list[str]:
    """What bash would offer for the last word of ``words``, through click's protocol."""
    env = {
        **os.environ,
        "_KB_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    out = subprocess.run(
        [sys.executable, "-m", "kb"], env=env, capture_output=True, text=True, check=True
    ).stdout
    return [line.split(",", 1)[1] for line in out.splitlines()]


def test_completion_prints_a_script_per_shell(kb) -> None:
    for shell, marker in (
        ("bash", "complete -o nosort -F"),
        ("zsh", "#compdef kb"),
        ("fish", "complete --no-files --command kb"),
    ):
        result = run(kb, "completion", shell)
        assert marker in result.stdout and "_KB_COMPLETE" in result.stdout


@pytest.mark.slow
def test_completion_of_commands_notes_tags_and_series(kb) -> None:
    home = str(kb.home)
    assert {"show", "list", "tags"} <= set(_complete(kb, f"kb --kb {home} "))
    assert _complete(kb, f"kb --kb {home} show eng/re") == ["eng/redis.md"]
    assert _complete(kb, f"kb --kb {home} show 全") == ["全局限流"]
    assert _complete(kb, f"kb --kb {home} list --tag ra") == ["ratelimit"]
    assert _complete(kb, f"kb --kb {home} list tag:gp") == ["tag:gpu", "tag:gpu/memory"]
    assert _complete(kb, f"kb --kb {home} list --series pl") == ["platform"]
    assert "--linking-to" in _complete(kb, f"kb --kb {home} list --lin")


def test_help_topics_print_the_docs_pages(kb) -> None:
    assert run(kb, "help", "query").stdout.startswith("# The query language\n")
    assert "tag:cs336" in run(kb, "help", "query").stdout
    assert run(kb, "help", "config").stdout.startswith("# Configuration: `kb.yaml`")
    assert run(kb, "help", "links").stdout.startswith("# Links, mentions")
    assert "commands " in run(kb, "help").stdout


def test_search_help_ends_with_the_query_language(kb) -> None:
    text = run(kb, "search", "--help").stdout
    summary = text[text.index("The query language") :]
    for example in ("roofline OR 带宽", "redis -cluster", "roof*", "tag:cs336", "date:2024-03"):
        assert example in summary
    assert len(summary.splitlines()) <= 20  # one screen


# -- real processes ------------------------------------------------------------------------


def kb_process(
    kb: KnowledgeBase, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kb", "--kb", str(kb.home), *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )


@pytest.mark.slow
def test_show_in_a_process_prints_the_file(kb) -> None:
    done = kb_process(kb, "show", "限流")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (kb.notes_root / "eng/limiter.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_list_print0_through_xargs_0(kb) -> None:
    list_cmd = [sys.executable, "-m", "kb", "--kb", str(kb.home), "list", "-0", "--tag", "gpu"]
    listing = subprocess.run(list_cmd, capture_output=True, check=True, cwd=kb.home)
    counted = subprocess.run(
        ["xargs", "-0", "wc", "-l"],
        input=listing.stdout,
        capture_output=True,
        check=True,
        cwd=kb.home,
    ).stdout.decode()
    assert "notes/cs/lone note.md" in counted and "notes/cs/gpu.md" in counted


@pytest.mark.slow
@pytest.mark.parametrize("command", [["list", "-n", "20"], ["tags"], ["show", "eng/redis.md"]])
def test_listing_commands_import_no_ui_no_writer_no_segmenter(kb, command: list[str]) -> None:
    script = (
        "import sys\nfrom kb.cli import main\n"
        f"sys.argv = ['kb', '--kb', {str(kb.home)!r}, *{command!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = {'textual', 'sqlite_utils', 'rjieba', 'pypinyin', 'rapidfuzz'}\n"
        "print('LOADED', sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().endswith("LOADED []")
