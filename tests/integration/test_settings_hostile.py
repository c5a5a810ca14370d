"""Hostile or mistaken settings cost one line, never a hang or a blow-up (issue 21, 10-11).

kb.yaml is found by searching upward, so a cloned repository's kb.yaml is read by every
command run inside it: nothing it says may make kb hang, eat memory or do a thing twice.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kb.config import MAX_MENTION_TERMS, MAX_SYNONYM_GROUPS, load_config
from kb.errors import KbError
from kb.knowledge_base import KnowledgeBase
from kb.query.glossary import MAX_PARTNERS, load_glossary
from kb.query.syntax import MAX_TERMS, parse_query
from tests.conftest import run_cli, write_notes

if TYPE_CHECKING:
    from click.testing import Result

MakeKb = Callable[..., KnowledgeBase]


def _kb_in_a_child(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kb --kb HOME ARGS`` in a child process held to 1 GB and 60 s, so that settings
    that hang kb or blow it up fail the test instead of the test run."""

    def limit_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1024**3, 1024**3))

    try:
        return subprocess.run(
            [sys.executable, "-m", "kb", "--kb", str(home), *args],
            capture_output=True,
            text=True,
            timeout=60,
            preexec_fn=limit_memory,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"kb {' '.join(args)} hung on these settings")


def _kb(home: Path | None, *args: str) -> Result:
    """``kb ARGS`` as typed in the current folder (``--kb HOME`` when given)."""
    from click.testing import CliRunner

    from kb.cli import cli

    return CliRunner().invoke(cli, [*(["--kb", str(home)] if home else []), *args])


def _paths(result: Result) -> list[str]:
    """The note paths of a ``--json`` list (kb list, kb search)."""
    assert result.exit_code == 0, result.output
    return sorted(item["path"] for item in json.loads(result.stdout))


def _one_line_error(stderr: str, *wanted: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    for text in wanted:
        assert text in lines[0]


def _notes(tmp_path: Path, config: str, notes: dict[str, str] | None = None) -> Path:
    (tmp_path / "kb.yaml").write_text(config, encoding="utf-8")
    write_notes(tmp_path / "notes", notes or {"a.md": "# A\n\nredis and kafka\n"})
    return tmp_path


# -- failure 10: YAML aliases, files that never end, giant lists ------------------------

# Three levels of nine: harmless here (729 strings), but each more level multiplies by nine;
# eight levels took 1.3 GB and ended in a MemoryError traceback after 52 s.
_ALIAS_BOMB = """\
a: &a ["x", "x", "x", "x", "x", "x", "x", "x", "x"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
exclude: [*b, *b, *b, *b, *b, *b, *b, *b, *b]
"""


def test_a_kb_yaml_with_yaml_aliases_is_refused_in_one_line(tmp_path: Path) -> None:
    home = _notes(tmp_path, _ALIAS_BOMB)
    result = _kb(home, "info")
    assert result.exit_code == 1
    _one_line_error(result.stderr, str(home / "kb.yaml"), "YAML aliases", "line 2")


def test_a_cloned_repository_kb_yaml_found_upward_is_refused_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _notes(tmp_path, _ALIAS_BOMB)
    (home / "notes" / "deep").mkdir()
    monkeypatch.chdir(home / "notes" / "deep")
    result = _kb(None, "list")
    assert result.exit_code == 1
    _one_line_error(result.stderr, "YAML aliases")


def test_anchors_without_aliases_and_plain_settings_still_load(tmp_path: Path) -> None:
    _notes(tmp_path, "roots: &r [notes]\nexclude: ['*.tmp', drafts]\nsite_url: 'a*b'\n")
    config = load_config(tmp_path)
    assert config.exclude == ("*.tmp", "drafts")
    assert config.site_url == "a*b"


@pytest.mark.slow
@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_a_synonyms_setting_naming_no_regular_file_is_one_line(tmp_path: Path, target: str) -> None:
    if target == "fifo":
        os.mkfifo(tmp_path / "words.fifo")
        target = str(tmp_path / "words.fifo")
    home = _notes(tmp_path, f"synonyms: {target}\n")
    result = _kb_in_a_child(home, "info")
    assert result.returncode == 1
    _one_line_error(result.stderr, target, "synonyms file", "not a regular file")


def test_a_synonyms_file_past_the_size_cap_is_one_line(tmp_path: Path) -> None:
    with (tmp_path / "huge.tsv").open("wb") as file:
        file.truncate(11 * 1024**2)  # sparse: 11 MB of zeros cost no disk
    _notes(tmp_path, "synonyms: huge.tsv\n")
    with pytest.raises(KbError, match=r"huge\.tsv: cannot read the synonyms file: it is larger"):
        load_config(tmp_path)


@pytest.mark.parametrize("kind", ["folder", "loop"])
def test_a_kb_yaml_that_is_a_folder_or_a_symlink_loop_is_one_line(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_notes(tmp_path / "notes", {"a.md": "# A\n"})
    if kind == "folder":
        (tmp_path / "kb.yaml").mkdir()
    else:
        (tmp_path / "kb.yaml").symlink_to("kb.yaml")
    monkeypatch.chdir(tmp_path / "notes")  # found by the upward search, not skipped
    result = _kb(None, "info")
    assert result.exit_code == 1
    reason = "it is a folder" if kind == "folder" else "a symlink loop"
    _one_line_error(result.stderr, str(tmp_path / "kb.yaml"), reason)


def _groups_yaml(groups: list[list[str]]) -> str:
    return "synonyms:\n" + "".join(f"  - [{', '.join(g)}]\n" for g in groups)


def test_a_synonym_group_of_100000_partners_is_capped_with_a_warning(tmp_path: Path) -> None:
    partners = "\t".join(f"w{n}" for n in range(100_000))
    (tmp_path / "big.tsv").write_text(f"推理\t{partners}\n", encoding="utf-8")
    _notes(
        tmp_path, "synonyms: big.tsv\n", {"a.md": "# A\n\n推理 in prose\n", "b.md": "# B\n\nw3\n"}
    )
    kb = KnowledgeBase.open(tmp_path)
    assert len(kb.config.synonyms["推理"]) == MAX_PARTNERS
    assert len(kb.glossary().partners("推理")) == MAX_PARTNERS
    run_cli(kb, "ingest")
    result = run_cli(kb, "search", "推理", "--json")
    assert "synonyms: '推理' has more than 16 partners" in result.stderr
    assert _paths(result) == ["a.md", "b.md"]  # w3 is among the first 16: the group works


def test_a_long_group_in_kb_yaml_is_capped_with_a_warning(tmp_path: Path) -> None:
    _notes(tmp_path, _groups_yaml([["k8s", *(f"w{n}" for n in range(40))]]))
    config = load_config(tmp_path)
    assert config.synonyms["k8s"] == tuple(f"w{n}" for n in range(MAX_PARTNERS))
    assert config.warnings == (
        "synonyms: 'k8s' has more than 16 partners; a query uses only the first 16",
    )


def test_a_term_in_thousands_of_groups_gets_at_most_the_cap_of_partners(tmp_path: Path) -> None:
    groups = [[f"w{n}", "hub"] for n in range(5_000)]
    _notes(tmp_path, _groups_yaml(groups))
    config = load_config(tmp_path)
    assert any("'hub'" in w and "partners" in w for w in config.warnings)
    assert len(load_glossary(config.synonyms).partners("hub")) == MAX_PARTNERS


class _NoVocabulary:
    def known(self, words: object) -> set[str]:
        return set()

    def same_stem(self, word: str) -> list[str]:
        return []

    def latin_of_length(self, low: int, high: int, first: str | None) -> list[str]:
        return []

    def completions(self, prefix: str, limit: int) -> list[str]:
        return []


def test_a_query_expands_by_the_glossary_no_further_than_the_query_cap() -> None:
    from kb.query.reading import read_query

    words = [f"词{chr(0x4E00 + n)}{chr(0x4F00 + n)}" for n in range(MAX_TERMS)]
    glossary = load_glossary(
        {w: [f"p{i}x{n}" for n in range(MAX_PARTNERS)] for i, w in enumerate(words)}
    )
    query = parse_query(" ".join(words))
    reading = read_query(query, _NoVocabulary(), lambda text: 100, glossary)
    assert len(reading.words) >= MAX_TERMS
    assert sum(len(w.partners) for w in reading.words) == MAX_TERMS  # not 32 x 16


def test_150000_synonym_groups_are_capped_with_a_warning(tmp_path: Path) -> None:
    lines = "".join(f"t{n}\tp{n}\n" for n in range(150_000))
    (tmp_path / "big.tsv").write_text(lines, encoding="utf-8")
    _notes(tmp_path, "synonyms: big.tsv\n")
    config = load_config(tmp_path)
    assert len(config.synonyms) == MAX_SYNONYM_GROUPS
    assert config.warnings == (
        f"synonyms: {tmp_path / 'big.tsv'} has 150,000 groups; only the first 10,000 are used",
    )


def test_200000_mention_terms_are_refused_in_one_line(tmp_path: Path) -> None:
    terms = "".join(f"  term{n}: b.md\n" for n in range(200_000))
    home = _notes(tmp_path, "mention_terms:\n" + terms)
    result = _kb(home, "links", "a.md")
    assert result.exit_code == 1
    _one_line_error(result.stderr, "kb.yaml: cannot read settings: it is larger than 256 KB")


def test_thousands_of_mention_terms_are_capped_with_a_warning(make_kb: MakeKb) -> None:
    crowded = "".join(f"  term{n}: b.md\n" for n in range(100))
    others = "".join(f"  other{n}: c{n}.md\n" for n in range(5_000))
    kb = make_kb(
        {"a.md": "# A\n\nterm7 is named here\n", "b.md": "# B\n"},
        config="roots: [notes]\nmention_terms:\n" + crowded + others,
    )
    assert len(kb.config.mention_terms) == MAX_MENTION_TERMS - 100 + MAX_TERMS
    run_cli(kb, "ingest")
    result = run_cli(kb, "links", "b.md", "--json")
    assert result.exit_code == 0
    assert f"mention_terms: 5,100 terms; only the first {MAX_MENTION_TERMS:,}" in result.stderr
    assert f"more than {MAX_TERMS} terms name 'b.md'" in result.stderr
    assert [m["path"] for m in json.loads(result.stdout)["mentions"]] == ["a.md"]


# -- failure 11: roots, kb.yaml itself, numbers -----------------------------------------


def test_duplicate_roots_index_every_note_once_with_a_warning(make_kb: MakeKb) -> None:
    kb = make_kb({"a.md": "# Alpha\n\nunique words\n"}, config="roots: [notes, ./notes/]\n")
    assert len(kb.config.roots) == 1
    run_cli(kb, "ingest")
    listed = run_cli(kb, "list", "--json")
    assert _paths(listed) == ["a.md"]
    assert "roots: './notes/' is the same folder as 'notes'" in listed.stderr
    assert _paths(run_cli(kb, "search", "unique", "--json")) == ["a.md"]


def test_a_nested_root_owns_its_notes_and_each_note_is_indexed_once(make_kb: MakeKb) -> None:
    kb = make_kb(
        {"a.md": "# Outer\n\nshared word\n", "sub/b.md": "# Inner\n\nshared word\n"},
        config="roots: [notes, notes/sub]\n",
    )
    result = run_cli(kb, "ingest")
    assert result.exit_code == 0, result.output
    listed = run_cli(kb, "list", "--json")
    assert _paths(listed) == ["notes/a.md", "sub/b.md"]
    assert "roots: 'notes/sub' is inside 'notes'; its notes belong to 'notes/sub'" in listed.stderr
    assert _paths(run_cli(kb, "search", "shared", "--json")) == ["notes/a.md", "sub/b.md"]
    # A link in the outer root to the inner root's folder does not name its notes again.
    (kb.home / "notes" / "also").symlink_to("sub")
    assert run_cli(kb, "ingest").exit_code == 0
    assert _paths(run_cli(kb, "list", "--json")) == ["notes/a.md", "sub/b.md"]
    # Ingesting the inner note by its path keeps it under the inner root.
    again = run_cli(kb, "ingest", str(kb.home / "notes" / "sub" / "b.md"))
    assert again.exit_code == 0, again.output
    assert _paths(run_cli(kb, "list", "--json")) == ["notes/a.md", "sub/b.md"]


def test_a_root_that_is_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "kb.yaml").write_text("roots: [loop]\n", encoding="utf-8")
    result = _kb(tmp_path, "ingest")
    assert result.exit_code == 1
    _one_line_error(result.stderr, "roots: 'loop'", "a symlink loop")


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("max_file_size: -1", "max_file_size: -1"),
        ("max_file_size: 0", "max_file_size: 0"),
        ("max_file_size: 10TB", "max_file_size: cannot read '10TB'"),  # no such unit
        ("max_file_size: 5000GB", "max_file_size: '5000GB'"),
        ("max_file_size: true", "max_file_size: cannot read True"),
        ("lock_wait_seconds: -5", "lock_wait_seconds: -5"),
        ("lock_wait_seconds: .nan", "lock_wait_seconds: nan"),
        ("lock_wait_seconds: 1000000", "lock_wait_seconds: 1000000"),
    ],
)
def test_a_negative_or_absurd_number_is_one_line_naming_it(
    tmp_path: Path, setting: str, named: str
) -> None:
    _notes(tmp_path, f"roots: [notes]\n{setting}\n")
    result = _kb(tmp_path, "ingest")
    assert result.exit_code == 1
    _one_line_error(result.stderr, named)
