"""kb: a searchable personal knowledge base for Markdown notes.

The Python API is one class, the facade every face uses (docs/api.md)::

    from kb import KnowledgeBase

    kb = KnowledgeBase.open("~/notes")
    kb.ingest()
    for hit in kb.search("roofline").hits:
        print(hit.path, hit.title)

``import kb`` stays cheap: the facade is loaded when it is first named (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["KnowledgeBase", "__version__"]

if TYPE_CHECKING:
    from kb.knowledge_base import KnowledgeBase


def __getattr__(name: str) -> Any:
    if name == "KnowledgeBase":
        from kb.knowledge_base import KnowledgeBase  # deferred: 48 modules more

        return KnowledgeBase
    raise AttributeError(f"module 'kb' has no attribute {name!r}")
