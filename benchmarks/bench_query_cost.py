"""Time the costliest legal queries on both engines against their costliest single term.

    python benchmarks/bench_query_cost.py [--sizes 10000] [--workdir /tmp/kb-bench]
                                          [--engines-workdir /tmp/kb-bench-engines]
                                          [--repeat 3] [--seed 1] [--json-out FILE]

A query may be up to 500 characters long. This script builds, from the corpus' most frequent
words, the worst shapes of such a query found so far (many one-letter words, one word
repeated, many prefixes, deep OR, many Chinese words or single characters, many phrases,
negations and filters, one long glued run) and times each through `KnowledgeBase.search`
(parse, engine, snippets) on the FTS5 and whoosh copies bench_engines.py keeps. Beside each
it times every distinct term of the shape alone and reports the shape's time as a ratio to
the costliest of them, measured in the same run. Goals at 10,000 notes: no shape over 1 s on
FTS5, and on whoosh none over twice its costliest single term. A shape kb refuses (too many
different terms) is shown with its one-line message instead.
"""

from __future__ import annotations

import argparse
import statistics
import string
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_engines import ENGINES, check_whoosh_runs, prepare_copies, progress
from common import (
    GOAL_NOTES,
    BenchError,
    add_repeat,
    bench_parser,
    check_kb_runs,
    corpus_dir,
    folder_bytes,
    header_lines,
    not_judged,
    open_kb,
    parse_bench_args,
    run_ingest,
    run_sizes,
    show_seconds,
    status,
    table_heading,
    warning_lines,
)
from generate_corpus import ALL_EN, EN_SAMPLER, GLOBAL_TAGS, TOPICS, ZH_SAMPLER

GOAL_FTS5_SECONDS = 1.0
GOAL_WHOOSH_RATIO = 2.0
MAX_CHARS = 500  # kb.query.MAX_QUERY_CHARS
SLOW_SECONDS = 2.0  # a run this slow is not repeated: one is enough to judge it


@dataclass(frozen=True)
class Shape:
    name: str
    text: str
    singles: tuple[str, ...]  # each distinct term as a query of its own


@dataclass
class Timing:
    seconds: float | None  # median of the rounds; None when kb refused the query
    refused: str = ""  # kb's one-line message
    single_seconds: float = 0.0  # the costliest single term
    single_term: str = ""

    @property
    def ratio(self) -> float | None:
        if self.seconds is None or not self.single_seconds:
            return None
        return self.seconds / self.single_seconds


@dataclass
class ShapeResult:
    name: str
    chars: int
    distinct: int
    text: str
    engines: dict[str, Timing] = field(default_factory=dict)


@dataclass
class SizeResult:
    notes: int
    megabytes: float
    max_terms: int | None
    shapes: list[ShapeResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------


def fill(
    terms: list[str], joiner: str = " ", limit: int | None = None, room: int = MAX_CHARS
) -> tuple[str, list[str]]:
    """As many of ``terms`` (cycled, at most ``limit`` distinct) as fit in ``room``."""
    distinct = list(dict.fromkeys(terms))[:limit]
    used: list[str] = []
    text = ""
    while True:
        term = distinct[len(used) % len(distinct)]
        longer = f"{text}{joiner}{term}" if text else term
        if len(longer) > room:
            return text, list(dict.fromkeys(used))
        text = longer
        used.append(term)


def plain_words(words: list[str]) -> list[str]:
    # One token each: no spaces and nothing the query language reads (`:`, `*`, quotes).
    return [w for w in words if w.isalnum() and w.isascii()]


def shapes(max_terms: int | None, expanding: int = 1) -> list[Shape]:
    """The worst query shapes, each at most MAX_CHARS and within kb's cap of max_terms
    different terms, a prefix or lone Chinese character counting ``expanding``."""
    en = plain_words(EN_SAMPLER.words)
    zh = [w for w in ZH_SAMPLER.words if len(w) == 2]
    chars = list(dict.fromkeys(ch for w in ZH_SAMPLER.words for ch in w))
    pairs = [w for w in ALL_EN if w.count(" ") == 1 and w.replace(" ", "").isalnum()]
    tags = list(dict.fromkeys([t for topic in TOPICS for t in topic.tags] + list(GLOBAL_TAGS)))
    stems = list(dict.fromkeys(w[:2].lower() for w in en if len(w) > 3))
    letters = list(string.ascii_lowercase)
    found: list[Shape] = []

    def add(
        name: str, terms: list[str], joiner: str = " ", template: str = "{}", weight: int = 1
    ) -> None:
        # A term that expands (a prefix, a lone Chinese character) uses more of kb's cap.
        limit = max_terms // weight if max_terms else None
        text, used = fill([template.format(t) for t in terms], joiner, limit)
        found.append(Shape(name, text, tuple(u.lstrip("-") for u in used)))

    add("one-letter words", letters)
    add("one-letter words, OR", letters, " OR ")
    add("one word repeated (显存)", ["显存"])
    add(f"one word repeated ({en[0]})", [en[0]])
    add("many Latin words", en)
    add("many Latin words, OR", en, " OR ")
    add("many prefixes", stems, template="{}*", weight=expanding)
    add("many prefixes, OR", stems, " OR ", template="{}*", weight=expanding)
    add("many Chinese words", zh)
    add("many Chinese words, OR", zh, " OR ")
    add("many single CJK characters", chars, weight=expanding)
    add("many single CJK characters, OR", chars, " OR ", weight=expanding)
    add("many phrases", pairs, template='"{}"')
    add("many phrases, OR", pairs, " OR ", template='"{}"')
    room = MAX_CHARS - len(zh[0]) - 1
    negated, used = fill([f"-{w}" for w in en[1:]], " ", (max_terms or room) - 1, room)
    found.append(Shape("many negations", f"{zh[0]} {negated}", (zh[0], *used)))
    add("many tag filters, OR", tags, " OR ", template="tag:{}")
    add("many path filters, OR", stems, " OR ", template="path:{}")
    # Nested 12 deep (the parser's limit): ( a OR ( b OR ( ... ) ) ) with common words.
    deep = en[:12]
    text = deep[-1]
    for word in reversed(deep[:-1]):
        text = f"({word} OR {text})"
    found.append(Shape("deep OR, 12 levels", text, tuple(deep)))
    glued = ("".join(zh) * 4)[:MAX_CHARS]
    found.append(Shape("one long Chinese run", glued, tuple(zh[:max_terms])))
    phrase = " ".join(letters * 20)[: MAX_CHARS - 3]
    found.append(Shape("one long phrase of one-letter words", f'"{phrase}"', tuple(letters)))
    phrase, used = fill(en, room=MAX_CHARS - 2)
    found.append(Shape("one long phrase of common words", f'"{phrase}"', tuple(used)))
    compound = ".".join(letters * 20)[: MAX_CHARS - 1]
    found.append(Shape("one word of many parts (a.b.c...)", compound, tuple(letters)))
    many, _ = fill([f"{s}*" for s in stems])
    found.append(Shape("too many prefixes (refused?)", many, ()))
    return found


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------


def time_search(kb: Any, text: str, rounds: int) -> tuple[float | None, str]:
    """Median seconds of kb.search(text) over rounds (one if the first is slow)."""
    from kb.errors import UsageError

    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        try:
            kb.search(text, limit=20)
        except UsageError as error:
            return None, str(error)
        times.append(time.perf_counter() - start)
        if times[0] > SLOW_SECONDS:
            break
    return statistics.median(times), ""


def count_terms(shape: Shape) -> int:
    """The different terms kb finds in the query (the single terms timed, for a kb that
    cannot count them or refuses the query)."""
    from kb.errors import UsageError
    from kb.query.syntax import parse_query

    try:
        from kb.query.syntax import distinct_terms

        return len(distinct_terms(parse_query(shape.text).root))
    except (ImportError, UsageError):
        return len(shape.singles)


def ensure_index(kb_dir: Path, engine: str, notes: int, warnings: list[str]) -> None:
    """Bring the copy's index up to date, building it with this engine when missing."""
    if (kb_dir / "index" / "kb.sqlite").exists():
        _, counts = run_ingest(kb_dir, "--json")
    else:
        progress(f"{engine}: full ingest --rebuild --engine {engine} ...")
        _, counts = run_ingest(kb_dir, "--rebuild", "--engine", engine, "--json")
    indexed = (counts or {}).get("added", 0) + (counts or {}).get("unchanged", 0)
    if indexed != notes:
        warnings.append(f"{engine}: ingest counted {indexed} notes, expected {notes}")


def bench_size(args: argparse.Namespace, notes: int) -> SizeResult:
    from kb.query.syntax import MAX_QUERY_CHARS

    if MAX_QUERY_CHARS != MAX_CHARS:
        raise BenchError(f"kb allows {MAX_QUERY_CHARS} characters; this script builds {MAX_CHARS}")
    max_terms = getattr(sys.modules["kb.query.syntax"], "MAX_TERMS", None)
    expanding = getattr(sys.modules["kb.query.syntax"], "EXPANDING_COST", 1)
    dirs = prepare_copies(args, notes)
    source = corpus_dir(args.workdir, notes, args.seed)
    result = SizeResult(notes, folder_bytes(source / "notes") / 1e6, max_terms)
    kbs = {}
    for engine, kb_dir in dirs.items():
        ensure_index(kb_dir, engine, notes, result.warnings)
        kbs[engine] = open_kb(kb_dir)
        if kbs[engine].engine().name != engine:
            raise BenchError(f"{kb_dir} searches with {kbs[engine].engine().name}, not {engine}")
    for shape in shapes(max_terms, expanding):
        distinct = count_terms(shape)
        row = ShapeResult(shape.name, len(shape.text), distinct, shape.text)
        for engine, kb in kbs.items():
            progress(f"{engine}: {shape.name} ...")
            seconds, refused = time_search(kb, shape.text, args.repeat)
            timing = Timing(seconds, refused)
            for single in shape.singles:
                single_seconds, _ = time_search(kb, single, args.repeat)
                if single_seconds is not None and single_seconds > timing.single_seconds:
                    timing.single_seconds, timing.single_term = single_seconds, single
            row.engines[engine] = timing
        result.shapes.append(row)
    return result


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def verdict(engine: str, timing: Timing, notes: int) -> bool | None:
    if timing.seconds is None or notes > GOAL_NOTES:
        return None
    if engine == "fts5":
        return timing.seconds <= GOAL_FTS5_SECONDS
    ratio = timing.ratio
    return None if ratio is None else ratio <= GOAL_WHOOSH_RATIO


def cell(engine: str, timing: Timing, notes: int) -> str:
    if timing.seconds is None:
        return "refused (see below)"
    ratio = f"x{timing.ratio:.1f}" if timing.ratio is not None else "-"
    single = show_seconds(timing.single_seconds) if timing.single_term else "-"
    judged = status(verdict(engine, timing, notes))
    return f"{show_seconds(timing.seconds):>9} {single:>9} {ratio:>6} {judged}"


def format_table(result: SizeResult) -> str:
    lines = [table_heading(result.notes, result.megabytes)]
    cap = f"at most {result.max_terms}" if result.max_terms else "no cap on"
    lines.append(f"  {cap} different terms per query; times are medians of kb.search")
    header = f"{'shape':36} {'chars':>5} {'terms':>5}  " + "  ".join(
        f"{e + ': query  1 term  ratio':<32}" for e in ENGINES
    )
    lines.extend(header_lines(header))
    for row in result.shapes:
        cells = "  ".join(f"{cell(e, row.engines[e], result.notes):<32}" for e in ENGINES)
        lines.append(f"{row.name:36} {row.chars:>5} {row.distinct:>5}  {cells}")
    refused = {t.refused for row in result.shapes for t in row.engines.values() if t.refused}
    lines.extend(f"  refused: {message}" for message in sorted(refused))
    lines.append(
        f"  goals: FTS5 under {GOAL_FTS5_SECONDS:.0f} s; whoosh at most "
        f"{GOAL_WHOOSH_RATIO:.0f}x the costliest single term of the same query"
    )
    lines.extend(not_judged(result.notes))
    lines.extend(warning_lines(result.warnings))
    return "\n".join(lines)


def size_entry(result: SizeResult) -> dict:
    entry = asdict(result)
    for row, shape in zip(result.shapes, entry["shapes"], strict=True):
        for engine, timing in row.engines.items():
            shape["engines"][engine]["ratio"] = timing.ratio
    return entry


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = bench_parser(__doc__, "the shared corpora (read only here, generated when missing)")
    parser.set_defaults(sizes=[GOAL_NOTES])
    parser.add_argument(
        "--engines-workdir",
        type=Path,
        default=Path(tempfile.gettempdir(), "kb-bench-engines"),
        help="the per-engine copies bench_engines.py keeps",
    )
    add_repeat(parser, 3, "timed runs of each query; the median is reported")
    return parse_bench_args(parser, argv, seed_help="corpus seed (default 1)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return run_sizes(
        args,
        bench_size,
        format_table,
        size_entry,
        checks=(check_kb_runs, check_whoosh_runs),
        folder=args.engines_workdir,
    )


if __name__ == "__main__":
    sys.exit(main())
