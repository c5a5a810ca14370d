"""Fixtures the app's tests share."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kb.knowledge_base import KnowledgeBase
from tests.conftest import SAMPLE_NOTES


@pytest.fixture
def sample(tmp_path: Path) -> KnowledgeBase:
    shutil.copytree(SAMPLE_NOTES, tmp_path / "notes")
    (tmp_path / "kb.yaml").write_text(
        "roots: [notes]\nsite_url: https://blog.example.com\n", encoding="utf-8"
    )
    kb = KnowledgeBase.open(tmp_path)
    kb.ingest()
    return kb
