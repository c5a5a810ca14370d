"""Formulas as Unicode text (kb/latex.py): what the reader shows for LaTeX in a note."""

from __future__ import annotations

import pytest

from kb.notes.latex import render_math, to_unicode


@pytest.mark.parametrize(
    ("latex", "shown"),
    [
        (r"I = \frac{\text{FLOPs}}{\text{Bytes}}", "I=(FLOPs)/(Bytes)"),
        (r"I < P/\beta", "I<P/β"),
        (r"x_i^2 + y_{ij}", "(xᵢ)²+yᵢⱼ"),
        (r"\alpha \approx 0.5 \rightarrow \infty", "α≈0.5→∞"),
        (r"\min_x f(x) \le \max_{y} g(y)", "(min)ₓf(x)≤(max)[y]g(y)"),
        (r"O(n \log n)", "O(n log n)"),
        (r"\text{bytes per token} = 2 \times n_{layers}", "bytes per token=2×n[layers]"),
        (r"\text{softmax}\left(\frac{QK^T}{\sqrt{d_k}}\right)V", "softmax((QKᵀ)/(√(d[k])))V"),
        (r"\sum_{i=1}^{n} a_i", "(∑ᵢ₌₁)ⁿaᵢ"),
        (r"x \in \mathbb{R}^{d}", "x∈ℝᵈ"),
        (r"10^{12}", "10¹²"),
    ],
)
def test_formulas_read_as_unicode(latex: str, shown: str) -> None:
    assert to_unicode(latex) == shown


@pytest.mark.parametrize(
    "latex",
    [
        r"\frac{a}{",  # a syntax error
        r"\unknowncommand{x}",
        r"\begin{aligned} a &= b \\ c &= d \end{aligned}",
        "",
    ],
)
def test_what_cannot_be_converted_is_none(latex: str) -> None:
    assert to_unicode(latex) is None


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        ("强度 $I < P/\\beta$ 时", "强度 I<P/β 时"),
        ("$$I = \\frac{\\text{FLOPs}}{\\text{Bytes}}$$\n", "I=(FLOPs)/(Bytes)\n"),
        ("$$\na_i^2\n$$\n", "(aᵢ)²\n"),
        ("costs $5 and $6 today", "costs $5 and $6 today"),  # money, not math
        ("`$x_i$` in code", "`$x_i$` in code"),
        ("```\n$x_i$\n```\n", "```\n$x_i$\n```\n"),
        ("$\\unknown{x}$ stays", "$\\unknown{x}$ stays"),
        ("$a|b$ in a table", "a\\|b in a table"),  # escaped: never a table cell
        ("$a * b$ and $c * d$", "a\\*b and c\\*d"),  # never emphasis
        ("no formulas", "no formulas"),
    ],
)
def test_render_math_in_markdown(markdown: str, shown: str) -> None:
    assert render_math(markdown) == shown
