"""Does meaning add to kb's word evidence for related notes, or tell a true unlinked
mention from an everyday use of a short title? (issue 26, item 4; issue 36, items 3 and 7)

    python benchmarks/bench_related_meaning.py [--workdir /tmp/kb-related-meaning]
                                               [--corpora NAME ...] [--fit]
                                               [--before REV] [--json-out FILE]

Related notes, four ways, in one run:

- before: kb.links.related as it was at ``--before`` (default main), read from git;
- today: the related notes from every signal but meaning (links, words, tags, series),
  as kb gives them with meaning off;
- meaning: other notes by meaning alone, ranked by the whole notes' similarity (the
  cosine of their mean passage vectors: ``meaning-note``) or by their nearest pair of
  passages (``meaning-pair``);
- combined: ``kb.links.related`` with meaning on, as it ships.

Judged pairs. benchmarks/links_quality/related.json holds pairs judged by reading the notes
cut to their first 600 characters of body (benchmarks/short_notes.py; written before any
tuning): the bundled notes (each CS336 lecture and the post built on it, the Redis study
note and its project, papers and lectures) and advanced-java-zh. Each cut corpus is built
with its links and with every explicit link removed. Reported per note with a judged
partner: recall@5 and the share whose first related note is a partner; and the goals of
issue 36: lectures that list their post in the top 5, Redis pair first both ways.

Authors' links. Every resolved link between two notes of a corpus kb was never shown
(../shared/corpora/) and of the bundled notes, taken both ways. A note linked to or from
more than HUB notes is a table of contents, not a judgment of relatedness: it is left out
on both sides. Each corpus is built twice: with its links (read for the truth only,
meaning off) and on a copy with every explicit link removed (the link's text kept),
embedded with the bundled model, so that no ranking sees the links it is judged by.
Reported: recall@5 (the share of a note's partners in its first five, of at most five)
and MRR@10 of the first partner, averaged over the notes.

``--fit``: the meaning weights of kb/links/related.py chosen on a grid, on the judged
pairs of one cut corpus (links removed), and reported on the other (two folds): the
held-out figures are the only ones that may be quoted for fitted weights.

Mentions. benchmarks/links_quality/mentions.json judges (source, target) pairs where the
source names the target's title: ``mention`` true when a reader wants it listed. For each
judged pair, the line that names it (its ``text``, with the source's title in front, as
passages are embedded) against the target's passages (the nearest one), and the same
line against the target's title alone. Reported: how well each similarity separates true
from false mentions (AUC: 0.5 is chance), and what dropping kb's reported mentions below
a similarity would do to their precision and recall, at the similarities of the judged
pairs themselves (the best such cut is an upper bound, chosen on the set it is judged by).

Needs the semantic extra (``pip install 'kb-notes[semantic]'``); corpora that are absent
are skipped. The machine may be shared: these are quality figures, not timings.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from bench_links_quality import CORPORA as LINKS_CORPORA  # noqa: E402
from short_notes import cut_folder  # noqa: E402

from kb.knowledge_base import KnowledgeBase  # noqa: E402
from kb.links import related as related_module  # noqa: E402
from kb.meaning.index import VectorIndex, vector_index  # noqa: E402
from kb.meaning.neighbours import neighbourhood  # noqa: E402
from tests.integration.test_connections import build_kb  # noqa: E402

# bench_links_quality's corpora (the ones its mentions are judged on) and one more
CORPORA = {**LINKS_CORPORA, "hugo-site-zh": REPO.parent / "shared" / "corpora" / "hugo-site-zh"}
JUDGED_MENTIONS = REPO / "benchmarks" / "links_quality" / "mentions.json"
JUDGED_RELATED = REPO / "benchmarks" / "links_quality" / "related.json"
HUB = 15  # links to or from more notes than this: a table of contents
TOP = 5
DEPTH = 10
METHODS = ("before", "today", "meaning-note", "meaning-pair", "combined")
# The grid --fit searches: (MEANING_WEIGHT, MEANING_FROM, MEANING_PAIR_SHARE, MEANING_HUBNESS)
GRID = list(itertools.product((0.5, 1.0, 2.0), (0.5, 1.0, 1.5), (0.0, 0.5, 1.0), (0.0, 1.0)))
FITTED = ("MEANING_WEIGHT", "MEANING_FROM", "MEANING_PAIR_SHARE", "MEANING_HUBNESS")


REUSE = False  # --reuse: open the knowledge bases a previous run built (and embedded)


def build(workdir: Path, name: str, source: Path, *, without_links: bool, meaning: bool):
    home = workdir / (name + ("-nolinks" if without_links else "-links"))
    if REUSE and (home / "kb.yaml").exists():
        if not meaning:
            os.environ["KB_SEMANTIC"] = "off"
        try:
            return KnowledgeBase.open(home)
        finally:
            os.environ.pop("KB_SEMANTIC", None)
    if home.exists():
        shutil.rmtree(home)  # only ever a folder this script named under --workdir
    # Meaning stays on in this process (the similarities need the model); only the
    # build read for the truth is made without it.
    if not meaning:
        os.environ["KB_SEMANTIC"] = "off"
    try:
        return build_kb(home, source, without_links)
    finally:
        os.environ.pop("KB_SEMANTIC", None)


def truth_pairs(kb: KnowledgeBase) -> dict[str, set[str]]:
    """Each note's partners by its author's links, both ways, hubs left out."""
    store = kb._store
    paths = {note.id: note.path for note in kb.note_choices()}
    partners: dict[str, set[str]] = {}
    for edge in store.links.graph_edges():
        a, b = paths.get(edge.source_id), paths.get(edge.target_id)
        if a and b and a != b:
            partners.setdefault(a, set()).add(b)
            partners.setdefault(b, set()).add(a)
    hubs = {path for path, found in partners.items() if len(found) > HUB}
    return {
        path: found - hubs for path, found in partners.items() if path not in hubs and found - hubs
    }


class NoteSimilarity:
    """Note-to-note similarity from the stored passage vectors."""

    def __init__(self, kb: KnowledgeBase) -> None:
        meaning = kb.by_meaning.configured()
        if meaning is None:
            raise SystemExit("meaning is off or its extra is not installed")
        self.embedder = meaning.embedder()
        # Every passage as a float32 row (the exact scan's matrix, whatever the size).
        self.index = VectorIndex(kb._store, self.embedder.dimensions, exact_at_most=2**62)
        assert self.index.matrix is not None
        self.ids = {note.path: note.id for note in kb.note_choices()}
        self.paths = {note_id: path for path, note_id in self.ids.items()}
        self.rows: dict[int, np.ndarray] = {}
        for row, note_id in enumerate(self.index.notes.tolist()):
            self.rows.setdefault(note_id, []).append(row)  # type: ignore[arg-type]
        self.rows = {k: np.asarray(v) for k, v in self.rows.items()}

    def ranked(self, path: str, how: str) -> list[str]:
        note_id = self.ids[path]
        mine = self.rows.get(note_id)
        if mine is None:
            return []
        scores = self.index.matrix @ self.index.matrix[mine].T  # passages x mine
        per_note: dict[int, float] = {}
        for other, rows in self.rows.items():
            if other == note_id:
                continue
            block = scores[rows]
            per_note[other] = (
                float(block.max()) if how == "best" else float(block.max(axis=0).mean())
            )
        order = sorted(per_note, key=lambda other: -per_note[other])[:DEPTH]
        return [self.paths[other] for other in order]

    def line_against(
        self, source_title: str, line: str, target: str, title: str
    ) -> tuple[float, float]:
        """A mention's line (embedded as a passage is) against the target's nearest
        passage and against its title alone."""
        texts = [f"{source_title}\n{line}", title]
        line_vector, title_vector = self.embedder.encode_passages(texts)
        rows = self.rows.get(self.ids[target])
        passage = float((self.index.matrix[rows] @ line_vector).max()) if rows is not None else 0.0
        return passage, float(title_vector @ line_vector)


def scores(ranked: list[str], partners: set[str]) -> tuple[float, float]:
    recall = len(set(ranked[:TOP]) & partners) / min(TOP, len(partners))
    first = next((rank for rank, path in enumerate(ranked[:DEPTH], 1) if path in partners), 0)
    return recall, 1 / first if first else 0.0


def load_before(rev: str) -> ModuleType | None:
    """kb/links/related.py as it was at ``rev`` (it imports today's kb for the rest)."""
    try:
        source = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{rev}:kb/links/related.py"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    path = Path(tempfile.mkdtemp()) / "related_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("related_before", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["related_before"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class Rankings:
    """Each way of listing a note's related notes, by path."""

    def __init__(self, kb: KnowledgeBase, before: ModuleType | None) -> None:
        self.kb = kb
        self.before = before
        self.ids = {note.path: note.id for note in kb.note_choices()}
        self.paths = {note_id: path for path, note_id in self.ids.items()}
        self.folders = {r.name for r in kb.config.roots} | {r.path.name for r in kb.config.roots}
        meaning = kb.by_meaning.configured()
        index = vector_index(kb._store, meaning.embedder()) if meaning else None
        self.index = index

    def near(self, note_id: int, count: int, hubness: float = 0.0):
        if self.index is None:
            return None
        return neighbourhood(self.index, note_id, count, hubness)

    def ranked(self, path: str, method: str) -> list[str]:
        note_id = self.ids[path]
        store, engine = self.kb._store, self.kb.engine()
        if method == "before":
            if self.before is None:
                return []
            found = self.before.related(store, engine, note_id, DEPTH)
        elif method == "today":
            found = related_module.related(store, engine, note_id, DEPTH, None, self.folders)
        elif method == "combined":
            found = related_module.related(store, engine, note_id, DEPTH, self.near, self.folders)
        else:
            around = self.near(note_id, DEPTH)
            if around is None:
                return []
            key = (lambda n: -n.note) if method == "meaning-note" else (lambda n: -n.pair)
            return [self.paths[n.note_id] for n in sorted(around.near, key=key)[:DEPTH]]
        return [r.path for r in found]

    def genre_words(self) -> list[str]:
        found: set[str] = set()
        for note_id in self.paths:
            found |= related_module._genre_words_of(self.kb._store, note_id, self.folders)
        return sorted(found)

    def reasons(self, path: str) -> list[tuple[str, str]]:
        note_id = self.ids[path]
        store, engine = self.kb._store, self.kb.engine()
        found = related_module.related(store, engine, note_id, TOP, self.near, self.folders)
        return [(r.path, r.reason) for r in found]


def related_quality(
    rankings: Rankings, truth: dict[str, set[str]], methods: tuple[str, ...] = METHODS
) -> dict[str, Any]:
    totals = {method: [0.0, 0.0] for method in methods}
    judged = 0
    for path, partners in sorted(truth.items()):
        if path not in rankings.ids:
            continue
        judged += 1
        for method in methods:
            recall, reciprocal = scores(rankings.ranked(path, method), partners)
            totals[method][0] += recall
            totals[method][1] += reciprocal
    return {
        "notes": judged,
        "pairs": sum(len(p) for p in truth.values()) // 2,
        **{
            method: {"recall@5": t[0] / max(judged, 1), "mrr@10": t[1] / max(judged, 1)}
            for method, t in totals.items()
        },
    }


def judged_truth(pairs: list[dict]) -> dict[str, set[str]]:
    truth: dict[str, set[str]] = {}
    for pair in pairs:
        truth.setdefault(pair["a"], set()).add(pair["b"])
        truth.setdefault(pair["b"], set()).add(pair["a"])
    return truth


def judged_quality(
    rankings: Rankings, pairs: list[dict], methods: tuple[str, ...] = METHODS
) -> dict[str, Any]:
    """Recall@5 and first-is-a-partner over the notes with judged partners, and the goals."""
    truth = judged_truth(pairs)
    out: dict[str, Any] = {"notes": len(truth), "pairs": len(pairs)}
    for method in methods:
        lists = {path: rankings.ranked(path, method) for path in truth}

        def first_both(pair: dict, lists: dict[str, list[str]] = lists) -> bool:
            a, b = pair["a"], pair["b"]
            return lists[a][:1] == [b] and lists[b][:1] == [a]

        recall = sum(scores(lists[p], truth[p])[0] for p in truth) / len(truth)
        first = sum(bool(lists[p][:1]) and lists[p][0] in truth[p] for p in truth) / len(truth)
        top5 = [p for p in pairs if p.get("goal") == "top5"]
        both = [p for p in pairs if p.get("goal") == "first-both"]
        out[method] = {
            "recall@5": recall,
            "first": first,
            "top5_goal": f"{sum(p['b'] in lists[p['a']][:TOP] for p in top5)}/{len(top5)}",
            "first_both_goal": f"{sum(map(first_both, both))}/{len(both)}",
            "missed": [[p["a"], p["b"]] for p in top5 if p["b"] not in lists[p["a"]][:TOP]],
        }
    return out


def with_weights(values: tuple[float, ...], run: Callable[[], Any]) -> Any:
    saved = [getattr(related_module, name) for name in FITTED]
    for name, value in zip(FITTED, values, strict=True):
        setattr(related_module, name, value)
    try:
        return run()
    finally:
        for name, value in zip(FITTED, saved, strict=True):
            setattr(related_module, name, value)


Objective = Callable[[], tuple[float, float]]


def fit(folds: dict[str, list[Objective]]) -> dict[str, Any]:
    """Weights chosen on every corpus but one (its judged pairs and its authors' links:
    recall@5 plus the first partner's rank), reported on the one left out."""

    measured: dict[tuple[tuple[float, ...], str], tuple[float, float]] = {}

    def one(values: tuple[float, ...], name: str) -> tuple[float, float]:
        if (values, name) not in measured:  # each corpus once per point of the grid
            found = with_weights(values, lambda: [objective() for objective in folds[name]])
            measured[values, name] = (sum(f[0] for f in found), sum(f[1] for f in found))
        return measured[values, name]

    def total_at(values: tuple[float, ...], names: list[str]) -> tuple[float, float]:
        found = [one(values, name) for name in names]
        return (sum(f[0] for f in found), sum(f[1] for f in found))

    def chosen(train: list[str]) -> tuple[float, ...]:
        return max(GRID, key=lambda values: sum(total_at(values, train)))

    out: dict[str, Any] = {}
    shipped = tuple(getattr(related_module, name) for name in FITTED)
    for held_out in folds:
        train = [name for name in folds if name != held_out]
        best = chosen(train)
        out[held_out] = {
            "chosen on": train,
            "weights": dict(zip(FITTED, best, strict=True)),
            "held-out": total_at(best, [held_out]),
            "shipped weights": dict(zip(FITTED, shipped, strict=True)),
            "shipped": total_at(shipped, [held_out]),
            "today": total_at((0.0, 0.0, 0.0, 0.0), [held_out]),
        }
    return out


def auc(true: list[float], false: list[float]) -> float:
    """The chance that a true pair's similarity is above a false one's (ties: half)."""
    if not true or not false:
        return float("nan")
    wins = sum((t > f) + 0.5 * (t == f) for t in true for f in false)
    return wins / (len(true) * len(false))


def mention_quality(
    kb_links: KnowledgeBase, near: NoteSimilarity, judged: list[dict]
) -> dict[str, Any]:
    titles = {note.path: note.title for note in kb_links.note_choices()}
    reported = set()
    for note in kb_links.note_choices():
        for mention in kb_links.links.mentions(note.id):
            reported.add((mention.path, note.path))
    rows = []
    for pair in judged:
        if pair["target"] not in near.ids:
            continue
        passage, title = near.line_against(
            titles.get(pair["source"], ""),
            pair.get("text", ""),
            pair["target"],
            titles.get(pair["target"], ""),
        )
        rows.append(
            {
                "pair": (pair["source"], pair["target"]),
                "mention": bool(pair["mention"]),
                "passage": passage,
                "title": title,
                "reported": (pair["source"], pair["target"]) in reported,
            }
        )
    out: dict[str, Any] = {"judged": len(rows)}
    for key in ("passage", "title"):
        true = [r[key] for r in rows if r["mention"]]
        false = [r[key] for r in rows if not r["mention"]]
        out[f"auc_{key}"] = auc(true, false)
        kept = [r for r in rows if r["reported"]]
        true_total = sum(r["mention"] for r in rows)
        base_right = sum(r["mention"] for r in kept)
        out["reported"] = len(kept)
        out["precision"] = base_right / len(kept) if kept else 1.0
        out["recall"] = base_right / true_total if true_total else 1.0
        best = (out["precision"], out["recall"], None)
        for cut in sorted({r[key] for r in kept}):
            left = [r for r in kept if r[key] >= cut]
            right = sum(r["mention"] for r in left)
            precision = right / len(left) if left else 1.0
            recall = right / true_total if true_total else 1.0
            # the best cut: precision up without losing more than 2% of the true ones
            if recall >= out["recall"] - 0.02 and precision > best[0]:
                best = (precision, recall, cut)
        out[f"best_cut_{key}"] = {"precision": best[0], "recall": best[1], "at": best[2]}
    return out


def print_related(label: str, found: dict[str, Any]) -> None:
    print(
        f"{label:28} {found['notes']:5} {found['pairs']:5} "
        + " ".join(f"{found[m]['recall@5']:7.3f}/{found[m]['mrr@10']:.3f}" for m in METHODS),
        flush=True,
    )


def print_judged(label: str, found: dict[str, Any]) -> None:
    print(f"{label}: {found['notes']} notes, {found['pairs']} pairs")
    for method in METHODS:
        m = found[method]
        print(
            f"  {method:13} recall@5 {m['recall@5']:.3f}  first {m['first']:.3f}  "
            f"lecture lists post {m['top5_goal']}  Redis pair first both ways "
            f"{m['first_both_goal']}",
            flush=True,
        )
        if method == "combined":
            for lecture, post in m["missed"]:
                print(f"    missed: {lecture} -> {post}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kb-related-meaning"))
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA), default=list(CORPORA))
    parser.add_argument("--before", default="main", help="the git revision 'before' is read at")
    parser.add_argument("--fit", action="store_true", help="fit the meaning weights (2 folds)")
    parser.add_argument("--no-mentions", action="store_true")
    parser.add_argument(
        "--reuse", action="store_true", help="open the knowledge bases a previous run built"
    )
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    global REUSE  # noqa: PLW0603 - one switch for build(), set once here
    REUSE = args.reuse
    args.workdir.mkdir(parents=True, exist_ok=True)
    before = load_before(args.before)
    judged = json.loads(JUDGED_MENTIONS.read_text(encoding="utf-8"))
    pairs = json.loads(JUDGED_RELATED.read_text(encoding="utf-8"))
    results: dict[str, Any] = {}
    folds: dict[str, list[Objective]] = {}
    print("judged pairs on notes cut to 600 characters (benchmarks/links_quality/related.json)")
    for name in [n for n in args.corpora if n in pairs and not n.startswith("_")]:
        source = CORPORA[name]
        if not source.is_dir():
            print(f"{name}: skipped, {source} is absent")
            continue
        cut = args.workdir / f"{name}-cut-source"
        if not (args.reuse and cut.is_dir()):
            cut_folder(source, cut)
        for without_links in (True, False):
            kb = build(args.workdir, f"{name}-cut", cut, without_links=without_links, meaning=True)
            rankings = Rankings(kb, before)
            label = f"{name} (cut, {'links removed' if without_links else 'links kept'})"
            found = judged_quality(rankings, pairs[name])
            results[f"judged/{label}"] = found
            print_judged(label, found)
            print(f"  genre words: {', '.join(rankings.genre_words())}")
            if without_links:

                def judged_objective(r: Rankings = rankings, p: list = pairs[name]) -> Any:
                    found = judged_quality(r, p, ("combined",))["combined"]
                    return (found["recall@5"], found["first"])

                folds.setdefault(name, []).append(judged_objective)
                if name == "notes":
                    for path in ("engineering/redis-study.md", "cs336/lecture-03-gpus.md"):
                        for other, reason in rankings.reasons(path):
                            print(f"    {path} -> {other}: {reason}")
    header = f"{'corpus':28} {'notes':>5} {'pairs':>5} " + " ".join(f"{m:>13}" for m in METHODS)
    print("related: recall@5/MRR@10 against the authors' own links, links removed")
    print(header)
    for name in args.corpora:
        source = CORPORA[name]
        if not source.is_dir():
            print(f"{name:28} skipped: {source} is absent")
            continue
        with_links = build(args.workdir, name, source, without_links=False, meaning=False)
        truth = truth_pairs(with_links)
        without = build(args.workdir, name, source, without_links=True, meaning=True)
        rankings = Rankings(without, before)
        related = related_quality(rankings, truth)
        results[f"related/{name}"] = related

        def links_objective(r: Rankings = rankings, t: dict = truth) -> Any:
            found = related_quality(r, t, ("combined",))["combined"]
            return (found["recall@5"], found["mrr@10"])

        if related["notes"]:
            folds.setdefault(name, []).append(links_objective)
        if related["notes"]:
            print_related(name, related)
        else:
            print(f"{name:28} no note links to another", flush=True)
        if name in judged and not args.no_mentions:
            near = NoteSimilarity(without)
            mentions = mention_quality(with_links, near, judged[name])
            results[f"mentions/{name}"] = mentions
            print(
                f"  mentions: {mentions['judged']} judged, kb reports {mentions['reported']}"
                f" (precision {mentions['precision']:.3f}, recall {mentions['recall']:.3f});"
                f" AUC true vs false: line~passage {mentions['auc_passage']:.3f},"
                f" line~title {mentions['auc_title']:.3f}; best cut (<=2% recall lost):"
                f" passage {mentions['best_cut_passage']}, title {mentions['best_cut_title']}",
                flush=True,
            )
    if args.fit and len(folds) >= 2:
        fitted = fit(folds)
        results["fit"] = fitted
        print("fitted on all corpora but one, summed (recall@5, first or MRR) on the one left out:")
        for held_out, found in fitted.items():
            print(
                f"  held out {held_out}: chose {found['weights']} -> {found['held-out']};"
                f" the shipped {found['shipped weights']} -> {found['shipped']};"
                f" without meaning {found['today']}"
            )
    if args.json_out:
        args.json_out.write_text(json.dumps(results, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
