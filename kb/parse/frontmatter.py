"""Front matter: split it from the body and load it safely (YAML or TOML)."""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from typing import Any

import yaml

from kb.models import FrontMatter, Problem
from kb.parse.limits import front_matter_over_limit

_YAML_FENCE = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_TOML_FENCE = re.compile(r"^\+\+\+[ \t]*$", re.MULTILINE)
# A YAML alias (`*name`) after whitespace or a flow indicator: the one way to build a bomb.
_MAYBE_ALIAS = re.compile(r"(?:^|[\s\[{,:-])\*[^\s,\]}]", re.MULTILINE)
# Leading space without `\n`: with `\s*` the match could start on any earlier blank line,
# which made the search quadratic in blank lines.
_TAB_AFTER_KEY = re.compile(r"^([^\S\n]*[^\s:#][^:\n]*):\t+", re.MULTILINE)
_TOML_LINE = re.compile(r"line (\d+)")


class _AliasRefused(yaml.YAMLError):
    pass


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases, so a few hundred bytes can never expand to megabytes."""

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _AliasRefused(f"YAML aliases are not allowed (line {event.start_mark.line + 1})")
        return super().compose_node(parent, index)


def _lenient_timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    """A date YAML cannot build (2024-02-30) stays a string, so the note keeps its date
    field and gets the usual "unrecognised date" warning instead of being dropped."""
    try:
        return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
    except ValueError:
        return loader.construct_scalar(node)


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's safe loader (fast), with lenient dates."""


_FastLoader.add_constructor("tag:yaml.org,2002:timestamp", _lenient_timestamp)
_NoAliasLoader.add_constructor("tag:yaml.org,2002:timestamp", _lenient_timestamp)


def split_front_matter(text: str) -> FrontMatter:
    """Separate a leading ``---`` YAML or ``+++`` TOML block from the Markdown body."""
    if text.startswith("---"):
        fence, fmt = _YAML_FENCE, "yaml"
    elif text.startswith("+++"):
        fence, fmt = _TOML_FENCE, "toml"
    else:
        return FrontMatter(body=text)
    first_newline = text.find("\n")
    if first_newline == -1 or text[:first_newline].strip() not in ("---", "+++"):
        return FrontMatter(body=text)
    close = fence.search(text, first_newline + 1)
    if close is None:
        return FrontMatter(
            body=text,
            problems=[
                Problem("front-matter", "front matter fence is never closed; read as body", 1)
            ],
        )
    raw = text[first_newline + 1 : close.start()]
    body_offset = close.end() + 1 if close.end() < len(text) else close.end()
    body_start_line = text.count("\n", 0, body_offset) + 1
    data, problems = _load(raw, fmt)
    return FrontMatter(
        data=data,
        format=fmt,
        body_start_line=body_start_line,
        body=text[body_offset:],
        problems=problems,
    )


def _load(raw: str, fmt: str) -> tuple[dict[str, Any], list[Problem]]:
    """The front matter as a JSON-safe mapping (empty when it cannot be one), and problems."""
    over_limit = front_matter_over_limit(raw)
    if over_limit is not None:
        return {}, [Problem("front-matter", f"front matter has {over_limit}; ignored", 1)]
    try:
        data, problems = (_load_yaml if fmt == "yaml" else _load_toml)(raw)
        if data is not None and not isinstance(data, dict):
            message = f"front matter is a {_kind_of(data)}, not a mapping; ignored"
            return {}, [*problems, Problem("front-matter", message, 1)]
        return (_json_safe(data) if data else {}), problems
    except RecursionError:
        # tomllib, PyYAML's pure-Python loader and _json_safe recurse once per level.
        return {}, [Problem("front-matter", "front matter is nested too deeply; ignored", 1)]


def _load_yaml(raw: str) -> tuple[Any, list[Problem]]:
    problems: list[Problem] = []
    try:
        return _safe_yaml(raw), problems
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        # A safe constructor failing on a value (`!!int abc`, `!!float x`): invalid YAML.
        problems.append(Problem("front-matter", f"invalid YAML front matter: {exc}", 1))
        return None, problems
    except yaml.YAMLError as exc:
        if _TAB_AFTER_KEY.search(raw):
            try:
                data = _safe_yaml(_TAB_AFTER_KEY.sub(r"\1: ", raw))
            except yaml.YAMLError:
                pass
            else:
                problems.append(Problem("front-matter", "tab after a key read as a space", 2))
                return data, problems
        problems.append(Problem("front-matter", _yaml_message(exc), _yaml_line(exc)))
        return None, problems


def _safe_yaml(raw: str) -> Any:
    loader = _NoAliasLoader if _MAYBE_ALIAS.search(raw) else _FastLoader
    return yaml.load(raw, Loader=loader)


def _yaml_message(exc: yaml.YAMLError) -> str:
    if isinstance(exc, _AliasRefused):
        return f"invalid YAML front matter: {exc}"
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"invalid YAML front matter: {problem}"


def _yaml_line(exc: yaml.YAMLError) -> int:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    # +2: the opening fence is line 1, and marks count from 0.
    return mark.line + 2 if mark is not None else 1


def _load_toml(raw: str) -> tuple[Any, list[Problem]]:
    try:
        return tomllib.loads(raw), []
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LINE.search(str(exc))
        line = int(match.group(1)) + 1 if match else 1
        message = str(exc).split(" (at")[0]
        return None, [Problem("front-matter", f"invalid TOML front matter: {message}", line)]


def _kind_of(value: Any) -> str:
    return "list" if isinstance(value, list) else type(value).__name__


def _json_safe(value: Any) -> Any:
    """Dates to ISO strings, keys to strings: front matter is stored as JSON."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json_safe(v) for v in value]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
