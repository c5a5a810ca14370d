from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from kb.knowledge_base import KnowledgeBase

if TYPE_CHECKING:
    from click.testing import Result

REPO = Path(__file__).resolve().parent.parent
SAMPLE_NOTES = REPO / "notes"
SHARED_CORPORA = REPO.parent / "shared" / "corpora"

FIXTURES = REPO / "tests" / "fixtures"

# Test tiers are folders: tests/unit (pure functions and the store), tests/integration
# (ingest, search, links, the CLI and the servers over real folders), tests/tui (the app
# under the pilot, snapshots, tmux) and tests/contracts (the architecture and the docs).
# Each test gets its folder's marker, so `pytest -m unit` is the quickest loop.
TIERS = frozenset({"unit", "integration", "tui", "contracts"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = item.path.parent.name
        if tier not in TIERS:
            raise pytest.UsageError(f"{item.path}: a test belongs in one of tests/{sorted(TIERS)}")
        item.add_marker(getattr(pytest.mark, tier))


def _isolate(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the user's real config, data and default knowledge base out of a test."""
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.delenv("KB_HOME", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    # Search by meaning is on wherever its extra is installed; the tests that are about it
    # (tests/test_meaning*.py) turn it on themselves, the others measure the words alone.
    monkeypatch.setenv("KB_SEMANTIC", "off")


@pytest.fixture(scope="session", autouse=True)
def isolated_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The same isolation for the module-scoped fixtures, which run before any test's own:
    without it they read the real home and embed every note they ingest."""
    home = tmp_path_factory.mktemp("session-home")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(home, monkeypatch)
        yield home


@pytest.fixture(autouse=True)
def isolated_user_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Each test its own home, so what one test configures no other sees."""
    home = tmp_path_factory.mktemp("home")
    _isolate(home, monkeypatch)
    return home


def engine_params(*, without: tuple[str, ...] = ()) -> list[object]:
    """Every engine of the registry as a pytest param, skipped where its package is missing."""
    import importlib

    from kb.engines.registry import ENGINES, engine_names

    def installed(name: str) -> bool:
        available = getattr(importlib.import_module(ENGINES[name]), "available", None)
        return available is None or bool(available())

    return [
        pytest.param(n, marks=pytest.mark.skipif(not installed(n), reason=f"{n} missing"))
        for n in engine_names()
        if n not in without
    ]


NoteFiles = dict[str, str | bytes]


@pytest.fixture
def make_kb(tmp_path: Path) -> Callable[..., KnowledgeBase]:
    """A knowledge base in tmp_path with the given notes (path -> text or bytes)."""

    def make(notes: NoteFiles | None = None, config: str = "roots: [notes]\n") -> KnowledgeBase:
        (tmp_path / "kb.yaml").write_text(config, encoding="utf-8")
        (tmp_path / "notes").mkdir(exist_ok=True)
        write_notes(tmp_path / "notes", notes or {})
        return KnowledgeBase.open(tmp_path)

    return make


def write_notes(root: Path, notes: NoteFiles) -> None:
    for rel, content in notes.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def run_cli(kb: KnowledgeBase, *args: str) -> Result:
    """``kb --kb HOME ARGS...`` as a user types it, in this process."""
    from click.testing import CliRunner

    from kb.cli import cli

    return CliRunner().invoke(cli, ["--kb", str(kb.home), *args])
