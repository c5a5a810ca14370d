"""``kb lsp`` given what a broken or hostile client sends: each gets the protocol's error
or an empty answer, never a crash, a hang or a traceback (issue 24, item 13)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_lsp import REPO

pytestmark = pytest.mark.slow  # each test starts its own server


class Raw:
    """The server in a subprocess, spoken to byte by byte (framing included)."""

    def __init__(self, home: Path | None, cwd: Path | None = None) -> None:
        where = ["--kb", str(home)] if home else []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kb", *where, "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
        self.next_id = 0

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, method: str, params: Any = None, request: bool = True) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        sent = None
        if request:
            self.next_id += 1
            sent = message["id"] = self.next_id
        self.send_bytes(json.dumps(message).encode())
        return sent

    def read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = self.process.stdout.readline()
            assert line, "the server closed its output"
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            if line in (b"\r\n", b"\n"):
                break
        return json.loads(self.process.stdout.read(length))

    def answer(self, request_id: int | None) -> dict[str, Any]:
        """The response to ``request_id`` (notifications in between are skipped)."""
        while True:
            message = self.read()
            if message.get("id") == request_id and "method" not in message:
                return message

    def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        answer = self.answer(self.send("initialize", {"capabilities": capabilities or {}}))
        self.send("initialized", {}, request=False)
        return answer

    def finish(self) -> tuple[int, str]:
        """shutdown, exit: the exit code and stderr."""
        self.answer(self.send("shutdown"))
        self.send("exit", request=False)
        _, stderr = self.process.communicate(timeout=20)
        return self.process.returncode, stderr.decode()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    from test_lsp import make_notes_kb

    return make_notes_kb(tmp_path)


def _open(raw: Raw, file: Path, text: str) -> str:
    uri = file.as_uri()
    raw.send(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}},
        request=False,
    )
    return uri


def _at(uri: str, line: int, character: int) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def test_malformed_messages_and_unknown_methods(home: Path) -> None:
    raw = Raw(home)
    raw.initialize()
    raw.send_bytes(b"{this is not json")
    raw.send_bytes(b"\xff\xfe not utf-8")
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 99, "method": "textDocument/hover", "params": 7}')
    unknown = raw.answer(raw.send("kb/noSuchMethod", {}))
    assert unknown["error"]["code"] == -32601  # MethodNotFound
    raw.send("$/noSuchNotification", {}, request=False)
    # Still serving after all that:
    symbols = raw.answer(raw.send("workspace/symbol", {"query": "redis"}))
    assert symbols["result"]
    code, stderr = raw.finish()
    assert code == 0
    assert "Traceback" not in stderr


def test_documents_never_opened_and_positions_past_the_end(home: Path) -> None:
    raw = Raw(home)
    raw.initialize()
    missing = (home / "notes/never/there.md").as_uri()
    for method in ("textDocument/hover", "textDocument/definition", "textDocument/completion"):
        assert raw.answer(raw.send(method, _at(missing, 0, 0)))["result"] in (None, [])
    on_disk = (home / "notes/engineering/redis-study.md").as_uri()  # never opened: from disk
    symbols = raw.answer(
        raw.send("textDocument/documentSymbol", {"textDocument": {"uri": on_disk}})
    )
    assert symbols["result"]
    uri = _open(raw, home / "notes/posts/x.md", "短 [[xcgs\n")
    for line, character in ((0, 999), (50, 3), (0, -1)):
        answer = raw.answer(raw.send("textDocument/completion", _at(uri, line, character)))
        assert "error" not in answer or answer["error"]["code"] == -32602  # InvalidParams
    code, stderr = raw.finish()
    assert code == 0 and "Traceback" not in stderr


def test_a_5_mb_buffer_and_invalid_utf8_on_disk(home: Path) -> None:
    bad = home / "notes/posts/bad-bytes.md"
    bad.write_bytes(b"# \xff\xfe bad\n\n[[redis-study]]\n")
    raw = Raw(home)
    raw.initialize()
    links = raw.answer(
        raw.send("textDocument/documentLink", {"textDocument": {"uri": bad.as_uri()}})
    )
    assert len(links["result"]) == 1
    big = ("[[xcgs]] 中文 😀 " * 20 + "\n") * 12_000  # about 5 MB
    uri = _open(raw, home / "notes/posts/big.md", big)
    answer = raw.answer(raw.send("textDocument/documentSymbol", {"textDocument": {"uri": uri}}))
    assert answer["result"] == []
    answer = raw.answer(raw.send("textDocument/hover", _at(uri, 11_999, 3)))
    assert "error" not in answer
    code, stderr = raw.finish()
    assert code == 0 and "Traceback" not in stderr


def test_exit_without_shutdown_and_a_client_that_never_says_initialized(home: Path) -> None:
    raw = Raw(home)
    raw.answer(raw.send("initialize", {"capabilities": {}}))
    hover = raw.answer(raw.send("workspace/symbol", {"query": "显存"}))  # no `initialized`
    assert hover["result"]
    raw.send("exit", request=False)
    _, stderr = raw.process.communicate(timeout=20)
    assert raw.process.returncode == 1  # exit before shutdown: 1, as the protocol says
    assert "Traceback" not in stderr.decode()


def test_utf8_negotiated_when_the_client_offers_it(home: Path) -> None:
    raw = Raw(home)
    answer = raw.initialize({"general": {"positionEncodings": ["utf-8", "utf-16"]}})
    assert answer["result"]["capabilities"]["positionEncoding"] == "utf-8"
    uri = _open(raw, home / "notes/posts/u8.md", "显存 [[xcgs\n")
    # 显存 is 6 bytes, a space, [[: the prefix starts at byte 9 and ends at 13.
    items = raw.answer(raw.send("textDocument/completion", _at(uri, 0, 13)))["result"]["items"]
    edit = items[0]["textEdit"]
    assert (
        items[0]["label"],
        edit["range"]["start"]["character"],
        edit["range"]["end"]["character"],
    ) == (
        "显存估算速查",
        9,
        13,
    )
    code, stderr = raw.finish()
    assert code == 0 and "Traceback" not in stderr


def test_outside_every_knowledge_base_one_message_and_the_storeless_features(
    tmp_path: Path,
) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    raw = Raw(None, cwd=loose)
    raw.answer(raw.send("initialize", {"capabilities": {}, "rootUri": loose.as_uri()}))
    raw.send("initialized", {}, request=False)
    shown = raw.read()
    assert (
        shown["method"] == "window/showMessage"
        and "no knowledge base" in shown["params"]["message"]
    )
    uri = _open(raw, loose / "a.md", "# 一\n\n## 二\n")
    symbols = raw.answer(raw.send("textDocument/documentSymbol", {"textDocument": {"uri": uri}}))
    assert [s["name"] for s in symbols["result"]] == ["一"]
    code, stderr = raw.finish()
    assert code == 0 and "Traceback" not in stderr


def test_kb_lsp_without_the_extra_says_what_to_install(tmp_path: Path) -> None:
    # A Python whose pygls cannot be imported: the command says what to install, exit 1.
    blocker = tmp_path / "pygls"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('no pygls', name='pygls')\n")
    result = subprocess.run(
        [sys.executable, "-m", "kb", "--kb", str(REPO), "lsp"],
        capture_output=True, text=True, env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin"},
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "kb: kb lsp needs pygls, which is not installed: pip install '.[lsp]' in kb's folder"
    )
    assert result.stdout == ""


def test_rename_refused_when_the_client_cannot_rename_files(home: Path) -> None:
    raw = Raw(home)
    raw.initialize()  # no workspaceEdit.resourceOperations
    uri = _open(raw, home / "notes/posts/r.md", "[[softmax-numerics]]\n")
    answer = raw.answer(raw.send("textDocument/rename", {**_at(uri, 0, 4), "newName": "x.md"}))
    assert answer["error"]["code"] == -32803  # RequestFailed
    assert "kb mv" in answer["error"]["message"]
    assert (home / "notes/engineering/softmax-numerics.md").exists()
    code, stderr = raw.finish()
    assert code == 0 and "Traceback" not in stderr


def test_rename_for_a_client_naming_resource_operations_only(home: Path) -> None:
    # Neovim 0.7 says resourceOperations (rename, create, delete) and not
    # documentChanges: true; resource operations exist only inside documentChanges.
    raw = Raw(home)
    raw.initialize({"workspace": {"workspaceEdit": {"resourceOperations": ["rename", "create"]}}})
    uri = _open(raw, home / "notes/posts/r.md", "[[softmax-numerics]]\n")
    answer = raw.answer(raw.send("textDocument/rename", {**_at(uri, 0, 4), "newName": "x.md"}))
    kinds = [change.get("kind", "edit") for change in answer["result"]["documentChanges"]]
    assert kinds[-1] == "rename" and "edit" in kinds
    code, stderr = raw.finish()
    assert code == 0 and "Traceback" not in stderr
