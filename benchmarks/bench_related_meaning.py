"""Does meaning add to kb's word evidence for related notes, or tell a true unlinked
mention from an everyday use of a short title? (issue 26, item 4)

    python benchmarks/bench_related_meaning.py [--workdir /tmp/kb-related-meaning]
                                               [--corpora NAME ...] [--json-out FILE]

Related notes. The judged pairs are the ones the notes' own authors made: every resolved
link between two notes of a corpus kb was never shown (../shared/corpora/) and of the
bundled notes, taken both ways. A note linked to or from more than HUB notes is a table
of contents, not a judgment of relatedness: it is left out on both sides. Each corpus is
built twice: with its links (read for the truth only, meaning off) and on a copy with
every explicit link removed (the link's text kept), embedded with the bundled model, so
that no ranking sees the links it is judged by. For every note with a judged partner:

- words: ``kb.related`` as it ships (distinctive words, title words, tags, series);
- meaning, best pair: other notes by the nearest pair of passages (one of this note's,
  one of theirs), the reason a reader could check ("similar passage: ...");
- meaning, coverage: by the mean, over this note's passages, of each one's nearest
  passage in the other note;
- fused: words and best-pair meaning by reciprocal rank (k = 60), equal weight;
- words, then meaning: the words' list as it is, meaning's notes after it where the words
  found fewer than five.

These five were fixed before the first run; nothing here was tuned on the pairs.
Reported: recall@5 (the share of a note's partners in its first five, of at most five)
and MRR@10 of the first partner, averaged over the notes.

Mentions. benchmarks/links_quality/mentions.json judges (source, target) pairs where the
source names the target's title: ``mention`` true when a reader wants it listed. For each
judged pair, the line that names it (its ``text``, with the source's title in front, as
passages are embedded) against the target's passages (the nearest one), and the same
line against the target's title alone. Reported: how well each similarity separates true
from false mentions (AUC: 0.5 is chance), and what dropping kb's reported mentions below
a similarity would do to their precision and recall, at the similarities of the judged
pairs themselves (the best such cut is an upper bound, chosen on the set it is judged by).

Needs the semantic extra (``pip install 'kb-notes[semantic]'``); corpora that are absent
are skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
from bench_links_quality import CORPORA as LINKS_CORPORA  # noqa: E402

from kb.knowledge_base import KnowledgeBase  # noqa: E402
from kb.meaning.index import VectorIndex  # noqa: E402
from tests.integration.test_connections import build_kb  # noqa: E402

# bench_links_quality's corpora (the ones its mentions are judged on) and one more
CORPORA = {**LINKS_CORPORA, "hugo-site-zh": REPO.parent / "shared" / "corpora" / "hugo-site-zh"}
JUDGED_MENTIONS = REPO / "benchmarks" / "links_quality" / "mentions.json"
HUB = 15  # links to or from more notes than this: a table of contents
TOP = 5
DEPTH = 10
RRF_K = 60
METHODS = ("words", "meaning-best-pair", "meaning-coverage", "fused-rrf", "words-then-meaning")


def build(workdir: Path, name: str, source: Path, *, without_links: bool, meaning: bool):
    home = workdir / (name + ("-nolinks" if without_links else "-links"))
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
        meaning = kb.meaning()
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


def rrf(*lists: list[str]) -> list[str]:
    score: dict[str, float] = {}
    for ranked in lists:
        for rank, path in enumerate(ranked):
            score[path] = score.get(path, 0.0) + 1 / (RRF_K + rank + 1)
    return sorted(score, key=lambda path: -score[path])[:DEPTH]


def then(first: list[str], after: list[str]) -> list[str]:
    if len(first) >= TOP:
        return first[:DEPTH]
    return list(dict.fromkeys([*first, *after]))[:DEPTH]


def scores(ranked: list[str], partners: set[str]) -> tuple[float, float]:
    recall = len(set(ranked[:TOP]) & partners) / min(TOP, len(partners))
    first = next((rank for rank, path in enumerate(ranked[:DEPTH], 1) if path in partners), 0)
    return recall, 1 / first if first else 0.0


def related_quality(kb: KnowledgeBase, truth: dict[str, set[str]]) -> dict[str, Any]:
    near = NoteSimilarity(kb)
    totals = {method: [0.0, 0.0] for method in METHODS}
    judged = 0
    examples = []
    for path, partners in sorted(truth.items()):
        note = kb.find_note(path)
        if note is None:
            continue
        judged += 1
        words = [r.path for r in kb.related(note.id, DEPTH)]
        best = near.ranked(path, "best")
        lists = {
            "words": words,
            "meaning-best-pair": best,
            "meaning-coverage": near.ranked(path, "coverage"),
            "fused-rrf": rrf(words, best),
            "words-then-meaning": then(words, best),
        }
        for method, ranked in lists.items():
            recall, reciprocal = scores(ranked, partners)
            totals[method][0] += recall
            totals[method][1] += reciprocal
        gained = [p for p in best[:TOP] if p in partners and p not in words[:TOP]]
        lost = [p for p in words[:TOP] if p in partners and p not in best[:TOP]]
        if gained or lost:
            examples.append({"note": path, "meaning only": gained, "words only": lost})
    return {
        "notes": judged,
        "pairs": sum(len(p) for p in truth.values()) // 2,
        **{
            method: {"recall@5": t[0] / max(judged, 1), "mrr@10": t[1] / max(judged, 1)}
            for method, t in totals.items()
        },
        "examples": examples,
    }


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
        for mention in kb_links.mentions(note.id):
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kb-related-meaning"))
    parser.add_argument("--corpora", nargs="+", choices=list(CORPORA), default=list(CORPORA))
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    judged = json.loads(JUDGED_MENTIONS.read_text(encoding="utf-8"))
    results: dict[str, Any] = {}
    header = f"{'corpus':16} {'notes':>5} {'pairs':>5} " + " ".join(f"{m:>22}" for m in METHODS)
    print("related: recall@5 / MRR@10 against the authors' own links, links removed")
    print(header)
    for name in args.corpora:
        source = CORPORA[name]
        if not source.is_dir():
            print(f"{name:16} skipped: {source} is absent")
            continue
        with_links = build(args.workdir, name, source, without_links=False, meaning=False)
        truth = truth_pairs(with_links)
        without = build(args.workdir, name, source, without_links=True, meaning=True)
        related = related_quality(without, truth)
        results[f"related/{name}"] = related
        if related["notes"]:
            print(
                f"{name:16} {related['notes']:5} {related['pairs']:5} "
                + " ".join(
                    f"{related[m]['recall@5']:10.3f} / {related[m]['mrr@10']:.3f}" for m in METHODS
                ),
                flush=True,
            )
        else:
            print(f"{name:16} no note links to another", flush=True)
        if name in judged:
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
    if args.json_out:
        args.json_out.write_text(json.dumps(results, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
