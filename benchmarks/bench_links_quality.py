"""The quality of kb's inferred connections, judged by reading the notes: precision and
recall of unlinked mentions, and whether related notes find the pairs a reader expects.

    python benchmarks/bench_links_quality.py [--workdir /tmp/kb-links-quality] [--json-out FILE]

Mentions are judged in benchmarks/links_quality/mentions.json: for each corpus, every
(source, target) pair where the source's text names the target's title or alias (any
case, width or spacing; names of weight >= 6 as kb counts them, see README), anywhere in
the file, with `mention` true when a reader would want it listed (prose that refers to the
note) and false otherwise, with why (front matter, code, a link's text or target, a common
phrase, a different article of the same title). Pairs whose source links to the target are
backlinks, not mentions, and are left out. Precision is over every mention kb reports (a
pair outside the judged set counts as unjudged, and against precision); recall over the
pairs judged true. jekyll-blog-zh and rust-blog-toml (257 and 754 notes) are judged by
pooling instead: every pair kb reported under the rules before and after the change that
added them (268 pairs, each read in its context), so their recall is against the true pairs
either rule set found.

Related pairs are the bundled notes' lecture -> post pairs (each post's `lecture:` key) in
the lecture's top 5 and the reverse, and the Redis study note and the compute-platform
note listing each other first, on a copy with every explicit link removed and with the
links kept. The bundled notes are in the repository; the other corpora are read from
../shared/corpora/ and skipped when absent.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kb.knowledge_base import KnowledgeBase  # noqa: E402
from tests.integration.test_connections import (  # noqa: E402
    COMPUTE_PLATFORM,
    REDIS_STUDY,
    build_kb,
    lecture_posts,
)

JUDGED = REPO / "benchmarks" / "links_quality" / "mentions.json"
CORPORA = {
    "notes": REPO / "notes",
    "advanced-java-zh": REPO.parent / "shared" / "corpora" / "advanced-java-zh",
    "foam-docs": REPO.parent / "shared" / "corpora" / "foam-docs",
    "jekyll-blog-zh": REPO.parent / "shared" / "corpora" / "jekyll-blog-zh",
    "rust-blog-toml": REPO.parent / "shared" / "corpora" / "rust-blog-toml",
}
GOAL_PRECISION = 0.95
GOAL_RECALL = 0.80


def build(workdir: Path, name: str, source: Path, without_links: bool = False) -> KnowledgeBase:
    home = workdir / (name + ("-nolinks" if without_links else ""))
    if home.exists():
        shutil.rmtree(home)  # only ever a folder this script named under --workdir
    return build_kb(home, source, without_links)


def mention_quality(kb: KnowledgeBase, judged: list[dict]) -> dict[str, object]:
    truth = {(j["source"], j["target"]): j["mention"] for j in judged}
    found = set()
    for note in kb.note_choices():
        for mention in kb.links.mentions(note.id):
            found.add((mention.path, note.path))
    right = {pair for pair in found if truth.get(pair)}
    wrong = sorted(pair for pair in found if truth.get(pair) is False)
    unjudged = sorted(pair for pair in found if pair not in truth)
    true_pairs = {pair for pair, is_mention in truth.items() if is_mention}
    missed = sorted(true_pairs - found)
    return {
        "reported": len(found),
        "judged_true": len(true_pairs),
        "precision": len(right) / len(found) if found else 1.0,
        "recall": len(right) / len(true_pairs) if true_pairs else 1.0,
        "false": [list(p) for p in wrong],
        "unjudged": [list(p) for p in unjudged],
        "missed": [list(p) for p in missed],
    }


def related_quality(kb: KnowledgeBase) -> dict[str, object]:
    def top(path: str) -> list[str]:
        return [r.path for r in kb.links.related(kb.find_note(path).id, 5)]

    pairs = lecture_posts()
    forward = [p for p in pairs if p[1] in top(p[0])]
    back = [p for p in pairs if p[0] in top(p[1])]
    redis = top(REDIS_STUDY)[:1] == [COMPUTE_PLATFORM] and top(COMPUTE_PLATFORM)[:1] == [
        REDIS_STUDY
    ]
    return {
        "pairs": len(pairs),
        "lecture_lists_post": len(forward),
        "post_lists_lecture": len(back),
        "redis_pair_first": redis,
        "missed": [list(p) for p in pairs if p not in forward],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/kb-links-quality"))
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    judged = json.loads(JUDGED.read_text(encoding="utf-8"))
    results: dict[str, object] = {}
    print(f"{'corpus':18} {'reported':>8} {'judged':>7} {'precision':>9} {'recall':>7}")
    for name, source in CORPORA.items():
        if not source.is_dir():
            print(f"{name:18} skipped: {source} is absent")
            continue
        kb = build(args.workdir, name, source)
        quality = mention_quality(kb, judged[name])
        results[f"mentions/{name}"] = quality
        print(
            f"{name:18} {quality['reported']:>8} {quality['judged_true']:>7} "
            f"{quality['precision']:>9.0%} {quality['recall']:>7.0%}"
        )
        for label in ("false", "unjudged", "missed"):
            for source_path, target in quality[label]:  # type: ignore[attr-defined]
                print(f"    {label}: {source_path} -> {target}")
    for without_links in (False, True):
        kb = build(args.workdir, "notes", CORPORA["notes"], without_links)
        quality = related_quality(kb)
        label = "links removed" if without_links else "links kept"
        results[f"related/{label}"] = quality
        print(
            f"related, bundled notes, {label}: lecture lists post in top 5 "
            f"{quality['lecture_lists_post']}/{quality['pairs']}, post lists lecture "
            f"{quality['post_lists_lecture']}/{quality['pairs']}, Redis pair first both ways: "
            f"{quality['redis_pair_first']}"
        )
        for lecture, post in quality["missed"]:  # type: ignore[attr-defined]
            print(f"    missed: {lecture} -> {post}")
    if args.json_out:
        args.json_out.write_text(json.dumps(results, ensure_ascii=False, indent=1), "utf-8")
    # The goal is on the judged set as a whole: every corpus's pairs pooled.
    pooled = [v for k, v in results.items() if k.startswith("mentions/")]
    reported = sum(int(m["reported"]) for m in pooled)  # type: ignore[call-overload]
    true = sum(int(m["judged_true"]) for m in pooled)  # type: ignore[call-overload]
    right = sum(
        round(float(m["precision"]) * int(m["reported"]))  # type: ignore[arg-type,call-overload]
        for m in pooled
    )
    precision = right / reported if reported else 1.0
    recall = right / true if true else 1.0
    ok = precision >= GOAL_PRECISION and recall >= GOAL_RECALL
    print(
        f"all corpora: {right} right of {reported} reported, {true} judged true: precision "
        f"{precision:.1%} (goal {GOAL_PRECISION:.0%}), recall {recall:.1%} "
        f"(goal {GOAL_RECALL:.0%}): {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
