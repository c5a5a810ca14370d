"""The shape of the code: the core never loads the UI, and lint stays clean."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

KB = REPO / "kb"


def _modules_outside_tui() -> list[str]:
    modules = []
    for path in sorted(KB.rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        if "tui" in rel.parts or rel.name == "__main__":
            continue
        modules.append(".".join(rel.parts).removesuffix(".__init__"))
    return modules


def test_only_kb_tui_imports_textual() -> None:
    offenders = []
    for path in KB.rglob("*.py"):
        if "tui" in path.relative_to(KB).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(name.split(".")[0] == "textual" for name in names):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


def test_importing_the_core_loads_no_ui() -> None:
    modules = _modules_outside_tui()
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n    importlib.import_module(name)\n"
        "print(sorted(m for m in ('textual', 'rich') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO
    ).stdout
    assert out.strip() == "[]"


def test_ruff_is_clean() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    result = subprocess.run(
        [ruff, "check", "--output-format", "concise", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout
