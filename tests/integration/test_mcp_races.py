"""kb mcp with other writers at once, as real processes: two `kb mcp --write` servers
driven by the SDK's client and an "editor" that appends a line every ~20 ms under kb's
write lock (the protocol docs/faults-and-recovery.md gives other programs). Every answered
append and every save must be in the file (issue 37: 3 of 50 rounds lost one on main).
Also: the server stops promptly on SIGINT and SIGTERM, after the write under way."""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from kb.knowledge_base import KnowledgeBase

NOTE = "---\ntitle: Race\n---\n# Race\n\n"
AT_ONCE = 6  # appends each server is sent at once in a round, all naming one content_hash

# The lock as a program other than kb takes it: flock on index/locks/<key>.lock, the key
# the first 24 hex digits of the SHA-256 of the note's real path.
EDITOR = textwrap.dedent(
    """
    import fcntl, hashlib, os, sys, time
    from pathlib import Path

    home, note, stop = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    key = hashlib.sha256(os.fsencode(os.path.realpath(note))).hexdigest()[:24]
    lock = home / "index" / "locks" / f"{key}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    saves = 0
    while not stop.exists():
        with lock.open("a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            with note.open("a", encoding="utf-8") as out:
                out.write(f"editor save {saves}\\n")
        saves += 1
        time.sleep(0.02)
    print(saves)
    """
)


def make_home(base: Path) -> Path:
    home = base / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "race.md").write_text(NOTE, encoding="utf-8")
    (home / "kb.yaml").write_text("roots: [notes]\n", encoding="utf-8")
    with KnowledgeBase.open(home) as kb:
        kb.ingest()
    return home


def server_params(home: Path, *flags: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "kb", "--kb", str(home), "mcp", *flags],
        cwd=str(home.parent),
    )


async def structured(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, Any]:
    result = await session.call_tool(tool, arguments)
    return bool(result.is_error), result.structured_content


def race(home: Path, rounds: int) -> tuple[list[str], list[str], int]:
    """``rounds`` rounds in which both servers are sent AT_ONCE appends each, all with
    the same content_hash, while the editor saves; what the servers were told was
    appended, the refusals, and how many saves the editor made."""
    note = home / "notes" / "race.md"
    stop = home.parent / "stop"
    editor = subprocess.Popen(
        [sys.executable, "-c", EDITOR, str(home), str(note), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    answered: list[str] = []
    refused: list[str] = []

    async def main() -> None:
        async with AsyncExitStack() as stack:
            sessions = []
            for _ in range(2):
                read, write = await stack.enter_async_context(
                    stdio_client(server_params(home, "--write"))
                )
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                sessions.append(session)
            for number in range(rounds):
                _, note_now = await structured(sessions[0], "read_note", note="race.md")
                texts = [
                    f"server {which} round {number} append {each}"
                    for which in (0, 1)
                    for each in range(AT_ONCE)
                ]
                results = await asyncio.gather(
                    *(
                        structured(
                            sessions[int(text.split()[1])],
                            "append_to_note",
                            note="race.md",
                            text=text,
                            content_hash=note_now["content_hash"],
                        )
                        for text in texts
                    )
                )
                for text, (error, _) in zip(texts, results, strict=True):
                    (refused if error else answered).append(text)

    try:
        asyncio.run(asyncio.wait_for(main(), 600))
    finally:
        stop.touch()
        saves, _ = editor.communicate(timeout=60)
    return answered, refused, int(saves)


def assert_nothing_lost(home: Path, rounds: int) -> None:
    answered, refused, saves = race(home, rounds)
    text = (home / "notes" / "race.md").read_text(encoding="utf-8")
    lines = set(text.splitlines())
    lost = [line for line in answered if line not in lines]
    lost_saves = [n for n in range(saves) if f"editor save {n}" not in lines]
    assert not lost and not lost_saves, f"lost appends {lost}, lost saves {lost_saves}"
    assert answered and saves > 0
    # All named the same version: only one of them may be told "appended".
    for number in range(rounds):
        winners = [text for text in answered if f" round {number} " in text]
        assert len(winners) <= 1, f"round {number}: {winners} all appended to one version"
    assert len(answered) + len(refused) == 2 * AT_ONCE * rounds


@pytest.mark.slow
def test_two_write_servers_and_an_editor_lose_nothing_in_100_rounds(tmp_path: Path) -> None:
    assert_nothing_lost(make_home(tmp_path), 100)


def test_two_write_servers_and_an_editor_lose_nothing(tmp_path: Path) -> None:
    assert_nothing_lost(make_home(tmp_path), 4)  # the quick loop's look: about 10 s


# -- stopping ---------------------------------------------------------------------------------


def start_server(home: Path, *flags: str) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [sys.executable, "-m", "kb", "--kb", str(home), "mcp", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=home.parent,
    )
    send(server, {"id": 1, "method": "initialize", "params": INITIALIZE})
    assert server.stdout is not None
    assert json.loads(server.stdout.readline())["id"] == 1
    send(server, {"method": "notifications/initialized"})
    return server


INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"},
}


def send(server: subprocess.Popen[bytes], payload: dict[str, Any]) -> None:
    assert server.stdin is not None
    server.stdin.write(json.dumps({"jsonrpc": "2.0", **payload}).encode() + b"\n")
    server.stdin.flush()


def call_tool(server: subprocess.Popen[bytes], number: int, tool: str, **arguments: Any) -> None:
    send(
        server,
        {"id": number, "method": "tools/call", "params": {"name": tool, "arguments": arguments}},
    )


def answer(server: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert server.stdout is not None
    line = server.stdout.readline()
    assert line, "the server closed stdout without answering"
    return json.loads(line)  # type: ignore[no-any-return]


def stopped_within(server: subprocess.Popen[bytes], seconds: float) -> int:
    """The exit code, stdin left open (a client that stays): the server must go itself."""
    try:
        return server.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
        pytest.fail(f"kb mcp was still running {seconds} s after the signal")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_an_idle_server_promptly(tmp_path: Path, signum: int) -> None:
    home = make_home(tmp_path)
    server = start_server(home)
    call_tool(server, 2, "stats")
    assert "notes: 1" in answer(server)["result"]["content"][0]["text"]
    server.send_signal(signum)
    assert stopped_within(server, 10) == 128 + signum
    assert b"Traceback" not in server.stderr.read()  # type: ignore[union-attr]


def hold_kb_lock(home: Path, note: Path) -> Any:
    key = hashlib.sha256(os.fsencode(os.path.realpath(note))).hexdigest()[:24]
    lock = home / "index" / "locks" / f"{key}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    held = lock.open("a")
    fcntl.flock(held, fcntl.LOCK_EX)
    return held


@pytest.mark.slow  # 6 s each
@pytest.mark.parametrize("tool", ["append_to_note", "move_note"])
def test_a_signal_mid_write_finishes_the_write_then_stops(tmp_path: Path, tool: str) -> None:
    home = make_home(tmp_path)
    note = home / "notes" / "race.md"
    digest = hashlib.sha256(note.read_bytes()).hexdigest()[:16]
    server = start_server(home, "--write")
    held = hold_kb_lock(home, note)  # the write waits for it: it is under way
    if tool == "append_to_note":
        call_tool(server, 2, tool, note="race.md", text="the last words", content_hash=digest)
    else:
        call_tool(server, 2, tool, note="race.md", new_path="moved/race.md", content_hash=digest)
    time.sleep(1.0)
    server.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert server.poll() is None  # waits for the write under way
    held.close()  # the write goes on and ends
    reply = answer(server)
    assert reply["id"] == 2 and not reply["result"].get("isError"), reply
    assert stopped_within(server, 10) == 128 + signal.SIGTERM
    if tool == "append_to_note":
        assert note.read_text(encoding="utf-8") == NOTE + "the last words\n"
    else:
        assert not note.exists()
        assert (home / "notes" / "moved" / "race.md").read_text(encoding="utf-8") == NOTE
        assert not (home / "index" / "kb-mv.journal").exists()
