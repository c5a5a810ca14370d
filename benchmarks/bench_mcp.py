"""Time `kb mcp` as an assistant meets it: the SDK's ClientSession over stdio_client, spawning
`python -m kb --kb DIR mcp` on the corpus bench_ingest.py uses.

    python benchmarks/bench_mcp.py [--sizes 10000] [--workdir /tmp/kb-bench]
                                   [--repeat 60] [--starts 5] [--seed 1] [--json-out FILE]

Measured per size, each against `python -c pass` timed in the same run (absolute times on a
shared machine drift; ratios taken seconds apart mostly do not):
  - server start to the first answer: spawning the process, the MCP handshake and one
    `search`, a fresh process each time (median of --starts);
  - round trips in one session, after an untimed warm-up pass: `search` over bench_search's
    query classes, `read_note` and `links` of notes spread over the whole corpus (p95 of
    --repeat calls each).
Goals (issue 25, at 10,000 notes): start to first answer < 1 s, search p95 < 60 ms,
read_note p95 < 30 ms, links p95 < 80 ms.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from common import (
    GOAL_NOTES,
    BenchError,
    bench_parser,
    corpus_for,
    folder_bytes,
    header_lines,
    kb_argv,
    not_judged,
    open_kb,
    parse_bench_args,
    percentile,
    run_ingest,
    run_sizes,
    run_startup,
    show_seconds,
    status,
    table_heading,
    warning_lines,
)

GOALS = {  # seconds
    "start_first_answer": 1.0,
    "search_p95": 0.060,
    "read_note_p95": 0.030,
    "links_p95": 0.080,
}
STARTUP_RUNS = 5  # of `python -c pass`, median


@dataclass
class Row:
    key: str
    name: str
    value: float  # seconds
    ratio: float | None = None  # to python -c pass
    goal: str = ""
    passed: bool | None = None
    note: str = ""


@dataclass
class SizeResult:
    notes: int
    notes_bytes: int
    startup_seconds: list[float] = field(default_factory=list)
    first_answer_seconds: list[float] = field(default_factory=list)
    calls: dict[str, list[float]] = field(default_factory=dict)
    facade_search: list[float] = field(default_factory=list)  # kb.search in this process
    errors: dict[str, int] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def session_params(kb_dir: Path) -> Any:
    from mcp.client.stdio import StdioServerParameters

    argv = kb_argv(kb_dir, "mcp")
    return StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(kb_dir))


async def first_answer(kb_dir: Path, query: str) -> float:
    """Seconds from spawning the server to the first search answer."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    start = time.perf_counter()
    async with (
        stdio_client(session_params(kb_dir)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        result = await session.call_tool("search", {"query": query})
        seconds = time.perf_counter() - start
        if result.is_error:
            raise BenchError(f"the first search failed: {result.content}")
    return seconds


async def round_trips(
    kb_dir: Path, calls: list[tuple[str, dict[str, Any]]], result: SizeResult
) -> None:
    """Each call once untimed (warm-up), then each timed, in one session."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    async with (
        stdio_client(session_params(kb_dir)) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for tool, arguments in calls:
            await session.call_tool(tool, arguments)
        for tool, arguments in calls:
            start = time.perf_counter()
            answer = await session.call_tool(tool, arguments)
            result.calls.setdefault(tool, []).append(time.perf_counter() - start)
            if answer.is_error:
                result.errors[tool] = result.errors.get(tool, 0) + 1


def picked_calls(kb_dir: Path, repeat: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    """`repeat` searches (bench_search's query classes in turn), and read_note and links
    of `repeat` notes spread over the corpus, interleaved so no tool runs in a streak."""
    from bench_search import QueryMaker

    queries = [q.text for q in QueryMaker(random.Random(seed)).queries(repeat)]
    kb = open_kb(kb_dir)
    try:
        choices = kb.note_choices()
    finally:
        kb.close()
    step = max(1, len(choices) // repeat)
    paths = [c.path for c in choices[::step][:repeat]]
    calls: list[tuple[str, dict[str, Any]]] = []
    for number in range(repeat):
        calls.append(("search", {"query": queries[number % len(queries)]}))
        calls.append(("read_note", {"note": paths[number % len(paths)]}))
        calls.append(("links", {"note": paths[(number * 7) % len(paths)]}))
    return calls


def facade_searches(kb_dir: Path, queries: list[str]) -> list[float]:
    """kb.search.run as the search tool calls it, without the protocol: what the round trip
    costs beyond kb itself, on the same machine minutes apart."""
    from kb.mcp.tools.read import SEARCH_LIMIT

    kb = open_kb(kb_dir)
    try:
        for query in queries:  # warm-up, as for the round trips
            kb.search(query, limit=SEARCH_LIMIT + 1)
        seconds = []
        for query in queries:
            start = time.perf_counter()
            kb.search(query, limit=SEARCH_LIMIT + 1)
            seconds.append(time.perf_counter() - start)
        return seconds
    finally:
        kb.close()


def bench_size(args: Any, notes: int) -> SizeResult:
    kb_dir, _ = corpus_for(args, notes)
    if not (kb_dir / "index").is_dir():
        print(f"no index in {kb_dir}: ingest ...", flush=True)
        run_ingest(kb_dir, "--json")
    result = SizeResult(notes, folder_bytes(kb_dir / "notes"))
    calls = picked_calls(kb_dir, args.repeat, args.seed)
    print(f"start to first answer x{args.starts} ...", flush=True)
    for number in range(args.starts):
        result.startup_seconds.append(run_startup())
        query = calls[3 * (number % args.repeat)][1]["query"]
        result.first_answer_seconds.append(asyncio.run(first_answer(kb_dir, query)))
    result.startup_seconds.extend(run_startup() for _ in range(STARTUP_RUNS - args.starts))
    print("the same searches through the facade in this process ...", flush=True)
    result.facade_search = facade_searches(kb_dir, [a["query"] for t, a in calls if t == "search"])
    print(f"round trips: {len(calls)} calls, after a warm-up pass ...", flush=True)
    asyncio.run(round_trips(kb_dir, calls, result))
    for tool, count in result.errors.items():
        result.warnings.append(f"{count} {tool} calls answered with a tool error")
    result.rows = rows(result)
    return result


def rows(result: SizeResult) -> list[Row]:
    judged = result.notes <= GOAL_NOTES
    startup = statistics.median(result.startup_seconds)
    out = [Row("python_pass", "python -c pass (median)", startup, 1.0)]
    first = statistics.median(result.first_answer_seconds)
    goal = GOALS["start_first_answer"]
    out.append(
        Row(
            "start_first_answer",
            f"start to first answer (median of {len(result.first_answer_seconds)})",
            first,
            first / startup,
            f"< {goal:g} s",
            first < goal if judged else None,
            f"max {show_seconds(max(result.first_answer_seconds))}",
        )
    )
    for tool in ("search", "read_note", "links"):
        seconds = result.calls.get(tool, [])
        if not seconds:
            continue
        p95 = percentile(seconds, 95)
        goal = GOALS[f"{tool}_p95"]
        out.append(
            Row(
                f"{tool}_p95",
                f"{tool} round trip: p95 of {len(seconds)}",
                p95,
                p95 / startup,
                f"p95 < {goal * 1000:g} ms",
                p95 < goal if judged else None,
                f"median {show_seconds(statistics.median(seconds))}, "
                f"max {show_seconds(max(seconds))}",
            )
        )
    if result.facade_search:
        p95 = percentile(result.facade_search, 95)
        out.append(
            Row(
                "facade_search_p95",
                f"  kb.search alone, same queries: p95 of {len(result.facade_search)}",
                p95,
                p95 / startup,
                note=f"median {show_seconds(statistics.median(result.facade_search))}",
            )
        )
    return out


def format_table(result: SizeResult) -> str:
    lines = [table_heading(result.notes, result.notes_bytes / 1e6)]
    lines += header_lines(f"{'measure':48} {'value':>10} {'x pass':>7}  {'goal':16} status")
    for row in result.rows:
        ratio = f"{row.ratio:.1f}x" if row.ratio is not None else ""
        lines.append(
            f"{row.name:48} {show_seconds(row.value):>10} {ratio:>7}  {row.goal:16} "
            f"{status(row.passed)}  {row.note}".rstrip()
        )
    return "\n".join([*lines, *not_judged(result.notes), *warning_lines(result.warnings)])


def check_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise BenchError("the MCP SDK is not installed: pip install -e '.[mcp]'") from None


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__ or "")
    parser.set_defaults(sizes=[GOAL_NOTES])
    parser.add_argument("--repeat", type=int, default=60, help="timed calls per tool")
    parser.add_argument(
        "--starts", type=int, default=5, help="fresh servers timed to their first answer"
    )
    args = parse_bench_args(parser, argv, at_least_one=("repeat", "starts"))
    return run_sizes(args, bench_size, format_table, asdict, checks=(check_sdk,))


if __name__ == "__main__":
    sys.exit(main())
