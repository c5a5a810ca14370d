"""A knowledge base's settings, read from its optional ``kb.yaml``."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kb.errors import KbError, file_kind, os_error_message
from kb.models import DEFAULT_TYPED_LINK_KEYS, PARSER_VERSION

CONFIG_NAME = "kb.yaml"
INDEX_DIR = "index"
DEFAULT_ROOTS = ("notes",)
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?i?b?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
# Limits that keep a hostile or mistaken kb.yaml (a cloned repository's, found by the upward
# search) from hanging kb or eating its memory: each costs one line, never a hang.
# kb.yaml itself, read by every command: libyaml takes ~0.4 s for 256 KB of it. A big
# glossary belongs in a synonyms file.
MAX_SETTINGS_BYTES = 256 * 1024
MAX_SETTING_FILE_BYTES = 10 * 1024**2  # a file a setting names (synonyms: glossary.tsv)
MAX_FILE_SIZE_LIMIT = 1024**3  # max_file_size: a note is read whole, into memory
MAX_LOCK_WAIT_SECONDS = 24 * 3600
MAX_SYNONYM_GROUPS = 10_000
MAX_MENTION_TERMS = 1_000
MAX_TERM_CHARS = 200  # a glossary word or a mention term; a query holds 500 characters
_SHOWN = 3  # terms named in one warning
# A YAML alias (`*name`) after whitespace or a flow indicator, as front matter finds them:
# text without one needs no check for aliases.
_MAYBE_ALIAS = re.compile(r"(?:^|[\s\[{,:-])\*[^\s,\]}]", re.MULTILINE)


# What a command that reads notes does first with the files changed since the last ingest
# (a stat of each: kb.ingest.changes): ingest them, say in one line on stderr how many
# changed and what to run, or not look; auto ingests them up to 20,000 stored notes.
CHANGED_NOTES = ("auto", "ingest", "tell", "off")
DEFAULT_CHANGED_NOTES = "auto"


@dataclass(frozen=True, slots=True)
class NotesRoot:
    """A folder of notes. ``name`` prefixes note paths when a knowledge base has several."""

    name: str
    path: Path
    # Folders (POSIX, relative to this root) that are roots of their own: their notes
    # belong to the innermost root, so this root's walk skips them.
    inner: tuple[str, ...] = ()


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
    sql_time_limit: float = 5.0  # seconds one kb sql query may run (0: no limit)
    sql_max_rows: int = 100_000  # rows kb sql prints at most (0: no limit)
    mention_terms: dict[str, str] = field(default_factory=dict)
    mention_ignore: tuple[str, ...] = ()  # titles and aliases that never make a mention
    new_notes_folder: str = ""
    changed_notes: str = DEFAULT_CHANGED_NOTES  # CHANGED_NOTES: before a command reads notes
    synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    # What kb.yaml asks for that kb did only in part (a capped list, a duplicate root): one
    # line each, naming the setting, printed by the faces on every command until fixed.
    warnings: tuple[str, ...] = ()

    @property
    def index_dir(self) -> Path:
        return self.home / INDEX_DIR

    @property
    def store_path(self) -> Path:
        return self.index_dir / "kb.sqlite"

    @property
    def move_journal(self) -> Path:
        """Where ``kb mv`` writes what it is about to do (``kb.links.move_transaction``)."""
        return self.index_dir / "kb-mv.journal"

    def settings_signature(self) -> str:
        """The settings that change what notes mean; when they change, ingest starts over."""

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
        from kb.sites import find_site  # deferred: 12 modules more

        site = find_site(self)
        return site.signature() if site else None

    @property
    def prefixed(self) -> bool:
        """Whether note paths carry their root's name (only with several roots)."""
        return len(self.roots) > 1

    def root_of(self, path: Path) -> NotesRoot | None:
        """The root a resolved path belongs to: the innermost when roots are nested."""
        holding = [r for r in self.roots if path == r.path or r.path in path.parents]
        return max(holding, key=lambda r: len(r.path.parts), default=None)


def load_config(home: Path) -> Config:
    """Read ``home/kb.yaml`` (optional); every setting has a default."""
    raw = _read_yaml(home / CONFIG_NAME)
    try:
        return _config(home, raw)
    except (TypeError, ValueError) as exc:
        raise KbError(f"{home / CONFIG_NAME}: a setting has the wrong type ({exc})") from None


def _config(home: Path, raw: dict[str, Any]) -> Config:
    settings = home / CONFIG_NAME
    roots = raw.get("roots", raw.get("root", list(DEFAULT_ROOTS)))
    if isinstance(roots, str):
        roots = [roots]
    if not isinstance(roots, list) or not roots:
        raise KbError(f"{settings}: 'roots' must be a list of folders")
    exclude = raw.get("exclude") or []
    if isinstance(exclude, str):
        exclude = [exclude]
    if not isinstance(exclude, list):
        raise KbError(f"{settings}: 'exclude' must be a list of glob patterns")
    typed = raw.get("typed_links", list(DEFAULT_TYPED_LINK_KEYS))
    warnings: list[str] = []
    return Config(
        home=home,
        roots=_named_roots(home, [str(r) for r in roots], warnings),
        exclude=tuple(str(e) for e in exclude),
        max_file_size=_max_file_size(raw.get("max_file_size", DEFAULT_MAX_FILE_SIZE), settings),
        follow_external_symlinks=_flag(raw, "follow_external_symlinks", home),
        typed_link_keys=tuple(str(k) for k in typed) if isinstance(typed, list) else (),
        site_url=str(raw.get("site_url") or "").rstrip("/"),
        site_hosts=tuple(str(h) for h in _string_list(raw.get("site_hosts"), "site_hosts", home)),
        lock_wait_seconds=_lock_wait(raw.get("lock_wait_seconds", 5.0), settings),
        sql_time_limit=_sql_time_limit(raw.get("sql_time_limit", 5.0), settings),
        sql_max_rows=_sql_max_rows(raw.get("sql_max_rows", 100_000), settings),
        mention_terms=_mention_terms(raw.get("mention_terms"), warnings),
        mention_ignore=tuple(
            str(n) for n in _string_list(raw.get("mention_ignore"), "mention_ignore", home)
        ),
        new_notes_folder=str(raw.get("new_notes_folder") or ""),
        changed_notes=_changed_notes(raw.get("changed_notes"), warnings),
        synonyms=_synonyms(raw.get("synonyms"), home, warnings),
        raw=raw,
        warnings=tuple(warnings),
    )


def _changed_notes(value: Any, warnings: list[str]) -> str:
    if value is None:
        return DEFAULT_CHANGED_NOTES
    if value is False:  # YAML reads a bare `off` as false
        return "off"
    chosen = str(value).strip().lower()
    if chosen not in CHANGED_NOTES:
        warnings.append(
            f"changed_notes: {chosen!r} is none of {', '.join(CHANGED_NOTES)}; "
            f"using {DEFAULT_CHANGED_NOTES}"
        )
        return DEFAULT_CHANGED_NOTES
    return chosen


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


def _mention_terms(value: Any, warnings: list[str]) -> dict[str, str]:
    """``{term: note}``: words that mention a note wherever they appear (Redis, CS336).
    Each term costs ``kb links`` a search, so there are at most MAX_MENTION_TERMS, at
    most a query's MAX_TERMS per note, each no longer than MAX_TERM_CHARS."""
    from kb.query.syntax import MAX_TERMS  # deferred: 3 modules more

    if not value:
        return {}
    if not isinstance(value, dict):
        raise KbError("mention_terms: must map each term to a note, such as Redis: redis.md")
    terms = {str(term): str(note) for term, note in value.items()}
    long = [term for term in terms if len(term) > MAX_TERM_CHARS]
    if long:
        warnings.append(
            f"mention_terms: {_count(long, 'term')} longer than {MAX_TERM_CHARS} characters "
            f"ignored ({_named(long)})"
        )
    terms = {term: note for term, note in terms.items() if len(term) <= MAX_TERM_CHARS}
    if len(terms) > MAX_MENTION_TERMS:
        warnings.append(
            f"mention_terms: {len(terms):,} terms; only the first {MAX_MENTION_TERMS:,} are used"
        )
        terms = dict(list(terms.items())[:MAX_MENTION_TERMS])
    per_note: dict[str, int] = {}
    kept: dict[str, str] = {}
    for term, note in terms.items():
        per_note[note] = per_note.get(note, 0) + 1
        if per_note[note] <= MAX_TERMS:
            kept[term] = note
    crowded = [note for note, count in per_note.items() if count > MAX_TERMS]
    if crowded:
        warnings.append(
            f"mention_terms: more than {MAX_TERMS} terms name {_named(crowded)}; "
            f"only the first {MAX_TERMS} of each are used"
        )
    return kept


def _synonyms(value: Any, home: Path, warnings: list[str]) -> dict[str, tuple[str, ...]]:
    """``{term: partners}`` for ``kb.query.glossary``, from a mapping (推理: [inference, serving]),
    a list of groups ([[推理, inference]], the first word being the term) or a glossary
    file in the shipped format (``synonyms: glossary.tsv``, beside kb.yaml). Capped, with
    a warning, so that no query word expands past the glossary's MAX_PARTNERS."""
    if not value:
        return {}
    groups: list[list[str]] | None
    if isinstance(value, str):
        groups = _synonym_file(home / Path(value).expanduser(), warnings)
    else:
        groups = _synonym_groups(value)
    if groups is None:
        raise KbError(
            f"{home / CONFIG_NAME}: 'synonyms' must map words to partners, such as "
            "推理: [inference, serving], list groups, such as [[推理, inference]], "
            "or name a glossary file"
        )
    return _capped_synonyms(groups, warnings)


def _capped_synonyms(groups: list[list[str]], warnings: list[str]) -> dict[str, tuple[str, ...]]:
    from kb.query.glossary import MAX_PARTNERS, crowded_terms  # deferred: 5 modules more

    if len(groups) > MAX_SYNONYM_GROUPS:
        warnings.append(
            f"synonyms: {len(groups):,} groups; only the first {MAX_SYNONYM_GROUPS:,} are used"
        )
        groups = groups[:MAX_SYNONYM_GROUPS]
    long = list(dict.fromkeys(w for g in groups for w in g if len(w) > MAX_TERM_CHARS))
    if long:
        warnings.append(
            f"synonyms: {_count(long, 'word')} longer than {MAX_TERM_CHARS} characters "
            f"ignored ({_named(long)})"
        )
    synonyms: dict[str, tuple[str, ...]] = {}
    for term, *partners in groups:
        if len(term) <= MAX_TERM_CHARS:
            kept = (p for p in partners if len(p) <= MAX_TERM_CHARS)
            synonyms[term] = tuple(dict.fromkeys((*synonyms.get(term, ()), *kept)))
    crowded = [t for t, partners in synonyms.items() if len(partners) > MAX_PARTNERS]
    for term in crowded:
        synonyms[term] = synonyms[term][:MAX_PARTNERS]
    crowded += [t for t in crowded_terms(synonyms) if t not in crowded]
    if crowded:
        warnings.append(
            f"synonyms: {_named(crowded)} {'has' if len(crowded) == 1 else 'have'} more "
            f"than {MAX_PARTNERS} partners; a query uses only the first {MAX_PARTNERS}"
        )
    return synonyms


def _synonym_file(path: Path, warnings: list[str]) -> list[list[str]]:
    from kb.query.glossary import parse_glossary  # deferred: 5 modules more

    text = read_setting_file(path, "the synonyms file", MAX_SETTING_FILE_BYTES)
    # Only the groups that will be used are parsed: normalising is most of the cost.
    lines = text.splitlines(keepends=True)
    groups = 0
    for number, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith("#"):
            groups += 1
            if groups > MAX_SYNONYM_GROUPS:
                total = groups + sum(
                    1 for rest in lines[number + 1 :] if rest.strip() and rest.lstrip()[:1] != "#"
                )
                warnings.append(
                    f"synonyms: {path} has {total:,} groups; only the first "
                    f"{MAX_SYNONYM_GROUPS:,} are used"
                )
                text = "".join(lines[:number])
                break
    return [list(group) for group in parse_glossary(text, str(path))]


def read_setting_file(path: Path, setting: str, limit: int) -> str:
    """The UTF-8 text of a file a setting names, or one line saying why not: only a regular
    file of at most ``limit`` bytes is read (a FIFO or /dev/zero would hang kb)."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; a regular file ignores it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        reason = "a symlink loop" if exc.errno == errno.ELOOP else _os_reason(exc)
        raise KbError(f"{path}: cannot read {setting}: {reason}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        reason = f"it is {file_kind(mode)}, not a regular file"
        raise KbError(f"{path}: cannot read {setting}: {reason}")
    with os.fdopen(fd, "rb") as file:
        try:
            data = file.read(limit + 1)
        except OSError as exc:
            raise KbError(f"{path}: cannot read {setting}: {_os_reason(exc)}") from None
    if len(data) > limit:
        raise KbError(f"{path}: cannot read {setting}: it is larger than {_size(limit)}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise KbError(f"{path}: cannot read {setting}: not UTF-8 text") from None


def _os_reason(exc: OSError) -> str:
    """The cause alone, in plain words (the path is named before it)."""

    return os_error_message(OSError(exc.errno, exc.strerror))


def _count(items: list[str], noun: str) -> str:
    return f"{len(items):,} {noun}{'' if len(items) == 1 else 's'}"


def _named(items: list[str]) -> str:
    """The first few items, quoted and shortened, and how many more."""
    from kb.text import one_line  # deferred: on first use

    shown = ", ".join(repr(one_line(i[:40] + ("…" if len(i) > 40 else ""))) for i in items[:_SHOWN])
    more = len(items) - _SHOWN
    return f"{shown} and {more:,} more" if more > 0 else shown


def _size(limit: int) -> str:
    return f"{limit // 1024**2} MB" if limit >= 1024**2 else f"{limit // 1024} KB"


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
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    match = _SIZE.match(str(value)) if not isinstance(value, bool) else None
    if not match:
        raise KbError(f"max_file_size: cannot read {value!r} as a size such as 10MB")
    number, unit = match.groups()
    return int(float(number) * _UNITS[(unit or "").lower()[:1]])


def _max_file_size(value: Any, settings: Path) -> int:
    try:
        size = parse_size(value)
    except KbError as exc:
        raise KbError(f"{settings}: {exc}") from None
    if not 0 < size <= MAX_FILE_SIZE_LIMIT:
        raise KbError(
            f"{settings}: max_file_size: {value!r} is not a size kb can use; give one "
            f"between 1 byte and {MAX_FILE_SIZE_LIMIT // 1024**3} GB, such as 10MB"
        )
    return size


def _sql_time_limit(value: Any, settings: Path) -> float:
    seconds = float(value)  # not a number: the wrong type, as load_config says
    if not 0 <= seconds <= MAX_LOCK_WAIT_SECONDS:  # NaN and infinity too
        raise KbError(
            f"{settings}: sql_time_limit: {value!r} is not a time kb can use; give "
            f"seconds between 0 (no limit) and {MAX_LOCK_WAIT_SECONDS}, such as 5"
        )
    return seconds


def _sql_max_rows(value: Any, settings: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise KbError(
            f"{settings}: sql_max_rows: {value!r} is not a number of rows; give a whole "
            "number, 0 for no limit, such as 100000"
        )
    return value


def _lock_wait(value: Any, settings: Path) -> float:
    seconds = float(value)  # not a number: the wrong type, as load_config says
    if not 0 <= seconds <= MAX_LOCK_WAIT_SECONDS:  # NaN and infinity too
        raise KbError(
            f"{settings}: lock_wait_seconds: {value!r} is not a wait kb can use; give "
            f"seconds between 0 and {MAX_LOCK_WAIT_SECONDS}, such as 5"
        )
    return seconds


def _named_roots(home: Path, roots: list[str], warnings: list[str]) -> tuple[NotesRoot, ...]:
    """Each folder once (a duplicate is dropped with a warning), named after its folder;
    a root inside another keeps its notes, which the outer root's walk skips."""
    settings = home / CONFIG_NAME
    paths: dict[Path, str] = {}
    for root in roots:
        try:
            path = (home / Path(root).expanduser()).resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before 3.13)
            reason = "a symlink loop" if isinstance(exc, RuntimeError) else _os_reason(exc)
            raise KbError(f"{settings}: roots: {root!r} cannot be used: {reason}") from None
        if path in paths:
            warnings.append(
                f"roots: {root!r} is the same folder as {paths[path]!r}; its notes are indexed once"
            )
            continue
        paths[path] = root
    named: list[NotesRoot] = []
    used: set[str] = set()
    for path, root in paths.items():
        name = path.name or "notes"
        base, n = name, 1
        while name in used:
            n += 1
            name = f"{base}{n}"
        used.add(name)
        inner = tuple(sorted(p.relative_to(path).as_posix() for p in paths if path in p.parents))
        named.append(NotesRoot(name, path, inner))
        outer = [paths[p] for p in paths if p in path.parents]
        if outer:
            warnings.append(
                f"roots: {root!r} is inside {outer[-1]!r}; its notes belong to {root!r} alone"
            )
    return tuple(named)


def _read_yaml(path: Path) -> dict[str, Any]:
    if not os.path.lexists(path):
        return {}
    import yaml  # deferred: loads yaml

    text = read_setting_file(path, "settings", MAX_SETTINGS_BYTES)
    try:
        data = load_settings_text(text)
    except yaml.YAMLError as exc:
        raise KbError(f"{path}: cannot read settings: {str(exc).splitlines()[0]}") from None
    except AliasFound as exc:
        raise KbError(
            f"{path}: cannot read settings: YAML aliases (*name) are not allowed "
            f"(line {exc.line}); write the values out"
        ) from None
    except RecursionError:
        raise KbError(f"{path}: cannot read settings: nested too deeply") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise KbError(f"{path}: settings must be a mapping of keys to values")
    return data


class AliasFound(Exception):
    """A YAML alias in settings, refused: ``line`` says where."""

    def __init__(self, line: int) -> None:
        super().__init__(line)
        self.line = line


def load_settings_text(text: str) -> Any:
    """YAML without aliases: a few hundred bytes of nested aliases expand to gigabytes
    (front matter refuses them too). The events are read first, by libyaml when present,
    so nothing is built until the text is known to hold none."""
    import yaml  # deferred: loads yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    events = yaml.parse(text, Loader=loader) if _MAYBE_ALIAS.search(text) else ()
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            mark = event.start_mark
            raise AliasFound(mark.line + 1 if mark is not None else 0)
    return yaml.load(text, Loader=loader)
