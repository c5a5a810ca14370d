"""The Python API: ``from kb import KnowledgeBase``, as docs/api.md shows it, with
``import kb`` cheap (the facade loaded only when named)."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.conftest import SAMPLE_NOTES


def test_import_kb_does_not_load_the_facade() -> None:
    code = "import sys, kb; print('kb.knowledge_base' in sys.modules, kb.__version__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split()[0] == "False"


def test_the_documented_example_runs(tmp_path) -> None:
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    from kb import KnowledgeBase

    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    hits = kb.search("roofline").hits
    assert hits
    assert "roofline" in hits[0].title.lower()
