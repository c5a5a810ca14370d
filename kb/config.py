"""A knowledge base's settings, read from its optional ``kb.yaml``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.errors import KbError
from kb.models import DEFAULT_TYPED_LINK_KEYS, PARSER_VERSION

CONFIG_NAME = "kb.yaml"
INDEX_DIR = "index"
DEFAULT_ROOTS = ("notes",)
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?i?b?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


@dataclass(frozen=True, slots=True)
class NotesRoot:
    """A folder of notes. ``name`` prefixes note paths when a knowledge base has several."""

    name: str
    path: Path


@dataclass(frozen=True, slots=True)
class Config:
    home: Path
    roots: tuple[NotesRoot, ...]
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    follow_external_symlinks: bool = False
    typed_link_keys: tuple[str, ...] = DEFAULT_TYPED_LINK_KEYS
    site_url: str = ""
    site_hosts: tuple[str, ...] = ()  # other hosts the site was known by (an old domain)
    lock_wait_seconds: float = 5.0
    mention_terms: dict[str, str] = field(default_factory=dict)
    mention_ignore: tuple[str, ...] = ()  # titles and aliases that never make a mention
    new_notes_folder: str = ""
    synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def index_dir(self) -> Path:
        return self.home / INDEX_DIR

    @property
    def store_path(self) -> Path:
        return self.index_dir / "kb.sqlite"

    @property
    def move_journal(self) -> Path:
        """Where ``kb mv`` writes what it is about to do (``kb.move_transaction``)."""
        return self.index_dir / "kb-mv.journal"

    def settings_signature(self) -> str:
        """The settings that change what notes mean; when they change, ingest starts over."""
        import json

        return json.dumps(
            {
                "roots": [[r.name, str(r.path)] for r in self.roots],
                "exclude": list(self.exclude),
                "max_file_size": self.max_file_size,
                "follow_external_symlinks": self.follow_external_symlinks,
                "typed_links": list(self.typed_link_keys),
                "site_url": self.site_url,
                "parser": PARSER_VERSION,
                "site_hosts": list(self.site_hosts),
                "site": self.site_signature(),
            },
            sort_keys=True,
        )

    def site_signature(self) -> dict[str, Any] | None:
        """The static site the notes belong to (kb.sites): its config decides their URLs."""
        from kb.sites import find_site

        site = find_site(self)
        return site.signature() if site else None

    @property
    def prefixed(self) -> bool:
        """Whether note paths carry their root's name (only with several roots)."""
        return len(self.roots) > 1


def load_config(home: Path) -> Config:
    """Read ``home/kb.yaml`` (optional); every setting has a default."""
    raw = _read_yaml(home / CONFIG_NAME)
    try:
        return _config(home, raw)
    except (TypeError, ValueError) as exc:
        raise KbError(f"{home / CONFIG_NAME}: a setting has the wrong type ({exc})") from None


def _config(home: Path, raw: dict[str, Any]) -> Config:
    roots = raw.get("roots", raw.get("root", list(DEFAULT_ROOTS)))
    if isinstance(roots, str):
        roots = [roots]
    if not isinstance(roots, list) or not roots:
        raise KbError(f"{home / CONFIG_NAME}: 'roots' must be a list of folders")
    exclude = raw.get("exclude") or []
    if isinstance(exclude, str):
        exclude = [exclude]
    if not isinstance(exclude, list):
        raise KbError(f"{home / CONFIG_NAME}: 'exclude' must be a list of glob patterns")
    typed = raw.get("typed_links", list(DEFAULT_TYPED_LINK_KEYS))
    return Config(
        home=home,
        roots=_named_roots(home, [str(r) for r in roots]),
        exclude=tuple(str(e) for e in exclude),
        max_file_size=parse_size(raw.get("max_file_size", DEFAULT_MAX_FILE_SIZE)),
        follow_external_symlinks=_flag(raw, "follow_external_symlinks", home),
        typed_link_keys=tuple(str(k) for k in typed) if isinstance(typed, list) else (),
        site_url=str(raw.get("site_url") or "").rstrip("/"),
        site_hosts=tuple(str(h) for h in _string_list(raw.get("site_hosts"), "site_hosts", home)),
        lock_wait_seconds=float(raw.get("lock_wait_seconds", 5.0)),
        mention_terms=_mention_terms(raw.get("mention_terms")),
        mention_ignore=tuple(
            str(n) for n in _string_list(raw.get("mention_ignore"), "mention_ignore", home)
        ),
        new_notes_folder=str(raw.get("new_notes_folder") or ""),
        synonyms=_synonyms(raw.get("synonyms"), home),
        raw=raw,
    )


def _string_list(value: Any, key: str, home: Path) -> list[Any]:
    if not value:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        raise KbError(f"{home / CONFIG_NAME}: '{key}' must be a list")
    return value


def _flag(raw: dict[str, Any], key: str, home: Path) -> bool:
    value = raw.get(key, False)
    if isinstance(value, bool):
        return value
    if str(value).strip().lower() in ("yes", "true", "on", "1"):
        return True
    if str(value).strip().lower() in ("no", "false", "off", "0", ""):
        return False
    raise KbError(f"{home / CONFIG_NAME}: '{key}' must be true or false")


def _mention_terms(value: Any) -> dict[str, str]:
    """``{term: note}``: words that mention a note wherever they appear (Redis, CS336)."""
    if not value:
        return {}
    if not isinstance(value, dict):
        raise KbError("mention_terms: must map each term to a note, such as Redis: redis.md")
    return {str(term): str(note) for term, note in value.items()}


def _synonyms(value: Any, home: Path) -> dict[str, tuple[str, ...]]:
    """``{term: partners}`` for ``kb.glossary``, from a mapping (推理: [inference, serving]),
    a list of groups ([[推理, inference]], the first word being the term) or a glossary
    file in the shipped format (``synonyms: glossary.tsv``, beside kb.yaml)."""
    if not value:
        return {}
    groups: list[list[str]] | None
    if isinstance(value, str):
        groups = _synonym_file(home / Path(value).expanduser())
    else:
        groups = _synonym_groups(value)
    if groups is None:
        raise KbError(
            f"{home / CONFIG_NAME}: 'synonyms' must map words to partners, such as "
            "推理: [inference, serving], list groups, such as [[推理, inference]], "
            "or name a glossary file"
        )
    synonyms: dict[str, tuple[str, ...]] = {}
    for term, *partners in groups:
        synonyms[term] = (*synonyms.get(term, ()), *partners)
    return synonyms


def _synonym_file(path: Path) -> list[list[str]]:
    from kb.glossary import parse_glossary

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = (exc.strerror or str(exc)) if isinstance(exc, OSError) else "not UTF-8 text"
        raise KbError(f"{path}: cannot read the synonyms file: {reason}") from None
    return [list(group) for group in parse_glossary(text, str(path))]


def _synonym_groups(value: Any) -> list[list[str]] | None:
    """Each entry as ``[term, *partners]``, or None when the shape is wrong.
    ``term:`` with no partners is kept: it turns the term's shipped partners off."""
    groups: list[list[Any]] = []
    if isinstance(value, dict):
        for term, partners in value.items():
            listed = [partners] if isinstance(partners, str) else partners or []
            if not isinstance(listed, list):
                return None
            groups.append([term, *listed])
    elif isinstance(value, list) and all(isinstance(g, list) and len(g) >= 2 for g in value):
        groups = value
    else:
        return None
    if all(isinstance(word, str) and word.strip() for group in groups for word in group):
        return groups
    return None


def parse_size(value: Any) -> int:
    """``10MB``, ``512k`` or a plain number of bytes."""
    if isinstance(value, int):
        return value
    match = _SIZE.match(str(value))
    if not match:
        raise KbError(f"max_file_size: cannot read {value!r} as a size such as 10MB")
    number, unit = match.groups()
    return int(float(number) * _UNITS[(unit or "").lower()[:1]])


def _named_roots(home: Path, roots: list[str]) -> tuple[NotesRoot, ...]:
    named: list[NotesRoot] = []
    used: set[str] = set()
    for root in roots:
        path = (home / Path(root).expanduser()).resolve()
        name = path.name or "notes"
        base, n = name, 1
        while name in used:
            n += 1
            name = f"{base}{n}"
        used.add(name)
        named.append(NotesRoot(name, path))
    return tuple(named)


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise KbError(f"{path}: cannot read settings: {str(exc).splitlines()[0]}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise KbError(f"{path}: settings must be a mapping of keys to values")
    return data
