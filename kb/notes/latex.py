"""LaTeX formulas in notes as Unicode text, for reading them in a terminal.

``to_unicode(r"\\frac{\\text{FLOPs}}{\\text{Bytes}}")`` is ``FLOPs/Bytes``; ``x_i^2`` is
``xᵢ²``; Greek letters, ``\\min``/``\\max``, ``\\sum``, ``\\sqrt``, arrows and the common
operators become their characters. ``render_math`` does that to every ``$…$`` and ``$$…$$``
of a Markdown text outside code, for the reader's display only (the note is unchanged). A
formula that cannot be converted (an unknown command, a syntax error) is left as written,
never an error.

flatlatex does the converting: measured against pylatexenc on the notes' formulas, it writes
sub- and superscripts as Unicode (``xᵢ²``, where pylatexenc leaves ``x_i^2``) and takes
0.8 ms a formula (pylatexenc 2.8 ms). What it lacks (``\\text``, ``\\left``, named operators)
is added below. It is imported on the first formula, never at import.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

# Commands flatlatex does not know, as \newcommand definitions it reads.
_COMMANDS = {
    "text": "#1",
    "textrm": "#1",
    "textit": "#1",
    "textbf": "#1",
    "mathrm": "#1",
    "mathbf": "#1",
    "mathit": "#1",
    "operatorname": "#1",
    "left": "",
    "right": "",
    "big": "",
    "Big": "",
    "displaystyle": "",
    "le": "≤",
    "ge": "≥",
    "ne": "≠",
    "to": "→",
    "gets": "←",
    "ldots": "…",
    "cdots": "⋯",
    "dots": "…",
    "lVert": "‖",
    "rVert": "‖",
}
_OPERATORS = ("log", "ln", "exp", "min", "max", "sin", "cos", "tan", "lim", "arg", "det")
# \text{a b}: flatlatex drops spaces, so they become control spaces (`\ `) it keeps.
_TEXT = re.compile(r"\\(?:text|textrm|textit|textbf|mathrm|operatorname)\{([^{}]*)\}")
# \log n: a named operator, spaced from what is around it unless it takes a sub/superscript.
_OPERATOR = re.compile(r"\s*\\(" + "|".join(_OPERATORS) + r")\b(?![_^])\s*")
_SUBSCRIPTED_OPERATOR = re.compile(r"\s*\\(" + "|".join(_OPERATORS) + r")\b(?=[_^])")

# $$…$$ (may span lines), then $…$: no space just inside the dollars, and no digit right
# after the closing one, so "$5 and $6" stays money (pandoc's rule).
_DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
_INLINE = re.compile(r"(?<![\\$])\$(?![\s$])([^$\n]+?)(?<![\s\\])\$(?![\d$])")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1", re.DOTALL)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


@cache
def _converter() -> Any:
    import flatlatex  # deferred: loads flatlatex, regex

    converter = flatlatex.converter()
    for name, body in _COMMANDS.items():
        arguments = "[1]" if "#1" in body else ""
        converter.add_newcommand(f"\\newcommand\\{name}{arguments}{{{body}}}")
    for name in _OPERATORS:
        converter.add_newcommand(f"\\newcommand\\{name}{{{name}}}")
    return converter


def to_unicode(latex: str) -> str | None:
    """A formula as Unicode text; None when it cannot be converted."""
    source = _TEXT.sub(lambda m: "{" + m[1].strip().replace(" ", "\\ ") + "}", latex.strip())
    source = _OPERATOR.sub(lambda m: f"\\ \\{m[1]}\\ ", source)
    source = _SUBSCRIPTED_OPERATOR.sub(lambda m: f"\\ \\{m[1]}", source)
    try:
        text = _converter().convert(source)
    except Exception:  # flatlatex raises its own and plain errors on input it cannot read
        return None
    text = " ".join(str(text).split())
    if not text or "\\" in text:  # an unknown command came through as written
        return None
    return text


def render_math(markdown: str) -> str:
    """``markdown`` with each formula outside code as Unicode (Markdown-escaped, so it
    shows as converted); formulas that cannot be converted are left as written."""
    if "$" not in markdown:
        return markdown
    from kb.parse.fences import code_lines  # deferred: 2 modules more

    out: list[str] = []
    prose: list[str] = []
    for line, is_code in code_lines(markdown.splitlines(keepends=True)):
        if is_code:
            out.append(_render_prose("".join(prose)))
            prose = []
            out.append(line)
        else:
            prose.append(line)
    out.append(_render_prose("".join(prose)))
    return "".join(out)


def _render_prose(text: str) -> str:
    """Formulas of text that holds no fenced code; code spans are kept as they are."""
    if "$" not in text:
        return text
    pieces, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        pieces += [_render_formulas(text[last : span.start()]), span[0]]
        last = span.end()
    pieces.append(_render_formulas(text[last:]))
    return "".join(pieces)


def _render_formulas(text: str) -> str:
    text = _DISPLAY.sub(lambda m: _converted(m, m[1]), text)
    return _INLINE.sub(lambda m: _converted(m, m[1]), text)


def _converted(match: re.Match[str], latex: str) -> str:
    unicode = to_unicode(latex)
    if unicode is None:
        return match[0]
    return _MARKDOWN_SPECIAL.sub(r"\\\1", unicode)
