"""benchmarks/bench_relevance.py: its metrics on a hand-made example, its judgments files,
and a run over the bundled notes only."""

from __future__ import annotations

import importlib
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "benchmarks" / "bench_relevance.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    sys.path.insert(0, str(SCRIPT.parent))  # the script imports its sibling common.py
    try:
        importlib.import_module("relevance_fit")  # and relevance_fit.py, kept for the tests
        return importlib.import_module("bench_relevance")
    finally:
        sys.path.remove(str(SCRIPT.parent))


GRADES = {"about.md": 2, "useful.md": 1, "other-useful.md": 1, "off.md": 0}


@pytest.mark.parametrize(
    ("ranked", "grades", "expected"),
    [
        (["about.md"], GRADES, 1.0),
        (["off.md", "useful.md", "about.md"], GRADES, 1 / 3),  # the first 2, not the first 1
        (["off.md", "useful.md"], GRADES, 0.0),
        ([], GRADES, 0.0),
        (["off.md", "useful.md"], {"useful.md": 1, "off.md": 0}, 0.5),  # no 2: the first 1
        (["off.md"], {"off.md": 0}, None),  # nothing relevant: left out of the mean
        ([*(f"x{i}.md" for i in range(10)), "about.md"], GRADES, 0.0),  # rank 11 is past @10
    ],
)
def test_reciprocal_rank(
    bench: ModuleType, ranked: list[str], grades: dict[str, int], expected: float | None
) -> None:
    assert bench.reciprocal_rank(ranked, grades) == expected


def test_ndcg_uses_the_grades_as_gains_against_the_ideal_order(bench: ModuleType) -> None:
    ranked = ["useful.md", "unjudged.md", "about.md"]
    dcg = 1 / math.log2(2) + 0 + 2 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert bench.ndcg(ranked, GRADES) == pytest.approx(dcg / ideal)
    assert bench.ndcg(["about.md", "useful.md", "other-useful.md"], GRADES) == pytest.approx(1.0)
    assert bench.ndcg(["off.md"], {"off.md": 0}) is None


def test_score_counts_empty_results_and_unjudged_notes(bench: ModuleType) -> None:
    queries = [bench.Query(f"q{i}", "c", "text", "topic", "intent") for i in range(3)]
    rankings = {
        "q0": bench.Ranking(["about.md", "new.md"]),
        "q1": bench.Ranking(error="refused: bad syntax"),
        "q2": bench.Ranking(["off.md"]),
    }
    judgments = {"q0": GRADES, "q1": GRADES, "q2": {"off.md": 0}}
    scores = bench.score(queries, rankings, judgments)
    assert (scores.queries, scores.judged, scores.empty, scores.unjudged) == (3, 2, 1, 1)
    assert scores.mrr == pytest.approx((1.0 + 0.0) / 2)  # q2 has nothing relevant


def test_words_of_drops_field_prefixes_and_quotes_for_the_baselines(bench: ModuleType) -> None:
    assert bench.words_of('tag:gpu/perf  "softmax" std::move') == [
        "gpu/perf",
        "softmax",
        "std::move",
    ]
    assert bench.words_of("path:") == ["path:"]


def test_judgments_of_one_query_in_two_files_are_refused(bench: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "judgments-a.json").write_text('{"q1": {"x.md": 2}}', encoding="utf-8")
    (tmp_path / "judgments-b.json").write_text('{"q2": {"y.md": 1}}', encoding="utf-8")
    assert bench.load_judgments(tmp_path) == {"q1": {"x.md": 2}, "q2": {"y.md": 1}}
    (tmp_path / "judgments-c.json").write_text('{"q1": {"z.md": 0}}', encoding="utf-8")
    with pytest.raises(bench.BenchError, match=r"judgments-c\.json: q1 is judged in another file"):
        bench.load_judgments(tmp_path)


def test_a_grade_outside_0_to_2_is_refused(bench: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "judgments-a.json").write_text('{"q1": {"x.md": 3}}', encoding="utf-8")
    with pytest.raises(bench.BenchError, match=r"q1: grade of x\.md is not 0, 1 or 2"):
        bench.load_judgments(tmp_path)


def test_the_shipped_queries_and_judgments_agree(bench: ModuleType) -> None:
    queries = bench.load_queries()
    ids = {q.id for q in queries}
    assert len(queries) >= 60
    assert {q.corpus for q in queries} >= {"notes", "advanced-java-zh"}
    assert set(bench.load_judgments()) <= ids
    notes_root = REPO / "notes"
    for query in queries:
        if query.corpus in ("notes", "notes-600"):  # a cut corpus keeps its notes' paths
            for path in bench.load_judgments().get(query.id, {}):
                assert (notes_root / path).is_file(), (query.id, path)
    short = [q for q in queries if q.kind in ("short-zh-q", "short-en-q")]
    assert len(short) >= 30 and {q.kind for q in short} == {"short-zh-q", "short-en-q"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# T\n\n" + "字" * 700, "# T\n\n" + "字" * 595),  # 600 characters, 字 counts one
        ("---\ntitle: x\n---\nbody", "---\ntitle: x\n---\nbody"),  # front matter kept whole
        ("+++\ntitle = 'x'\n+++\n" + "a" * 601, "+++\ntitle = 'x'\n+++\n" + "a" * 600),
        ("short", "short"),
    ],
    ids=["chinese", "yaml", "toml", "short"],
)
def test_a_cut_corpus_keeps_the_front_matter_and_600_characters(
    bench: ModuleType, text: str, expected: str
) -> None:
    assert bench.cut_note(text) == expected


def test_the_cut_copies_are_written_beside_never_over_the_notes(
    bench: ModuleType, tmp_path: Path
) -> None:
    source = tmp_path / "mine"  # the corpus mine, under the corpora folder tmp_path
    (source / "a").mkdir(parents=True)
    (source / "a" / "n.md").write_text("# N\n\n" + "x" * 900, encoding="utf-8")
    folder = bench.corpus_folder("mine-600", tmp_path, tmp_path / "work")
    assert folder == tmp_path / "work" / "cut" / "mine-600"
    assert (source / "a" / "n.md").read_text(encoding="utf-8").endswith("x" * 900)
    assert len((folder / "a" / "n.md").read_text(encoding="utf-8")) == 600


def test_the_oracle_takes_the_better_ranking_and_the_folds_are_fixed(bench: ModuleType) -> None:
    import relevance_fit

    grades = {"right.md": 2}
    words, model = ["off.md", "right.md"], ["right.md"]
    assert relevance_fit.oracle(words, model, grades, bench.reciprocal_rank) == model
    assert relevance_fit.oracle(model, words, grades, bench.reciprocal_rank) == model
    assert relevance_fit.oracle(words, words, grades, bench.reciprocal_rank) == words
    folds = [relevance_fit.fold_of(f"q{i}") for i in range(200)]
    assert folds == [relevance_fit.fold_of(f"q{i}") for i in range(200)]
    assert set(folds) == set(range(relevance_fit.FOLDS))


def test_help_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert "--pool" in result.stdout and "--engine" in result.stdout


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("rg") is None, reason="rg (ripgrep), a baseline, is not installed")
def test_a_run_over_the_bundled_notes_scores_all_three_systems(
    tmp_path: Path, bench: ModuleType
) -> None:
    argv = [sys.executable, str(SCRIPT), "--corpus", "notes", "--workdir", str(tmp_path)]
    result = subprocess.run([*argv, "--json"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert list(report["corpora"]) == ["notes"]
    on_notes = sum(1 for q in bench.load_queries() if q.corpus == "notes")
    for system in ("kb", "rg", "trigram"):
        scores = report["corpora"]["notes"][system]
        assert scores["queries"] == scores["judged"] == on_notes
        assert 0 <= scores["mrr"] <= 1
    flat = next(q for q in report["queries"] if q["query"] == "FlatParameter")
    assert flat["results"]["rg"][0] == "posts/fsdp1-source-reading/index.md"

    pooled = subprocess.run([*argv, "--pool"], capture_output=True, text=True, check=False)
    assert pooled.returncode == 0, pooled.stderr
    assert pooled.stdout.rstrip().endswith("queries")  # the closing count line
