"""kb check reports what is wrong, and nothing else, and helps fix it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.links.check import shown_target
from kb.parse.markdown import parse_markdown

NOTES = {
    "redis/redis-persistence.md": "# Redis 持久化机制\n\n## RDB 快照\n\n正文\n",
    "gpu/roofline.md": "---\ntitle: Roofline 模型\n---\n正文\n",
    "drawings/arch.drawio": "<mxfile/>",
    "drawings/capture.pcapng": "pcap",
    "drawings/board.excalidraw": "{}",
}


@pytest.fixture
def checked(make_kb):
    def run(text: str, config: str = "roots: [notes]\n") -> list:
        kb = make_kb({**NOTES, "src.md": text}, config)
        kb.ingest()
        return [p for p in kb.links.check() if p.path == "src.md"]

    return run


def test_a_broken_note_link_names_the_closest_notes(checked) -> None:
    problems = checked("[[redis-persistance]]\n\n[x](redis/redis-persistance.md)\n")
    assert [p.kind for p in problems] == ["broken-link", "broken-link"]
    for problem in problems:
        assert problem.message.endswith("did you mean redis/redis-persistence.md?")


def test_a_link_with_nothing_close_suggests_nothing(checked) -> None:
    (problem,) = checked("[[量子纠缠的哲学]]\n")
    assert problem.message == "量子纠缠的哲学 (wikilink) points to no note"


def test_any_existing_file_is_a_valid_target(checked) -> None:
    text = (
        "[a](drawings/arch.drawio) [b](drawings/capture.pcapng) "
        "[c](./drawings/board.excalidraw) [folder](drawings/)\n"
    )
    assert checked(text) == []


def test_a_missing_file_is_its_own_kind(checked) -> None:
    (problem,) = checked("![figure](img/missing.png)\n\n[data](data/trace.pcapng)\n")[:1]
    assert (problem.line, problem.kind) == (1, "missing-file")
    assert problem.message == "img/missing.png: no such file"
    kinds = [p.kind for p in checked("[data](data/trace.pcapng)\n")]
    assert kinds == ["missing-file"]


@pytest.mark.parametrize(
    "text",
    [
        "if [[ -f x ]]; then echo; fi",
        'while [[ "$a" == "b" ]]; do',
        "[[ ! -d build ]] && mkdir build",
        "[[ $x -eq 1 ]]",
        "empty [[ ]] brackets",
        "[[asc]](https://example.org/x.asc) [[sha512]](https://example.org/x.sha512)",
        "as shown in [[1]]\n\n[1]: https://example.org/paper",
    ],
)
def test_brackets_that_name_no_note_are_not_wikilinks(text: str) -> None:
    assert [link for link in parse_markdown(text).links if link.kind == "wikilink"] == []


def test_brackets_that_could_name_a_note_are_wikilinks() -> None:
    links = parse_markdown("[[Roofline 模型]] [[Node.js|node]] [[2024]]").links
    assert [(link.target, link.kind) for link in links] == [
        ("Roofline 模型", "wikilink"),
        ("Node.js", "wikilink"),
        ("2024", "wikilink"),
    ]


def test_anchors_are_shown_decoded_and_never_empty(checked) -> None:
    problems = checked(
        "[a](redis/redis-persistence.md#%E4%B8%A5%E6%A0%BC)\n\n"
        "[b](https://blog.example.com/redis/redis-persistence/#aof-重写)\n\n"
        "[c](redis/redis-persistence.md#rdb-快照)\n\n"
        "[d](redis/redis-persistence.md#%20)\n",
        "roots: [notes]\nsite_url: https://blog.example.com\n",
    )
    messages = [p.message for p in problems]
    assert messages == [
        "redis/redis-persistence.md#严格: redis/redis-persistence.md has no heading #严格",
        "https://blog.example.com/redis/redis-persistence/#aof-重写: "
        "redis/redis-persistence.md has no heading #aof-重写",
    ]


def test_missing_heading_suggests_the_close_one(checked) -> None:
    (problem,) = checked("[a](redis/redis-persistence.md#rdb-快找)\n")
    assert problem.message.endswith("did you mean #rdb-快照?")


def test_cli_prints_paths_relative_to_the_current_folder(
    make_kb, tmp_path: Path, monkeypatch
) -> None:
    make_kb({**NOTES, "sub/src.md": "# s\n\n[[nowhere]]\n"}).ingest()
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "check"])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "../notes/sub/src.md:3: broken-link: nowhere (wikilink) points to no note"
    ]
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "check", "--json"])
    assert json.loads(result.stdout) == [
        {
            "path": "sub/src.md",
            "line": 3,
            "kind": "broken-link",
            "message": "nowhere (wikilink) points to no note",
        }
    ]


def test_html_anchors_are_valid_link_targets(checked) -> None:
    text = (
        '<a name="info-compliance"></a>\n\n## Info 对象\n\n'
        '<span id="paths"></span>\n\n'
        "[info](#info-compliance) [paths](#paths) [missing](#nowhere)\n"
    )
    assert [p.message for p in checked(text)] == ["#nowhere: src.md has no heading #nowhere"]


@pytest.mark.parametrize(
    ("target", "anchor", "kind", "shown"),
    [
        (
            "../engineering/%E6%98%BE%E5%AD%98%20%E4%BC%B0%E7%AE%97.md",
            "",
            "markdown",
            "../engineering/显存 估算.md",
        ),
        ("a.md", "%E4%B8%A5%E6%A0%BC", "markdown", "a.md#严格"),
        ("a.md", "%20", "markdown", "a.md"),
        ("https://x.org/p/#%E4%B8%A5", "", "url", "https://x.org/p/#严"),
        ("https://x.org/p/#", "", "url", "https://x.org/p/"),
    ],
)
def test_targets_are_shown_decoded(target: str, anchor: str, kind: str, shown: str) -> None:
    assert shown_target(target, anchor, kind) == shown
