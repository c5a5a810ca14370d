"""Every install line in the README and docs/ works as written from a clone (issue 38): kb is
not on PyPI, so a line that installs kb names the clone's folder (`.`, `'.[lsp,mcp]'`) with
extras pyproject.toml defines, never the distribution's name."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
DISTRIBUTION = PYPROJECT["project"]["name"]
EXTRAS = set(PYPROJECT["project"]["optional-dependencies"])
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

# `pip install …`, `pipx install …`, `.venv/bin/pip install …`, `python -m pip install …`,
# up to a comment, `&&`, `;`, a closing backtick or parenthesis, or the end of the line.
INSTALL = re.compile(r"\bpipx? install\b(?P<args>[^`#;&)\n]*)")


def code_of(text: str) -> list[str]:
    """The commands a reader would copy: fenced and indented code lines, and inline code
    spans (one may wrap over a line break)."""
    found: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            found.append(line)
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    found.extend(span.replace("\n", " ") for span in re.findall(r"`([^`]+)`", prose))
    return found


def install_lines() -> list[tuple[str, str]]:
    lines = []
    for page in PAGES:
        for code in code_of(page.read_text(encoding="utf-8")):
            for match in INSTALL.finditer(code):
                lines.append((page.name, match.group(0).strip()))
    return lines


def targets(line: str) -> list[str]:
    """What an install line installs: its arguments that are not options."""
    args = shlex.split(line)[2:]
    return [arg for arg in args if not arg.startswith("-")]


def test_the_docs_have_install_lines_to_check() -> None:
    pages = {page for page, _ in install_lines()}
    assert {"README.md", "editors.md", "assistants.md", "meaning.md", "engines.md"} <= pages


@pytest.mark.parametrize(("page", "line"), install_lines())
def test_each_install_line_installs_from_the_clone(page: str, line: str) -> None:
    found = targets(line)
    assert found, f"{page}: {line!r} installs nothing"
    for target in found:
        path, _, extras = target.partition("[")
        name = re.split(r"[<>=!~]", path)[0].lower()
        assert name not in {DISTRIBUTION, "kb"}, (
            f"{page}: {line!r} installs {DISTRIBUTION} from PyPI, where it is not published: "
            "install from the clone ('.')"
        )
        if not path.startswith((".", "/")):
            continue  # another project's package (model2vec), from PyPI
        folder = REPO / path
        assert (folder / "pyproject.toml").is_file(), f"{page}: {line!r}: {path} is no project"
        wanted = {extra.strip() for extra in extras.rstrip("]").split(",") if extra.strip()}
        assert wanted <= EXTRAS, f"{page}: {line!r}: no extra {wanted - EXTRAS} in pyproject"


@pytest.mark.slow
def test_pip_resolves_the_clone_with_every_extra_the_docs_name(tmp_path) -> None:
    """pip itself reads the clone and finds each extra the docs name (the dependencies are
    installed already; the build's setuptools comes from pip's index or wheel cache); about
    11 s, most of it the isolated build."""
    named = set()
    for _, line in install_lines():
        for target in targets(line):
            if target.startswith(".") and "[" in target:
                named |= {e.strip() for e in target.split("[", 1)[1].rstrip("]").split(",")}
    assert named
    report = tmp_path / "report.json"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "--dry-run", "--quiet"),
            *("--report", str(report), f".[{','.join(sorted(named))}]"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode and "setuptools" in done.stderr and "No matching" in done.stderr:
        pytest.skip("no setuptools wheel to build the project with (offline, no cache)")
    assert done.returncode == 0, done.stderr
    assert "does not provide the extra" not in done.stderr
    (installed,) = [
        item
        for item in json.loads(report.read_text())["install"]
        if item["metadata"]["name"] == DISTRIBUTION
    ]
    assert set(installed["requested_extras"]) == named
