"""The engine registry: one table names the engines, and everything that picks one asks it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import click
import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.engines.contract import EngineEntry
from kb.engines.registry import (
    DEFAULT_ENGINE,
    ENGINES,
    engine_advice,
    engine_entry,
    engine_names,
)
from kb.errors import KbError
from kb.knowledge_base import KnowledgeBase
from kb.words.streams import STREAMS, document_streams


def test_names_and_entries() -> None:
    assert engine_names() == ["fts5", "whoosh", "tantivy"]
    assert DEFAULT_ENGINE in ENGINES
    for name in engine_names():
        entry = engine_entry(name)
        assert isinstance(entry, EngineEntry)
        assert entry.name == name


def test_unknown_engine_is_one_line_naming_the_known_ones() -> None:
    with pytest.raises(KbError) as raised:
        engine_entry("lucene")
    assert str(raised.value) == "unknown search engine 'lucene' (known: fts5, whoosh, tantivy)"


def test_unknown_engine_in_settings(make_kb: Callable[..., KnowledgeBase]) -> None:
    kb = make_kb({"a.md": "# A\n"}, config="roots: [notes]\nengine: lucene\n")
    known = r"kb.yaml: engine: unknown search engine 'lucene' \(known: fts5, whoosh, tantivy\)"
    with pytest.raises(KbError, match=known):
        kb.ingest()


def test_cli_engine_choices_come_from_the_registry() -> None:
    ingest = cli.get_command(click.Context(cli), "ingest")  # commands load lazily
    assert ingest is not None
    option = next(p for p in ingest.params if p.name == "engine")
    assert isinstance(option.type, click.Choice)
    assert list(option.type.choices) == engine_names()
    result = CliRunner().invoke(cli, ["ingest", "--rebuild", "--engine", "lucene"])
    assert result.exit_code == 2
    assert "fts5" in result.output and "whoosh" in result.output


def test_searching_with_fts5_never_loads_the_whoosh_module() -> None:
    code = (
        "import sys\n"
        "from kb.engines.registry import engine_entry\n"
        "engine_entry('fts5')\n"
        "assert 'kb.engines.whoosh' not in sys.modules\n"
        "assert 'kb.engines.tantivy' not in sys.modules and 'tantivy' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_stream_of_the_layout_is_filled() -> None:
    from kb.words.documents import SearchDocument

    document = SearchDocument("FlashAttention", "gpu", "显存带宽", "body", "code")
    streams = document_streams(document)
    assert len(streams) == len(STREAMS)
    by_name = dict(zip(STREAMS, streams, strict=True))
    assert by_name["title"] == "flashattention"
    assert by_name["title_x"] == "flash attention"
    assert by_name["headings"] == "显存 存带 带宽"


@pytest.mark.parametrize(
    ("title", "body", "known", "expected"),
    [
        # Latin words and identifier parts; numbers are not words.
        (
            "",
            "FlatParameter use_orig_params 1024",
            (),
            {
                "flatparameter",
                "flat",
                "parameter",
                "use_orig_params",
                "use",
                "orig",
                "params",
            },
        ),
        # Chinese dictionary words come from the side streams, never the main bigrams.
        ("显存带宽", "", (), {"显存", "带宽"}),
        # Words written already are left out; the rest are still found.
        ("显存带宽 Roofline", "", ("显存", "roofline"), {"带宽"}),
        # A token longer than any word (a hash, a base64 run) is not one.
        ("", "a" * 41 + " ok", (), {"ok"}),
    ],
)
def test_vocabulary_words(title: str, body: str, known: tuple[str, ...], expected: set) -> None:
    from kb.words.documents import SearchDocument
    from kb.words.streams import vocabulary_words

    streams = document_streams(SearchDocument(title, "", "", body, ""))
    found = vocabulary_words(streams, frozenset(known))
    assert {word for word, _ in found} == expected
    assert all(script == ("cjk" if word[0] >= "\u3040" else "latin") for word, script in found)


@pytest.mark.parametrize(
    ("engine", "notes", "added", "installed", "says"),
    [
        ("fts5", 25_000, 25_000, True, "kb ingest --rebuild --engine tantivy"),
        ("fts5", 25_000, 25_000, False, "pip install '.[tantivy]' in kb's folder, then kb ingest"),
        ("fts5", 19_999, 19_999, True, ""),  # a smaller knowledge base: FTS5 is quick
        ("fts5", 25_000, 12, True, ""),  # an ordinary ingest stays quiet
        ("tantivy", 25_000, 25_000, True, ""),
        ("whoosh", 25_000, 25_000, True, ""),  # chosen on purpose: nothing compiled
    ],
)  # fmt: skip
def test_a_large_fts5_knowledge_base_is_told_of_tantivy_once_it_takes_in_many(
    engine: str, notes: int, added: int, installed: bool, says: str
) -> None:
    advice = engine_advice(engine, notes, added, lambda: installed)
    assert (says in advice) if says else advice == ""
    if says:
        assert advice.startswith(f"{notes:,} notes") and "\n" not in advice


def test_kb_ingest_says_it_on_stderr_and_json_stays_clean(
    make_kb: Callable[..., KnowledgeBase], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("kb.engines.registry.ADVISE_TANTIVY_AT", 3)
    monkeypatch.setattr("kb.engines.registry.ADVISE_AFTER_ADDING", 3)
    kb = make_kb({f"n{i}.md": f"# Note {i}\n\nbody {i}\n" for i in range(4)})
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest"])
    assert result.exit_code == 0
    assert "kb: 4 notes: the tantivy engine answers searches" in result.stderr
    assert "tantivy" not in result.stdout
    again = CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest"])  # nothing added
    assert "tantivy" not in again.stderr
    quiet = CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest", "--rebuild", "--json"])
    assert "tantivy" not in quiet.output


@pytest.mark.parametrize(
    ("config", "rebuild"),
    [
        ("roots: [notes]\nengine: fts5\n", ["--rebuild"]),  # kb.yaml names the engine
        ("roots: [notes]\n", ["--rebuild", "--engine", "fts5"]),  # chosen with --engine
    ],
)
def test_a_user_who_chose_fts5_is_not_told_of_tantivy(
    make_kb: Callable[..., KnowledgeBase],
    monkeypatch: pytest.MonkeyPatch,
    config: str,
    rebuild: list[str],
) -> None:
    monkeypatch.setattr("kb.engines.registry.ADVISE_TANTIVY_AT", 3)
    monkeypatch.setattr("kb.engines.registry.ADVISE_AFTER_ADDING", 3)
    kb = make_kb({f"n{i}.md": f"# Note {i}\n\nbody {i}\n" for i in range(4)}, config=config)
    result = CliRunner().invoke(cli, ["--kb", str(kb.home), "ingest", *rebuild])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("added 4,")
    assert "tantivy" not in result.stderr
