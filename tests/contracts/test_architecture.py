"""The shape of the code: the core never loads the UI, and lint stays clean."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
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


def test_the_import_contracts_hold() -> None:
    """pyproject.toml's [tool.importlinter]: the core knows nothing of its faces, the
    faces are independent, and the layers from the facade down to parsing."""
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    result = subprocess.run([lint], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-3000:]
    assert result.stdout.count("KEPT") == len(_import_contracts())


def _import_contracts() -> list[dict]:
    with (REPO / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)["tool"]["importlinter"]["contracts"]


# Packages that stand on no floor: the faces (their own contracts) and the help pages.
_OFF_THE_FLOORS = ("cli", "tui", "lsp", "mcp", "help")


def test_the_floors_are_packages_and_every_core_package_has_one() -> None:
    """The layers contract names whole packages, so the folders show the layers: a module
    stands on its package's floor, and a new package of the core needs a floor."""
    (layers,) = [c["layers"] for c in _import_contracts() if c["type"] == "layers"]
    named = [name.strip() for layer in layers for name in re.split(r"[:|]", layer)]
    packages = {
        f"kb.{path.parent.name}"
        for path in KB.glob("*/__init__.py")
        if path.parent.name not in _OFF_THE_FLOORS
    }
    assert [name for name in named if name not in packages] == []
    assert sorted(packages - set(named)) == []


def test_no_import_circles_between_kb_modules() -> None:
    """Imports inside functions count; TYPE_CHECKING blocks do not. A package's
    ``__init__`` and one of its own modules may name each other."""
    graph: dict[str, set[str]] = {}
    modules = {}
    for path in KB.rglob("*.py"):
        rel = path.relative_to(REPO).with_suffix("")
        name = ".".join(rel.parts).removesuffix(".__init__")
        modules[name] = path
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for inner in ast.walk(node)
        }
        found = set()
        for node in ast.walk(tree):
            if id(node) in skip or not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for written in targets:
                target = written
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    found.add(target)
        graph[name] = found
    circles = []
    for start in graph:
        stack, seen = [(start, (start,))], set()
        while stack:
            here, trail = stack.pop()
            for nxt in graph[here]:
                if nxt == start and len(trail) > 1:
                    package = min(trail, key=len)
                    if not (len(trail) == 2 and all(m.startswith(package) for m in trail)):
                        circles.append(" -> ".join((*trail, start)))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, (*trail, nxt)))
    assert sorted(set(circles)) == []


# -- contracts: the layering stated in the README's Architecture section ----------------

# What the two faces may import from kb: the facade, its result types and display helpers.
_FACE_ALLOWED = (
    "kb.knowledge_base",
    "kb.errors",
    "kb.text",
    "kb.search.run",
    "kb.links.connections",
    "kb.notes.naming",  # NoteRef
    "kb.links.check",  # CheckProblem
    "kb.notes.views",
    "kb.notes.browse",
    "kb.notes.editing",  # editor_command
    "kb.links.graph",
    "kb.ingest.run",  # IngestStats
    "kb.engines.registry",  # the --engine choices
    "kb.notes.listing",  # ListedNote, the --format template
    "kb.cli.shell_completion",  # shell completion of notes, tags and series (the CLI's own)
    "kb.linebreak",  # the TUI breaks lines with it
    "kb.notes.latex",  # the TUI shows formulas as Unicode
    "kb.notes.paging",  # cursors of the assistant server's pages
    "kb.notes.source",  # NoteSource, a note as written
    "kb.notes.sections",  # one heading's section of a note
    "kb.query.syntax",  # the query length cap
    "kb.notes.editor",  # the editor server: the cursor's context, a link's place on its line
    "kb.notes.buffer",  # the editor server: an unsaved buffer read as kb reads a note
    "kb.names.resolve",  # fold: names compared as the naming rule compares them
    "kb.models",  # Link, Heading: what the parser returns
    "kb.parse.decode",  # a file on disk read as ingest reads it
    "kb.help",  # the pages `kb help` prints (copies of docs/) and their topics
)
_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE FROM|CREATE (TABLE|INDEX|VIRTUAL)|PRAGMA)\b")


def _kb_imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return [name for name in names if name == "kb" or name.startswith("kb.")]


_FACES = ("cli", "tui", "lsp", "mcp")


def _allowed(name: str, face: str) -> bool:
    if name in ("kb", f"kb.{face}") or name.startswith(f"kb.{face}."):
        return True  # kb's __version__, and the face's own modules
    if face == "cli" and name.split(".")[:2] in (["kb", "tui"], ["kb", "lsp"], ["kb", "mcp"]):
        return True  # `kb`, `kb lsp` and `kb mcp` start the other faces
    return any(name == ok or name.startswith(ok + ".") for ok in _FACE_ALLOWED)


def test_the_faces_reach_kb_only_through_the_facade() -> None:
    offenders = [
        f"{path.relative_to(REPO)}: {name}"
        for face in _FACES
        for path in sorted((KB / face).rglob("*.py"))
        for name in _kb_imports(path)
        if not _allowed(name, face)
    ]
    assert offenders == []


def _outside_store_and_engines() -> list[Path]:
    return [
        path
        for path in sorted(KB.rglob("*.py"))
        if path.relative_to(KB).parts[0] not in ("store", "engines")
    ]


def test_sql_lives_only_in_the_store_and_the_engines() -> None:
    offenders = []
    for path in _outside_store_and_engines():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_text and _SQL.search(node.value):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
            if isinstance(node, ast.Import | ast.ImportFrom):
                module = node.module if isinstance(node, ast.ImportFrom) else None
                names = [module] if module else [a.name for a in node.names]
                if "sqlite3" in names:
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno} imports sqlite3")
    assert offenders == []


def test_no_column_read_by_name_outside_the_store() -> None:
    # Rows cross the store's boundary as typed rows: row["title"] belongs inside kb/store/.
    pattern = re.compile(r"\brow\w*\[\s*['\"]\w+['\"]\s*\]")
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in _outside_store_and_engines()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_mypy_is_clean() -> None:
    mypy = shutil.which("mypy", path=str(Path(sys.executable).parent))
    if mypy is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    result = subprocess.run(
        [mypy, "--no-error-summary"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout


def test_every_import_inside_a_function_says_why() -> None:
    """An import left inside a function is there for start-up time (or an optional
    package): a comment on its line, or the line above, says so; the free ones are at the
    top (tools: python -X importtime)."""
    import ast

    bare = []
    for path in sorted((REPO / "kb").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        for function in ast.walk(ast.parse(text)):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    continue
                said = lines[node.lineno - 1] + lines[node.end_lineno - 1]  # type: ignore[operator]
                above = lines[node.lineno - 2].strip()
                if "#" not in said and not above.startswith("#"):
                    bare.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert bare == []
