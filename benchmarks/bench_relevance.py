"""Relevance of `kb search` on real note folders, judged by reading the notes, against `rg`
and SQLite's trigram FTS5 measured in the same run.

    python benchmarks/bench_relevance.py [--engine fts5|whoosh|tantivy] [--corpus NAME ...]
                                         [--corpora DIR] [--workdir DIR] [--cli]
                                         [--pool] [--json] [--json-out FILE]

The queries are `benchmarks/relevance/queries.json` (written before any tuning); the grades
are every `benchmarks/relevance/judgments-*.json`, one file per corpus, each
{query_id: {note_path: grade}} with 2 = about it, 1 = useful, 0 = not. Corpora: `notes`
(the bundled notes of this repository) and the folders of `--corpora` (default
`../shared/corpora`); a corpus whose folder is missing is left out and said so.

Three systems see the same notes (the ones kb ingested) and each returns its top 10:

- kb: `KnowledgeBase.search(query, limit=10)` in this process, or with `--cli` the command
  a user runs, `kb search --json -n 10 -- QUERY`. The store of each corpus is kept under
  `--workdir` by corpus and engine; it is rebuilt when kb's source changed since it was
  built, so a rerun after a change to the search measures the new code.
- rg: the query split on whitespace (a field prefix such as `tag:` dropped, since rg has no
  fields), `rg -c -i -F -- WORD NOTES...` for each word; a note that holds any word ranks
  by how many of the words it holds, then by the total of matching lines, then by path.
  That is what a user does with `rg -i word` and a glance at the counts.
- trigram: an FTS5 table `(title, body)` with `tokenize='trigram'`, where title is the
  front-matter title, else the first heading, else the file name, and body the raw file.
  The same words, ANDed: a word of 3 or more characters as an FTS5 phrase, a shorter one
  (a trigram index cannot hold it, e.g. most two-character Chinese words) as a LIKE on
  title and body. Ranked by bm25 with the title weighted 5 to the body's 1; when every word
  is short, by the number of times the words occur.

Metrics, per corpus and overall (a mean over queries):

- MRR@10: 1/rank of the first note graded 2 in the top 10 (graded 1 when the query has no
  note graded 2); 0 when none is there.
- nDCG@5 with gains 2/1/0 against the ideal order of every note judged for that query.
- empty: the share of queries with no result at all (a refused query counts as empty).
- unjudged: (query, note) pairs in a system's top 10 with no grade; they count as 0, so a
  large number means the figures are unreliable until someone judges them (`--pool`).

Queries with no note graded 1 or 2 are left out of MRR and nDCG (and counted). `--pool`
prints every unjudged (query, note) pair of any system's top 10 with the query's intent,
for a judge to grade; after the search changes, run it again and judge what is new.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from common import BENCH_DIR, REPO_ROOT, SEMANTIC_SET_BY_USER, BenchError, last_line
from relevance_fit import POOL, QueryFeatures, cross_validated, fit_all, model_paths, oracle

RELEVANCE_DIR = BENCH_DIR / "relevance"
QUERIES_FILE = RELEVANCE_DIR / "queries.json"
BUNDLED = "notes"  # the corpus name of this repository's own notes
DEFAULT_CORPORA = REPO_ROOT.parent / "shared" / "corpora"
DEFAULT_WORKDIR = Path("/tmp/kb-bench-relevance")
# kb-lexical: kb search --lexical; model-*: the model alone (best passage, whole note);
# fused-cv: kb's fusion with weights fitted on the other folds; oracle: the better of
# kb-lexical and the model for each query (relevance_fit.py). The last four need meaning.
SYSTEMS = (
    "kb",
    "kb-lexical",
    "model-passage",
    "model-whole",
    "fused-cv",
    "oracle",
    "rg",
    "trigram",
)
MEANING_SYSTEMS = ("model-passage", "model-whole", "fused-cv", "oracle")
ENGINES = ("fts5", "whoosh", "tantivy")
TOP = 10  # results read per query: MRR@10 and the pool
NDCG_AT = 5
TITLE_WEIGHT = 5.0
GRADES = (0, 1, 2)

_FIELD = re.compile(r"^[A-Za-z]+:(?=[^:])")  # tag:x, never std::move
_TITLE = re.compile(r"""^title\s*[:=]\s*["']?(.*?)["']?\s*$""", re.MULTILINE)
_HEADING = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Query:
    id: str
    corpus: str
    text: str
    kind: str
    intent: str


@dataclass
class Ranking:
    """One system's answer to one query: note paths best first, or why there is none."""

    paths: list[str] = field(default_factory=list)
    error: str | None = None  # a refused query, or a crash worth reporting


@dataclass(frozen=True)
class Scores:
    queries: int
    judged: int  # queries with a note graded 1 or 2
    mrr: float | None
    ndcg: float | None
    empty: int
    unjudged: int


# ---------------------------------------------------------------------------
# Metrics (pure)
# ---------------------------------------------------------------------------


def reciprocal_rank(ranked: Sequence[str], grades: Mapping[str, int]) -> float | None:
    """1/rank of the first note with the query's best grade (2, else 1) in the top 10;
    None when no note is graded above 0."""
    best = max(grades.values(), default=0)
    if best == 0:
        return None
    for rank, path in enumerate(ranked[:TOP], 1):
        if grades.get(path, 0) >= best:
            return 1 / rank
    return 0.0


def ndcg(ranked: Sequence[str], grades: Mapping[str, int], k: int = NDCG_AT) -> float | None:
    """nDCG@k with the grades as gains; unjudged notes gain 0; None when nothing is relevant."""
    ideal = sorted(grades.values(), reverse=True)[:k]
    ideal_dcg = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(ideal, 1))
    if ideal_dcg == 0:
        return None
    dcg = sum(grades.get(path, 0) / math.log2(rank + 1) for rank, path in enumerate(ranked[:k], 1))
    return dcg / ideal_dcg


def mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def score(
    queries: Sequence[Query],
    rankings: Mapping[str, Ranking],
    judgments: Mapping[str, Mapping[str, int]],
) -> Scores:
    """One system's scores over some queries (rankings and judgments by query id)."""
    rr, gains, empty, unjudged = [], [], 0, 0
    for query in queries:
        ranked = rankings[query.id].paths[:TOP]
        grades = judgments.get(query.id, {})
        rr.append(reciprocal_rank(ranked, grades))
        gains.append(ndcg(ranked, grades))
        empty += not ranked
        unjudged += sum(path not in grades for path in ranked)
    judged = sum(value is not None for value in rr)
    return Scores(len(queries), judged, mean(rr), mean(gains), empty, unjudged)


# ---------------------------------------------------------------------------
# Queries and judgments
# ---------------------------------------------------------------------------


def load_queries(path: Path = QUERIES_FILE) -> list[Query]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    queries = [Query(r["id"], r["corpus"], r["query"], r["class"], r["intent"]) for r in rows]
    ids = [q.id for q in queries]
    if len(set(ids)) != len(ids):
        raise BenchError(f"{path}: query ids repeat")
    return queries


def load_judgments(folder: Path = RELEVANCE_DIR) -> dict[str, dict[str, int]]:
    """Every judgments-*.json merged; a query judged in two files, or a grade outside 0-2,
    is an error naming the file."""
    merged: dict[str, dict[str, int]] = {}
    for path in sorted(folder.glob("judgments-*.json")):
        for query_id, grades in json.loads(path.read_text(encoding="utf-8")).items():
            if query_id in merged:
                raise BenchError(f"{path.name}: {query_id} is judged in another file too")
            bad = [p for p, g in grades.items() if g not in GRADES]
            if bad:
                raise BenchError(f"{path.name}: {query_id}: grade of {bad[0]} is not 0, 1 or 2")
            merged[query_id] = dict(grades)
    return merged


def words_of(text: str) -> list[str]:
    """The query as the baselines take it: whitespace-separated, field prefix and quotes
    dropped (rg and FTS5 know no `tag:`)."""
    words = (_FIELD.sub("", word).strip('"') for word in text.split())
    return [w for w in words if w]


# ---------------------------------------------------------------------------
# Corpora: a kb store per corpus and engine, kept between runs
# ---------------------------------------------------------------------------


CUT_SUFFIX = "-600"  # a corpus named NAME-600 is NAME with each note cut to its first 600
CUT_AT = 600  # characters of text after the front matter (kept whole: title, tags, dates)
_FRONT_MATTER = re.compile(r"\A(---\n.*?\n---\n|\+\+\+\n.*?\n\+\+\+\n)", re.DOTALL)


def cut_note(text: str, at: int = CUT_AT) -> str:
    """The note's front matter and the first ``at`` characters of what follows it: a short
    note as a blog of short posts has them."""
    found = _FRONT_MATTER.match(text)
    head = found.group(0) if found else ""
    return head + text[len(head) :][:at]


def cut_corpus(source: Path, target: Path) -> Path:
    """``target`` holding every Markdown note of ``source`` cut (rewritten only if changed,
    so kb's ingest sees nothing new on a rerun). ``source`` is never written."""
    for path in sorted(source.rglob("*.md")):
        out = target / path.relative_to(source)
        cut = cut_note(path.read_text(encoding="utf-8", errors="replace"))
        if not out.is_file() or out.read_text(encoding="utf-8") != cut:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(cut, encoding="utf-8")
    return target


def corpus_folder(name: str, corpora: Path, workdir: Path | None = None) -> Path:
    """The notes of corpus ``name``; a NAME-600 corpus is cut into ``workdir`` first."""
    if name.endswith(CUT_SUFFIX):
        whole = corpus_folder(name.removesuffix(CUT_SUFFIX), corpora)
        if not whole.is_dir() or workdir is None:
            return whole / "missing"
        return cut_corpus(whole, workdir / "cut" / name)
    return REPO_ROOT / "notes" if name == BUNDLED else corpora / name


def kb_source(rev: str | None, workdir: Path) -> Path:
    """The folder whose kb/ package is measured: the working tree, or with --at REV that
    commit's kb/ unpacked under --workdir (others' half-done edits cannot break the run)."""
    if rev is None:
        return REPO_ROOT
    found = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        raise BenchError(f"--at {rev}: not a commit of {REPO_ROOT}")
    source = workdir / f"src-{found.stdout.strip()[:12]}"
    if not (source / "kb").is_dir():
        source.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "archive", found.stdout.strip(), "kb"],
            capture_output=True,
            check=True,
        )
        subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
    return source


def run_kb(source: Path, kb_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m kb` with the measured source first on the path (cwd too, as -m puts it
    first)."""
    env = dict(os.environ, PYTHONPATH=str(source))
    return subprocess.run(
        [sys.executable, "-m", "kb", "--kb", str(kb_dir), *args],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def kb_fingerprint(source: Path, engine: str) -> str:
    """Changes whenever kb's source does: a store built by other code is rebuilt."""
    digest = hashlib.sha256(engine.encode())
    for path in sorted((source / "kb").rglob("*.py")):
        digest.update(path.relative_to(source).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def prepare_kb(
    name: str, folder: Path, source: Path, engine: str, workdir: Path, keep: bool = False
) -> Path:
    """The kb folder for this corpus and engine, its store up to date with the notes;
    ``keep``: a store built by other code is brought up to date, not rebuilt (embedding
    is the slow part, and a change to the ranking does not change the vectors)."""
    kb_dir = workdir / f"{name}-{engine}"
    stamp = kb_dir / "built-by"
    fingerprint = kb_fingerprint(source, engine)
    fresh = stamp.is_file() and (keep or stamp.read_text(encoding="utf-8") == fingerprint)
    if not fresh and kb_dir.exists():
        shutil.rmtree(kb_dir)  # only ever a folder this script named under --workdir
    kb_dir.mkdir(parents=True, exist_ok=True)
    (kb_dir / "kb.yaml").write_text(f"roots: [{json.dumps(str(folder))}]\n", encoding="utf-8")
    args = ("--json",) if fresh else ("--rebuild", "--engine", engine, "--json")
    result = run_kb(source, kb_dir, "ingest", *args)
    if result.returncode != 0:
        raise BenchError(f"kb ingest of {name} ({engine}) failed: {last_line(result.stderr)}")
    stamp.write_text(fingerprint, encoding="utf-8")
    return kb_dir


# ---------------------------------------------------------------------------
# The three systems
# ---------------------------------------------------------------------------


def kb_in_process(
    source: Path, kb_dir: Path
) -> tuple[Callable[..., Ranking], Callable[[], None], list[str]]:
    """A search function over the corpus's store, its closer, and the notes kb indexed."""
    if str(source) not in sys.path:
        sys.path.insert(0, str(source))
    from kb.errors import KbError
    from kb.knowledge_base import KnowledgeBase

    kb = KnowledgeBase.open(kb_dir)
    try:
        notes = sorted(choice.path for choice in kb.note_choices())
    except KbError as error:
        kb.close()
        raise BenchError(f"kb cannot read the store it built in {kb_dir}: {error}") from error

    def search(text: str, lexical: bool = False) -> Ranking:
        try:
            results = kb.search(text, limit=TOP, lexical=lexical)
        except KbError as error:  # a refused query: what the user would see, on one line
            return Ranking(error=f"refused: {error}")
        except Exception as error:  # a crash is a finding, not the end of the run
            return Ranking(error=f"crash: {type(error).__name__}: {error}")
        return Ranking([hit.path for hit in results.hits])

    # kb.by_meaning.scores since the facade names its parts, kb.meaning_scores before it
    # (--at REV); a kb from before the fusion has neither.
    part = getattr(kb, "by_meaning", None)
    meaning_scores = part.scores if part is not None else getattr(kb, "meaning_scores", None)

    def features(text: str) -> QueryFeatures | None:
        """What kb's ranking of ``text`` is made of (relevance_fit.py); None without
        meaning or for a refused query."""
        if meaning_scores is None:
            return None
        try:
            scores = meaning_scores(text)
            if scores is None:
                return None
            words = kb.search(text, limit=POOL, lexical=True)
            gate = kb.search(text, limit=1, explain=True).gate
        except KbError:
            return None
        floor, meaning = scores
        from kb.query.syntax import parse_query

        relaxable = _relaxable(parse_query(text))
        paths = [hit.path for hit in words.hits]
        first = words.hits[0].title.casefold() if words.hits else None
        pinned = paths[0] if first is not None and first == text.strip().casefold() else None
        held = [len(h.matched) / max(len(h.matched) + len(h.missing), 1) for h in words.hits]
        return QueryFeatures(gate, relaxable, pinned, paths, floor, meaning, held)

    def hubness() -> dict[str, float]:
        """Each note's mean cosine with questions about nothing in the notes, less the
        mean over notes: how much of a hub it is (CSLS's r_x, Nielsen & Hansen 2023)."""
        from kb.meaning.floor import BACKGROUND

        totals: dict[str, float] = {}
        for question in BACKGROUND:
            found = meaning_scores(question) if meaning_scores is not None else None
            if found is None:
                return {}
            for path, (passage, _) in found[1].items():
                totals[path] = totals.get(path, 0.0) + passage / len(BACKGROUND)
        middle = sum(totals.values()) / max(len(totals), 1)
        return {path: value - middle for path, value in totals.items()}

    search.features = features  # type: ignore[attr-defined]
    search.hubness = hubness  # type: ignore[attr-defined]
    return search, kb.close, notes


def _relaxable(query: Any) -> bool:
    """A query of plain words (no phrase, filter, OR or NOT): kb fills an empty page (≈)."""
    from kb.query.syntax import And, Word

    root = query.root
    children = root.children if isinstance(root, And) else (root,)
    return all(isinstance(child, Word) for child in children)


def kb_cli(source: Path, kb_dir: Path) -> Callable[..., Ranking]:
    def search(text: str, lexical: bool = False) -> Ranking:
        words = ("--lexical",) if lexical else ()
        result = run_kb(source, kb_dir, "search", "--json", *words, "-n", str(TOP), "--", text)
        if result.returncode == 1:
            return Ranking()
        if result.returncode != 0:
            kind = "refused" if result.returncode == 2 else f"crash (exit {result.returncode})"
            return Ranking(error=f"{kind}: {last_line(result.stderr)}")
        return Ranking([hit["path"] for hit in json.loads(result.stdout)])

    return search


def rg_search(folder: Path, notes: Sequence[str], text: str) -> Ranking:
    """Rank notes by how many query words they hold, then by matching lines (see above)."""
    held: dict[str, int] = {}
    lines: dict[str, int] = {}
    for word in dict.fromkeys(words_of(text)):
        result = subprocess.run(
            ["rg", "-c", "-i", "-F", "--no-messages", "--", word, *notes],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode > 1:
            return Ranking(error=f"rg: {last_line(result.stderr)}")
        for line in result.stdout.splitlines():
            path, _, count = line.rpartition(":")
            held[path] = held.get(path, 0) + 1
            lines[path] = lines.get(path, 0) + int(count)
    ranked = sorted(held, key=lambda p: (-held[p], -lines[p], p))
    return Ranking(ranked[:TOP])


def note_title(path: Path, text: str) -> str:
    for pattern in (_TITLE, _HEADING):
        found = pattern.search(text[:4000])
        if found and found.group(1).strip():
            return found.group(1).strip()
    return path.stem


class TrigramIndex:
    """SQLite FTS5 with the trigram tokenizer over the same notes, in memory."""

    def __init__(self, folder: Path, notes: Sequence[str]) -> None:
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            "CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, title, body, tokenize='trigram')"
        )
        rows = []
        for rel in notes:
            text = (folder / rel).read_text(encoding="utf-8", errors="replace")
            rows.append((rel, note_title(folder / rel, text), text))
        self.db.executemany("INSERT INTO notes (path, title, body) VALUES (?, ?, ?)", rows)

    def search(self, text: str) -> Ranking:
        words = list(dict.fromkeys(words_of(text)))
        if not words:
            return Ranking()
        long_words = [w for w in words if len(w) >= 3]
        short = [w for w in words if len(w) < 3]
        where, params = [], []
        if long_words:
            where.append("notes MATCH ?")
            params.append(" AND ".join('"' + w.replace('"', '""') + '"' for w in long_words))
        for word in short:
            where.append("(title || ' ' || body) LIKE ? ESCAPE '\\'")
            params.append("%" + re.sub(r"([%_\\])", r"\\\1", word) + "%")
        rank = f"bm25(notes, 0, {TITLE_WEIGHT}, 1.0)" if long_words else "0"
        sql = f"SELECT path, title, body, {rank} FROM notes WHERE {' AND '.join(where)}"
        try:
            rows = self.db.execute(sql, params).fetchall()
        except sqlite3.OperationalError as error:
            return Ranking(error=f"trigram: {error}")
        if long_words:
            rows.sort(key=lambda r: (r[3], r[0]))
        else:
            folded = [w.casefold() for w in short]
            occurrences = {
                r[0]: sum(f"{r[1]} {r[2]}".casefold().count(w) for w in folded) for r in rows
            }
            rows.sort(key=lambda r: (-occurrences[r[0]], r[0]))
        return Ranking([r[0] for r in rows[:TOP]])

    def close(self) -> None:
        self.db.close()


# ---------------------------------------------------------------------------
# A run
# ---------------------------------------------------------------------------


@dataclass
class CorpusRun:
    name: str
    folder: Path
    queries: list[Query]
    rankings: dict[str, dict[str, Ranking]]  # system -> query id -> ranking
    seconds: float
    features: dict[str, QueryFeatures] = field(default_factory=dict)  # by query id
    hub: dict[str, float] = field(default_factory=dict)  # each note's hubness


def run_corpus(
    name: str, folder: Path, queries: list[Query], args: argparse.Namespace
) -> CorpusRun:
    start = time.perf_counter()
    kb_dir = prepare_kb(name, folder, args.source, args.engine, args.workdir, args.keep_stores)
    in_process, close, notes = kb_in_process(args.source, kb_dir)
    search = kb_cli(args.source, kb_dir) if args.cli else in_process
    trigram = TrigramIndex(folder, notes)
    rankings: dict[str, dict[str, Ranking]] = {system: {} for system in SYSTEMS}
    features: dict[str, QueryFeatures] = {}
    try:
        for query in queries:
            rankings["kb"][query.id] = search(query.text)
            rankings["kb-lexical"][query.id] = search(query.text, lexical=True)
            rankings["rg"][query.id] = rg_search(folder, notes, query.text)
            rankings["trigram"][query.id] = trigram.search(query.text)
            found = in_process.features(query.text)  # type: ignore[attr-defined]
            if found is not None:
                features[query.id] = found
        hub = in_process.hubness() if features else {}  # type: ignore[attr-defined]
    finally:
        close()
        trigram.close()
    seconds = time.perf_counter() - start
    return CorpusRun(name, folder, queries, rankings, seconds, features, hub)


def add_meaning_systems(
    runs: Sequence[CorpusRun], judgments: Mapping[str, Mapping[str, int]]
) -> dict[str, Any]:
    """The model alone, the fusion on held-out folds and the oracle, from the features
    every run kept; the weights each fold chose and those fitted on everything."""
    features = {q: f for run in runs for q, f in run.features.items()}
    if not features:  # meaning off, or a kb from before the fusion (--at REV)
        for run in runs:
            for query in run.queries:
                for system in MEANING_SYSTEMS:
                    run.rankings[system][query.id] = Ranking(error="no meaning")
        return {"folds": [], "all": {}, "hubness": {}}
    held_out, folds = cross_validated(features, judgments, reciprocal_rank)
    for run in runs:
        for query in run.queries:
            found = run.features.get(query.id)
            if found is None:
                for system in MEANING_SYSTEMS:
                    run.rankings[system][query.id] = Ranking(error="no meaning")
                continue
            passage = model_paths(found, 0)
            whole = model_paths(found, 1)
            run.rankings["model-passage"][query.id] = Ranking(passage[:TOP])
            run.rankings["model-whole"][query.id] = Ranking(whole[:TOP])
            run.rankings["fused-cv"][query.id] = Ranking(held_out.get(query.id, [])[:TOP])
            grades = judgments.get(query.id, {})
            words = run.rankings["kb-lexical"][query.id].paths
            best_model = max((passage, whole), key=lambda r: reciprocal_rank(r, grades) or 0.0)
            run.rankings["oracle"][query.id] = Ranking(
                oracle(words, best_model, grades, reciprocal_rank)[:TOP]
            )
    hub = {q: run.hub for run in runs for q in run.features}
    with_hub, _ = cross_validated(features, judgments, reciprocal_rank, hub)
    return {
        "folds": folds,
        "all": fit_all(features, judgments, reciprocal_rank),
        "hubness": with_hub,
    }


def hubness_lines(
    runs: Sequence[CorpusRun],
    judgments: Mapping[str, Mapping[str, int]],
    with_hub: Mapping[str, list[str]],
) -> list[str]:
    """Held-out MRR@10 by class, the fusion as kb has it against the same fusion with
    each note's hubness taken from its cosines (kept only if it measures better)."""
    lines = ["hubness correction (held out, MRR@10): class  n  fused  fused-hub"]
    kinds = dict.fromkeys(q.kind for run in runs for q in run.queries)
    for kind in [*kinds, "all"]:
        chosen = [q for run in runs for q in run.queries if kind in ("all", q.kind)]
        plain = [
            reciprocal_rank(run.rankings["fused-cv"][q.id].paths, judgments.get(q.id, {}))
            for run in runs
            for q in run.queries
            if q in chosen
        ]
        hubbed = [
            reciprocal_rank(with_hub.get(q.id, [])[:TOP], judgments.get(q.id, {})) for q in chosen
        ]
        lines.append(f"  {kind:<14} {len(chosen):>3}  {show(mean(plain))}  {show(mean(hubbed))}")
    return lines


def corpus_scores(run: CorpusRun, judgments: Mapping[str, Mapping[str, int]]) -> dict[str, Scores]:
    return {s: score(run.queries, run.rankings[s], judgments) for s in SYSTEMS}


def overall_scores(
    runs: Sequence[CorpusRun], judgments: Mapping[str, Mapping[str, int]]
) -> dict[str, Scores]:
    queries = [q for run in runs for q in run.queries]
    merged = {s: {q: r for run in runs for q, r in run.rankings[s].items()} for s in SYSTEMS}
    return {s: score(queries, merged[s], judgments) for s in SYSTEMS}


def pool(
    runs: Sequence[CorpusRun], judgments: Mapping[str, Mapping[str, int]]
) -> list[dict[str, Any]]:
    """Every unjudged (query, note) pair in any system's top 10, with where each system put it."""
    entries = []
    for run in runs:
        for query in run.queries:
            grades = judgments.get(query.id, {})
            ranks: dict[str, dict[str, int]] = {}
            for system in SYSTEMS:
                for rank, path in enumerate(run.rankings[system][query.id].paths[:TOP], 1):
                    if path not in grades:
                        ranks.setdefault(path, {})[system] = rank
            if ranks:
                notes = [
                    {"path": path, "title": title_of(run.folder / path), "ranks": ranks[path]}
                    for path in sorted(ranks, key=lambda p: (min(ranks[p].values()), p))
                ]
                entries.append(
                    {
                        "id": query.id,
                        "corpus": query.corpus,
                        "query": query.text,
                        "intent": query.intent,
                        "notes": notes,
                    }
                )
    return entries


def title_of(path: Path) -> str:
    try:
        return note_title(path, path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return path.stem


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def vars_of(weights: Any) -> dict[str, float]:
    return {k: round(getattr(weights, k), 3) for k in ("words", "passage", "whole")}


def show(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table(rows: Sequence[tuple[str, Mapping[str, Scores]]]) -> list[str]:
    header = (
        f"{'corpus':<18} {'system':<13} {'MRR@10':>7} {'nDCG@5':>7} {'empty':>7} "
        f"{'unjudged':>9} {'judged':>7}"
    )
    lines = [header, "-" * len(header)]
    for name, by_system in rows:
        for system in SYSTEMS:
            s = by_system[system]
            lines.append(
                f"{name:<18} {system:<13} {show(s.mrr):>7} {show(s.ndcg):>7} "
                f"{s.empty:>3}/{s.queries:<3} {s.unjudged:>9} {s.judged:>3}/{s.queries:<3}"
            )
    return lines


SHORT = {
    "kb": "kb",
    "kb-lexical": "lex",
    "model-passage": "mP",
    "model-whole": "mW",
    "fused-cv": "cv",
    "oracle": "orc",
    "rg": "rg",
    "trigram": "tri",
}


def class_table(runs: Sequence[CorpusRun], judgments: Mapping[str, Mapping[str, int]]) -> list[str]:
    """MRR@10, nDCG@5 and empty results by query class over every corpus, every system
    (column names: SHORT)."""
    names = "/".join(SHORT[s] for s in SYSTEMS)
    header = f"{'class':<14} {'n':>3}  metric  {'  '.join(f'{SHORT[s]:>5}' for s in SYSTEMS)}"
    lines = [f"systems: {names}", header, "-" * len(header)]
    kinds = dict.fromkeys(q.kind for run in runs for q in run.queries)
    for kind in kinds:
        chosen = [
            CorpusRun(r.name, r.folder, [q for q in r.queries if q.kind == kind], r.rankings, 0)
            for r in runs
        ]
        by_system = overall_scores(chosen, judgments)
        count = by_system["kb"].queries
        for metric in ("mrr", "ndcg", "empty"):
            values = "  ".join(
                f"{getattr(by_system[s], metric):>5}"
                if metric == "empty"
                else f"{show(getattr(by_system[s], metric)):>5}"
                for s in SYSTEMS
            )
            label = {"mrr": "MRR@10", "ndcg": "nDCG@5", "empty": "empty"}[metric]
            first = metric == "mrr"
            name, n = (kind, str(count)) if first else ("", "")
            lines.append(f"{name:<14} {n:>3}  {label:<6}  {values}")
    return lines


def kb_misses(runs: Sequence[CorpusRun], judgments: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Queries where kb's best note is not first, or kb errs: what to look at next."""
    lines = []
    for run in runs:
        for query in run.queries:
            ranking = run.rankings["kb"][query.id]
            rr = reciprocal_rank(ranking.paths, judgments.get(query.id, {}))
            if ranking.error or (rr is not None and rr < 1):
                why = ranking.error or ("empty" if not ranking.paths else f"RR {rr:.2f}")
                lines.append(f"  {query.id:<5} {query.kind:<12} {why:<10} {query.text}")
    return lines


def pool_lines(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = []
    for entry in entries:
        lines.append(f"{entry['id']}  [{entry['corpus']}]  {entry['query']}  -- {entry['intent']}")
        for note in entry["notes"]:
            ranks = " ".join(f"{s}:{r}" for s, r in note["ranks"].items())
            lines.append(f"    {note['path']}  | {note['title']}  | {ranks}")
    pairs = sum(len(e["notes"]) for e in entries)
    lines.append(f"{pairs} unjudged pairs in {len(entries)} queries")
    return lines


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--engine", choices=ENGINES, default="fts5", help="kb's search engine")
    parser.add_argument("--corpus", action="append", help="only this corpus (repeatable)")
    parser.add_argument(
        "--corpora", type=Path, default=DEFAULT_CORPORA, help="folder of the shared corpora"
    )
    parser.add_argument(
        "--workdir", type=Path, default=DEFAULT_WORKDIR, help="where the kb stores are kept"
    )
    parser.add_argument(
        "--at", metavar="REV", help="measure kb as committed at REV (default: the working tree)"
    )
    parser.add_argument("--cli", action="store_true", help="run `kb search` as a command per query")
    parser.add_argument(
        "--pool", action="store_true", help="print the unjudged (query, note) pairs to grade"
    )
    parser.add_argument(
        "--keep-stores",
        action="store_true",
        help="reuse each corpus's store though kb's source changed (its vectors too)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--json-out", type=Path, help="also save the JSON here")
    parser.add_argument(
        "--features-out", type=Path, help="save what each query's ranking is made of (JSON)"
    )
    return parser.parse_args(argv)


def selected_corpora(queries: Sequence[Query], args: argparse.Namespace) -> list[tuple[str, Path]]:
    names = list(dict.fromkeys(q.corpus for q in queries))
    unknown = sorted(set(args.corpus or ()) - set(names))
    if unknown:
        raise BenchError(f"no queries for corpus {', '.join(unknown)} (known: {', '.join(names)})")
    chosen = [n for n in names if not args.corpus or n in args.corpus]
    present = []
    for name in chosen:
        folder = corpus_folder(name, args.corpora, args.workdir)
        if folder.is_dir():
            present.append((name, folder))
        else:
            print(f"left out {name}: {folder} is missing", file=sys.stderr)
    return present


def result_json(
    runs: Sequence[CorpusRun], judgments: Mapping[str, Mapping[str, int]], args: argparse.Namespace
) -> dict[str, Any]:
    def scores_json(by_system: Mapping[str, Scores]) -> dict[str, Any]:
        return {s: vars(v) for s, v in by_system.items()}

    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "engine": args.engine,
        "kb_via": "cli" if args.cli else "facade",
        "kb_at": args.at or "working tree",
        "corpora": {run.name: scores_json(corpus_scores(run, judgments)) for run in runs},
        "overall": scores_json(overall_scores(runs, judgments)),
        "queries": [
            {
                "id": q.id,
                "corpus": q.corpus,
                "query": q.text,
                "class": q.kind,
                "results": {s: run.rankings[s][q.id].paths for s in SYSTEMS},
                "errors": {s: e for s in SYSTEMS if (e := run.rankings[s][q.id].error)},
            }
            for run in runs
            for q in run.queries
        ],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # common turns meaning off for the speed benchmarks; relevance is measured with it.
    # Here, not at import: bench_tui.py imports this module, and with meaning on its
    # ingest of 100,000 notes began embedding every one.
    if not SEMANTIC_SET_BY_USER:
        os.environ.pop("KB_SEMANTIC", None)
    try:
        if shutil.which("rg") is None:
            raise BenchError("rg (ripgrep) is not on PATH; it is one of the baselines")
        args.source = kb_source(args.at, args.workdir)
        queries = load_queries()
        judgments = load_judgments()
        runs = []
        for name, folder in selected_corpora(queries, args):
            if not args.json:
                print(f"{name}: searching ...", file=sys.stderr, flush=True)
            runs.append(run_corpus(name, folder, [q for q in queries if q.corpus == name], args))
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    weights = add_meaning_systems(runs, judgments)
    if args.pool:
        entries = pool(runs, judgments)
        print(
            json.dumps(entries, ensure_ascii=False, indent=1)
            if args.json
            else "\n".join(pool_lines(entries))
        )
        return 0
    report = result_json(runs, judgments, args)
    report["weights"] = {
        "folds": [{g: w and vars_of(w) for g, w in fold.items()} for fold in weights["folds"]],
        "all": {g: w and vars_of(w) for g, w in weights["all"].items()},
    }
    if args.features_out:
        features = {q: vars(f) for run in runs for q, f in run.features.items()}
        hubs = {run.name: run.hub for run in runs}
        kinds = {q.id: [q.corpus, q.kind] for run in runs for q in run.queries}
        args.features_out.write_text(
            json.dumps({"features": features, "hub": hubs, "queries": kinds}, ensure_ascii=False)
        )
    if args.json_out:
        args.json_out.write_text(
            json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=1))
        return 0
    rows = [(run.name, corpus_scores(run, judgments)) for run in runs]
    rows.append(("overall", overall_scores(runs, judgments)))
    seconds = sum(run.seconds for run in runs)
    print(f"{report['date']}, kb engine {args.engine} via {report['kb_via']}, {seconds:.1f} s")
    print("\n".join(table(rows)))
    print("\n".join(["", *class_table(runs, judgments)]))
    errors = [
        f"  {q.id} {system}: {run.rankings[system][q.id].error}"
        for run in runs
        for q in run.queries
        for system in SYSTEMS
        if run.rankings[system][q.id].error
    ]
    if errors:
        print("errors:\n" + "\n".join(errors))
    print("\n".join(["", *hubness_lines(runs, judgments, weights["hubness"])]))
    print("\nweights fitted on every judged query (kb ships these; figures above are held out):")
    for gate, fitted in report["weights"]["all"].items():
        print(f"  {gate}: {fitted}")
    for number, fold in enumerate(report["weights"]["folds"]):
        print(f"  fold {number}: " + "; ".join(f"{g} {w}" for g, w in fold.items()))
    misses = kb_misses(runs, judgments)
    if misses:
        print("kb's best note not first:\n" + "\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
