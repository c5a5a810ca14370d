"""Docs folders (MkDocs, Docusaurus, VuePress): the URL of a page from its path and front
matter.
"""

from __future__ import annotations

import posixpath
from pathlib import PurePosixPath

from kb.sites.common import INDEX_STEMS


def docs_urls(rel: PurePosixPath, front: dict) -> list[str]:
    folder = rel.parent.as_posix().strip(".")
    slug = front.get("slug")
    if isinstance(slug, str) and slug.strip():  # Docusaurus: absolute, or in the folder
        slug = slug.strip()
        path = slug if slug.startswith("/") else posixpath.join(folder, slug)
        return ["/" + path.strip("/") + "/"]
    stem = rel.stem
    path = folder if stem.lower() in INDEX_STEMS else posixpath.join(folder, stem)
    return ["/" + path.strip("/") + "/" if path.strip("/") else "/"]
