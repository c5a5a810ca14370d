"""``kb lsp`` after framing it cannot read (issue 37): a bad, negative, missing or too-small
``Content-Length``, a terabyte's length, bare ``\\n`` line ends. Each over a real stdio
subprocess: the server answers a JSON-RPC parse error and reads on, never goes silent,
never prints a traceback."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # each test starts its own server
WAIT = 20.0  # seconds an answer may take on a busy machine; a silent server fails the test


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _request(request_id: int, method: str, params: Any) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).encode()


class Server:
    """``kb lsp`` in a subprocess, read with a deadline so that silence fails the test."""

    def __init__(self, home: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kb", "--kb", str(home), "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.pending = b""

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def _more(self, deadline: float) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        left = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(0.0, left))
        if not ready:
            pytest.fail(f"kb lsp said nothing for {WAIT} s (alive: {self.process.poll() is None})")
        chunk = os.read(fd, 65536)
        if not chunk:
            pytest.fail(f"kb lsp closed its output: {self.stderr()}")
        self.pending += chunk

    def read(self) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        while b"\r\n\r\n" not in self.pending:
            self._more(deadline)
        head, _, rest = self.pending.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        while len(rest) < length:
            self._more(deadline)
            head, _, rest = self.pending.partition(b"\r\n\r\n")
        self.pending = rest[length:]
        return json.loads(rest[:length])

    def answer(self, request_id: int | None) -> dict[str, Any]:
        while True:
            message = self.read()
            if "method" not in message and message.get("id") == request_id:
                return message

    def stderr(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        assert self.process.stderr is not None
        return self.process.stderr.read().decode(errors="replace")

    def finish(self) -> tuple[int, str]:
        self.write(_frame(_request(900, "shutdown", None)))
        self.answer(900)
        self.write(_frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
        _, stderr = self.process.communicate(timeout=WAIT)
        return self.process.returncode, stderr.decode()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from test_lsp import make_notes_kb

    return make_notes_kb(tmp_path_factory.mktemp("kb"))


def _started(home: Path) -> Server:
    server = Server(home)
    server.write(_frame(_request(1, "initialize", {"capabilities": {}})))
    assert "result" in server.answer(1)
    server.write(_frame(b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'))
    return server


SYMBOLS = _request(7, "workspace/symbol", {"query": "redis"})


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        (b"Content-Length: abc\r\n\r\n" + SYMBOLS, "Content-Length is not a length"),
        (b"Content-Length: -5\r\n\r\n" + SYMBOLS, "Content-Length is not a length"),
        (
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + SYMBOLS,
            "without a Content-Length",
        ),
        (b"Content-Length: 20\r\n\r\n" + SYMBOLS, "not JSON"),  # too small
        (b"Content-Length: 1000000000000\r\n\r\n" + SYMBOLS, "at most 64 MB"),
        (b"Content-Length: 0\r\n\r\n", "an empty message"),
        (b"{this is no header}\r\n\r\n", "not a header"),
    ],
    ids=["not-a-number", "negative", "missing", "too-small", "a-terabyte", "zero", "garbage"],
)
def test_bad_framing_gets_a_parse_error_and_the_server_reads_on(
    home: Path, bad: bytes, said: str
) -> None:
    server = _started(home)
    server.write(bad)
    error = server.answer(None)  # a parse error has no id to answer
    assert error["error"]["code"] == -32700
    assert said in error["error"]["message"]
    # The next well-framed request is answered: the server found its footing again.
    server.write(_frame(_request(8, "workspace/symbol", {"query": "redis"})))
    assert server.answer(8)["result"]
    code, stderr = server.finish()
    assert code == 0
    assert "Traceback" not in stderr and "MemoryError" not in stderr
    assert all(line.startswith("kb lsp: ") for line in stderr.splitlines()), stderr


def test_bare_newline_line_ends_are_read(home: Path) -> None:
    server = Server(home)
    body = _request(1, "initialize", {"capabilities": {}})
    server.write(b"Content-Length: %d\n\n" % len(body) + body)
    assert "result" in server.answer(1)
    server.write(b"Content-Length: %d\n\n" % len(SYMBOLS) + SYMBOLS)
    assert server.answer(7)["result"]
    code, stderr = server.finish()
    assert code == 0, stderr


def test_a_header_glued_to_a_too_short_body_is_still_found(home: Path) -> None:
    server = _started(home)
    # 20 bytes of the body are the message; the rest runs into the next header.
    server.write(b"Content-Length: 20\r\n\r\n" + SYMBOLS + _frame(_request(9, "shutdown", None)))
    assert "result" in server.answer(9)
    server.write(_frame(b'{"jsonrpc": "2.0", "method": "exit"}'))
    server.process.communicate(timeout=WAIT)
    assert server.process.returncode == 0


def test_input_that_ends_inside_a_message_exits_with_one_line(home: Path) -> None:
    server = _started(home)
    server.write(b'Content-Length: 50\r\n\r\n{"jsonrpc"')
    assert server.process.stdin is not None
    server.process.stdin.close()
    server.process.wait(timeout=WAIT)
    assert server.process.returncode == 1  # the client went away without a shutdown
    stderr = server.stderr()
    assert stderr == "kb lsp: the input ended inside a message; stopping\n"
