"""A note's images in the terminal: a titled placeholder in the text (``🖼 alt (file)``) that
opens the file with the system's viewer when asked (a click, or the link list), never by
itself, and never a remote URL.

The placeholder is a link to ``kb-image:SRC``: the reader's Markdown parser turns each image
into one (``image_links``), so the reader, the preview and find-in-note all see the label as
text, and a click comes back to the note screen as a link to open, not to follow.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from kb.notes.browse import code_lines
from kb.text import one_line

IMAGE_LINK = "kb-image:"
_REMOTE = re.compile(r"^[a-z][a-z0-9+.-]*://|^//|^data:", re.IGNORECASE)
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")
# ![alt](src "title"), src bare or in <…>.
_IMAGE = re.compile(
    r"!\[([^\]\n]*)\]\(\s*(?:<([^>\n]+)>|([^)\s]+))(?:\s+[\"'][^\"'\n]*[\"'])?\s*\)"
)


def image_label(alt: str, src: str) -> str:
    """How an image shows in the text: ``🖼 alt (file name)``."""
    name = PurePosixPath(unquote(src.partition("#")[0].partition("?")[0])).name or src
    alt = one_line(alt)
    return f"🖼 {alt} ({one_line(name)})" if alt and alt != name else f"🖼 {one_line(name)}"


def image_links(state: StateCore) -> None:
    """A markdown-it core rule: each image becomes a link to ``kb-image:SRC`` whose text is
    the image's label (so Markdown renderers that draw links draw the placeholder)."""
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        for token in block.children:
            if token.type != "image":
                children.append(token)
                continue
            src = str(token.attrs.get("src", ""))
            opening = Token("link_open", "a", 1, attrs={"href": IMAGE_LINK + src})
            text = Token("text", "", 0, content=image_label(token.content, src))
            children += [opening, text, Token("link_close", "a", -1)]
        block.children = children


def note_images(markdown: str) -> list[tuple[str, str]]:
    """Each image of a note as (alt, src), in order (for the link list); none in code."""
    return [
        (alt, src)
        for line, is_code in code_lines(markdown.split("\n"))
        if not is_code
        for alt, bracketed, bare in _IMAGE.findall(_CODE_SPAN.sub("", line))
        for src in [bracketed or bare]
    ]


def is_remote(src: str) -> bool:
    return bool(_REMOTE.match(src))


def image_file(note_file: Path, src: str) -> Path | None:
    """The file an image of the note at ``note_file`` shows, or None if there is none:
    relative to the note's folder; a path starting with ``/`` (a site's) is looked for in
    the note's folder and each folder above it, and in their ``static/`` (Hugo)."""
    path = unquote(src.partition("#")[0].partition("?")[0])
    if not path or is_remote(src):
        return None
    if not path.startswith("/"):
        found = note_file.parent / path
        return found if found.is_file() else None
    relative = path.lstrip("/")
    for folder in note_file.parents:
        for found in (folder / relative, folder / "static" / relative):
            if found.is_file():
                return found
    return None
