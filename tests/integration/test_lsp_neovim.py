"""A real editor on ``kb lsp``: Neovim headless opens a note, asks for completion after
``[[``, goes to a definition and reads the diagnostics (skipped where nvim is absent)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_lsp import REPO, make_notes_kb

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("nvim") is None, reason="Neovim is not installed"),
]


def test_neovim_completes_goes_to_definition_and_shows_diagnostics(tmp_path: Path) -> None:
    home = make_notes_kb(tmp_path / "notebook")  # not "kb": python -m kb would import it
    note = home / "notes/posts/nvim-try.md"
    note.write_text(
        "# 试试\n\n见 [[xcgs\n\n[[softmax-numerics]] and [[no-such-note]]\n", encoding="utf-8"
    )
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "KB_NVIM_OUT": str(out),
        "KB_NVIM_HOME": str(home),
        "KB_NVIM_PYTHON": sys.executable,
        "KB_NVIM_NOTE": str(note),
    }
    init = REPO / "tests/fixtures/lsp_neovim_init.lua"
    subprocess.run(
        ["nvim", "--headless", "--clean", "-u", str(init)],
        env=env, cwd=tmp_path, timeout=90, check=False,
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    seen = json.loads(out.read_text(encoding="utf-8"))
    assert seen == {
        "completion": "显存估算速查",
        "insert": "显存 估算",
        "definition": (home / "notes/engineering/softmax-numerics.md").as_uri(),
        "diagnostic": "broken-link",
    }
