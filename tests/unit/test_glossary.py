"""The bilingual glossary (kb.glossary, kb/data/glossary.tsv) and kb.yaml's ``synonyms:``."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kb.cli import cli
from kb.config import load_config
from kb.errors import KbError
from kb.query.glossary import load_glossary, parse_glossary, shipped_groups
from tests.conftest import REPO

SHIPPED = REPO / "kb" / "data" / "glossary.tsv"
_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


# -- the shipped pairs, both ways ---------------------------------------------------------


@pytest.mark.parametrize(
    ("term", "partner"),
    [
        ("推理", "inference"),
        ("inference", "推理"),
        ("量化", "quantization"),
        ("分词器", "tokenizer"),
        ("显存", "gpu memory"),
        ("显存", "vram"),
        ("vram", "显存"),
        ("gpu memory", "显存"),
        ("算子", "kernel"),
        ("operator", "算子"),
        ("缓存", "cache"),
        ("索引", "index"),
        ("事务", "transaction"),
        ("一致性", "consistency"),
        ("分库分表", "sharding"),
        ("熔断", "circuit breaker"),
        ("将亡值", "xvalue"),
        ("垃圾回收", "garbage collection"),
        ("b+树", "b+ tree"),
        ("后缀自动机", "suffix automaton"),
    ],
)
def test_shipped_pairs_hold_both_ways(term: str, partner: str) -> None:
    assert partner in load_glossary().partners(term)


@pytest.mark.parametrize(
    ("typed", "partner"),
    [
        ("Inference", "推理"),  # case
        ("INFERENCE", "推理"),
        ("ＶＲＡＭ", "显存"),  # full-width letters
        ("ＧＰＵ　Ｍｅｍｏｒｙ", "显存"),  # full-width letters and an ideographic space
        ("GPU   memory", "显存"),  # runs of spaces
        ("B+树", "b+ tree"),
    ],
)
def test_case_width_and_spacing_do_not_matter(typed: str, partner: str) -> None:
    assert partner in load_glossary().partners(typed)


def test_partners_are_normalised_and_never_the_term_itself() -> None:
    glossary = load_glossary()
    for group in shipped_groups():
        for term in group:
            partners = glossary.partners(term)
            assert term not in partners
            assert all(p == " ".join(p.casefold().split()) for p in partners)


def test_a_word_outside_the_glossary_has_no_partners() -> None:
    assert load_glossary().partners("螺蛳粉") == ()
    assert load_glossary().partners("") == ()


# -- the user's entries ---------------------------------------------------------------------


def test_a_user_entry_replaces_the_shipped_partners_of_its_term() -> None:
    shipped = load_glossary()
    assert {"kernel", "operator"} <= set(shipped.partners("算子"))
    mine = load_glossary({"算子": ["Operator"]})
    assert mine.partners("算子") == ("operator",)
    assert "算子" not in mine.partners("kernel")  # replaced both ways


def test_a_user_entry_is_symmetric_and_comes_first() -> None:
    glossary = load_glossary({"推理": ["inference", "serving"]})
    assert glossary.partners("推理") == ("inference", "serving")
    assert glossary.partners("Serving") == ("推理", "inference")
    assert glossary.partners("inference")[:2] == ("推理", "serving")


def test_user_partners_come_before_shipped_ones() -> None:
    glossary = load_glossary({"serving": ["推理"]})
    assert glossary.partners("推理") == ("serving", "inference")


def test_a_user_entry_without_partners_turns_the_term_off() -> None:
    glossary = load_glossary({"算子": []})
    assert glossary.partners("算子") == ()
    assert "算子" not in glossary.partners("kernel")


def test_a_user_entry_adds_a_new_group() -> None:
    glossary = load_glossary({"螺蛳粉": ["luosifen", "river snail noodles"]})
    assert glossary.partners("River  Snail Noodles") == ("螺蛳粉", "luosifen")
    assert len(glossary) == len(load_glossary()) + 1


# -- the TSV format -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "groups"),
    [
        ("推理\tinference\n", [("推理", "inference")]),
        ("# a comment\n\n推理\tInference\tServing\n", [("推理", "inference", "serving")]),
        ("显存 \t GPU  Memory\tVRAM\r\n", [("显存", "gpu memory", "vram")]),
        ("  # an indented comment\n", []),
    ],
)
def test_glossary_lines(text: str, groups: list[tuple[str, ...]]) -> None:
    assert parse_glossary(text, "mine.tsv") == groups


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("推理 inference\n", "mine.tsv:1: a glossary line needs a term and a partner"),
        ("# ok\n推理\n", "mine.tsv:2: a glossary line needs a term and a partner"),
        ("推理\t\n", "mine.tsv:1: a glossary line has an empty field"),
        ("推理\t\tinference\n", "mine.tsv:1: a glossary line has an empty field"),
        ("\tinference\n", "mine.tsv:1: a glossary line has an empty field"),
    ],
)
def test_a_malformed_line_is_a_one_line_error_naming_it(text: str, message: str) -> None:
    with pytest.raises(KbError) as error:
        parse_glossary(text, "mine.tsv")
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def _sections() -> dict[str, list[list[str]]]:
    sections: dict[str, list[list[str]]] = {}
    current = ""
    for line in SHIPPED.read_text(encoding="utf-8").splitlines():
        if line.startswith("# =="):
            current = line.strip("# =")
            sections[current] = []
        elif line.strip() and not line.startswith("#"):
            assert current, f"a group before the first section heading: {line!r}"
            sections[current].append(line.split("\t"))
    return sections


def test_the_shipped_glossary_is_well_formed() -> None:
    sections = _sections()
    groups = [fields for rows in sections.values() for fields in rows]
    assert len(groups) >= 300
    # stored normalised, so kb reads it by splitting alone (kb.glossary.shipped_groups)
    assert shipped_groups() == tuple(parse_glossary(SHIPPED.read_text("utf-8"), "shipped"))
    assert len(shipped_groups()) == len(groups)
    for fields in groups:
        assert len(fields) >= 2, fields
        assert all(f and f == f.strip() and "  " not in f for f in fields), fields
        assert _CJK.search(fields[0]), f"the first field is not Chinese: {fields}"
        assert any(_LATIN.search(f) for f in fields[1:]), f"no English partner: {fields}"
        assert len(set(fields)) == len(fields), f"a repeated member: {fields}"
    for name, rows in sections.items():
        keys = [fields[0] for fields in rows]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        assert not repeated, f"section {name!r} repeats {repeated}"


def test_importing_the_glossary_is_cheap_and_reads_nothing() -> None:
    script = (
        "import sys\n"
        "import kb.query.glossary as g\n"
        "print('READ', g.shipped_groups.cache_info().currsize)\n"
        "g.load_glossary({'推理': ['serving']})\n"
        "heavy = {'textual', 'sqlite_utils', 'rjieba', 'markdown_it', 'rich', 'yaml',\n"
        "         'importlib.resources', 'tempfile'}\n"
        "print('LOADED', sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == ["READ 0", "LOADED []"]


# -- kb.yaml's synonyms: ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "synonyms"),
    [
        ("", {}),
        ("synonyms:\n", {}),
        ("synonyms: {推理: [inference, serving]}", {"推理": ("inference", "serving")}),
        (
            "synonyms:\n  推理: [inference]\n  算子: [operator]",
            {"推理": ("inference",), "算子": ("operator",)},
        ),
        ("synonyms: {推理: inference}", {"推理": ("inference",)}),
        ("synonyms: {算子: }", {"算子": ()}),
        (
            "synonyms: [[推理, inference], [显存, VRAM, GPU memory]]",
            {"推理": ("inference",), "显存": ("VRAM", "GPU memory")},
        ),
        ("synonyms: [[推理, inference], [推理, serving]]", {"推理": ("inference", "serving")}),
    ],
)
def test_synonyms_setting_shapes(tmp_path: Path, setting: str, synonyms: dict) -> None:
    (tmp_path / "kb.yaml").write_text(setting + "\n", encoding="utf-8")
    assert load_config(tmp_path).synonyms == synonyms


@pytest.mark.parametrize(
    "setting",
    [
        "synonyms: 5",
        "synonyms: [推理, inference]",  # a list of words, not of groups
        "synonyms: [[推理]]",  # a group of one
        "synonyms: {推理: {serving: 1}}",
        "synonyms: {推理: [1, 2]}",
        "synonyms: [[推理, '']]",
        "synonyms: {推理: [[inference]]}",
    ],
)
def test_a_wrong_synonyms_shape_is_a_one_line_error_naming_kb_yaml(
    tmp_path: Path, setting: str
) -> None:
    (tmp_path / "kb.yaml").write_text(setting + "\n", encoding="utf-8")
    with pytest.raises(KbError) as error:
        load_config(tmp_path)
    message = str(error.value)
    assert message.startswith(f"{tmp_path / 'kb.yaml'}: 'synonyms' must map words to partners")
    assert "\n" not in message


def test_synonyms_from_a_glossary_file_beside_kb_yaml(tmp_path: Path) -> None:
    (tmp_path / "kb.yaml").write_text("synonyms: mine.tsv\n", encoding="utf-8")
    (tmp_path / "mine.tsv").write_text(
        "# my words\n推理\tInference\tServing\n螺蛳粉\tluosifen\n", encoding="utf-8"
    )
    synonyms = load_config(tmp_path).synonyms
    assert synonyms == {"推理": ("inference", "serving"), "螺蛳粉": ("luosifen",)}
    assert load_glossary(synonyms).partners("luosifen") == ("螺蛳粉",)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "mine.tsv: cannot read the synonyms file: No such file or directory"),
        (b"\xc4\xe3\xba\xc3\tnihao\n", "mine.tsv: cannot read the synonyms file: not UTF-8"),
        (
            "推理\tinference\n算子 kernel\n",
            "mine.tsv:2: a glossary line needs a term and a partner",
        ),
    ],
)
def test_a_bad_synonyms_file_is_a_one_line_error_naming_it(
    tmp_path: Path, content: str | bytes | None, message: str
) -> None:
    (tmp_path / "kb.yaml").write_text("synonyms: mine.tsv\n", encoding="utf-8")
    if isinstance(content, bytes):
        (tmp_path / "mine.tsv").write_bytes(content)
    elif content is not None:
        (tmp_path / "mine.tsv").write_text(content, encoding="utf-8")
    with pytest.raises(KbError) as error:
        load_config(tmp_path)
    assert str(error.value).startswith(f"{tmp_path / message}")
    assert "\n" not in str(error.value)


def test_the_cli_reports_a_wrong_synonyms_shape_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "kb.yaml").write_text("synonyms: [推理, inference]\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path), "ingest"])
    assert result.exit_code == 1
    assert "kb.yaml: 'synonyms' must map words to partners" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_the_configuration_pages_example_means_what_it_says(tmp_path: Path) -> None:
    page = (SHIPPED.parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    example = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "kb.yaml").write_text(example, encoding="utf-8")
    synonyms = load_config(tmp_path).synonyms
    assert synonyms == {"推理": ("inference", "serving"), "算子": ()}
    glossary = load_glossary(synonyms)
    assert glossary.partners("serving") == ("推理", "inference")
    assert glossary.partners("算子") == ()
    assert "算子" not in glossary.partners("kernel")
