"""Where things live: the knowledge base in use and the user's config. Resolved at call time."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from kb.config import (
    CONFIG_NAME,
    INDEX_DIR,
    MAX_SETTINGS_BYTES,
    AliasFound,
    load_settings_text,
    read_setting_file,
)
from kb.errors import KbError, NoKnowledgeBase

if TYPE_CHECKING:
    from kb.config import Config

ENV_HOME = "KB_HOME"
USER_CONFIG_NAME = "config.yaml"


def user_config_path() -> Path:
    """The per-user settings file (it names the default knowledge base)."""
    from platformdirs import user_config_dir  # deferred: loads platformdirs

    return Path(user_config_dir("kb", appauthor=False)) / USER_CONFIG_NAME


def user_cache_path() -> Path:
    """The per-user cache folder: what kb can always make again (a model's unpacked
    weights), never anything of the notes. On Linux platformdirs' own rule, without its
    import (10-60 ms of a cold search by meaning)."""
    if sys.platform == "linux":
        base = Path(os.environ.get("XDG_CACHE_HOME", "").strip() or "~/.cache")
        return (base if base.is_absolute() else Path("~/.cache")).expanduser() / "kb"
    from platformdirs import user_cache_dir  # deferred: loads platformdirs

    return Path(user_cache_dir("kb", appauthor=False))


def find_knowledge_base(explicit: Path | str | None = None, cwd: Path | None = None) -> Path:
    """The knowledge base folder, by the rules in the README (``--kb``, ``KB_HOME``, ...)."""
    return locate_knowledge_base(explicit, cwd)[0]


def locate_knowledge_base(
    explicit: Path | str | None = None, cwd: Path | None = None
) -> tuple[Path, str]:
    """The knowledge base folder and which rule found it (for ``kb info``)."""
    if explicit:
        return _must_exist(Path(explicit), "--kb"), "--kb"
    if os.environ.get(ENV_HOME):
        return _must_exist(Path(os.environ[ENV_HOME]), ENV_HOME), f"the {ENV_HOME} variable"
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        # Any kb.yaml counts, a folder or a symlink loop too: reading it then says what is
        # wrong, where skipping it would quietly use another knowledge base or none.
        settings = os.path.lexists(folder / CONFIG_NAME)
        if settings or (folder / INDEX_DIR).is_dir():
            marker = CONFIG_NAME if settings else f"{INDEX_DIR}/"
            return folder, f"the nearest folder upward with {marker}"
    if (here / "notes").is_dir():
        return here, "the current folder holds notes/"
    default = read_default_knowledge_base()
    if default is not None:
        config = str(user_config_path())
        return _must_exist(default, config), f"the default in {config}"
    raise NoKnowledgeBase(
        "no knowledge base here: run 'kb init DIR' to create one (add --default to use it "
        "from anywhere), pass --kb DIR, or set KB_HOME"
    )


def read_default_knowledge_base() -> Path | None:
    path = user_config_path()
    if not path.is_file():
        return None
    import yaml  # deferred: loads yaml

    try:
        text = read_setting_file(path, "the user config", MAX_SETTINGS_BYTES)
        data = load_settings_text(text) or {}
    except (KbError, AliasFound, yaml.YAMLError, RecursionError):
        return None
    value = data.get("default_kb") if isinstance(data, dict) else None
    return Path(value).expanduser() if value else None


class InitResult(NamedTuple):
    """What ``kb init`` made: the knowledge base folder, and the user config that names it
    the default (with ``--default``)."""

    home: Path
    default_config: Path | None
    chose: str = ""  # what kind of folder it is and which roots kb.yaml names (kb.sites)


def init_knowledge_base(directory: Path, make_default: bool = False) -> InitResult:
    """Create a knowledge base in ``directory``: kb.yaml with the notes roots the folder's
    layout calls for (a Hugo, Jekyll or docs site, a vault, a folder of Markdown), and
    index/. What is already there is kept; notes/ is made only when no notes exist yet."""
    from kb.sites.layout import detect_layout, inferred_site_hosts  # deferred: 13 modules more

    directory.mkdir(parents=True, exist_ok=True)
    config = directory / CONFIG_NAME
    if config.exists():
        chose = f"kept the settings in {config}"
    else:
        layout = detect_layout(directory)
        roots = ", ".join(layout.roots)
        exclude = f"exclude: [{', '.join(layout.exclude)}]\n" if layout.exclude else ""
        hosts = inferred_site_hosts(directory, layout.exclude) if layout.is_site else ()
        site_hosts = (
            f"# links to these hosts land on this site's pages: they are note links\n"
            f"site_hosts: [{', '.join(hosts)}]\n"
            if hosts
            else ""
        )
        config.write_text(
            f"# kb settings: kb help configuration\n# kb init found {layout.description}\n"
            f"roots: [{roots}]\n{exclude}{site_hosts}",
            encoding="utf-8",
        )
        chose = f"found {layout.description}" if layout.kind != "empty" else layout.description
        if hosts:
            chose += f"; links to {', '.join(hosts)} are links to it (site_hosts)"
        if layout.kind == "empty":
            (directory / "notes").mkdir(exist_ok=True)
    (directory / INDEX_DIR).mkdir(exist_ok=True)
    default_config = write_default_knowledge_base(directory) if make_default else None
    return InitResult(directory.resolve(), default_config, chose)


def write_default_knowledge_base(home: Path) -> Path:
    import yaml  # deferred: loads yaml

    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, object] = {}
    if path.is_file():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            data = {}
    data["default_kb"] = str(home.resolve())
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _must_exist(path: Path, source: str) -> Path:
    path = path.expanduser()
    if not path.is_dir():
        raise NoKnowledgeBase(f"{path} (from {source}) is not a folder")
    return path.resolve()


# -- paths as every command prints them ------------------------------------------------------


def note_file_of(config: Config, note_path: str) -> Path:
    """The file behind a note path (``rel``, or ``root/rel`` with several roots)."""
    root, rel = _root_and_rel(config, note_path)
    return root / rel


def _root_and_rel(config: Config, note_path: str) -> tuple[Path, str]:
    if config.prefixed:
        name, _, rel = note_path.partition("/")
        for root in config.roots:
            if root.name == name:
                return root.path, rel
    return config.roots[0].path, note_path


def shown_note_path(config: Config, note_path: str, cwd: Path | None = None) -> str:
    """A note's file as every command prints it: from the current folder when that folder
    lies inside the knowledge base (the path an editor opens, that kb mv and every NOTE
    argument take back), else whole, so it never climbs out through ``../..``."""
    root, rel = _root_and_rel(config, note_path)
    here = str(cwd) if cwd else os.getcwd()  # noqa: PTH109 (a str, once per path printed)
    if not _inside(str(config.home), here):
        return str(Path(here) / root / rel)  # root is absolute already
    # The root's place from here, worked out once (kb check prints thousands of paths).
    base = _relative_root(str(root), here)
    if base is None:
        return _relative(str(root / rel), here)
    return base + os.sep + rel.replace("/", os.sep)


def shown_file(config: Config, file: Path | str, cwd: Path | None = None) -> str:
    """Any file of the knowledge base as every command prints it (``shown_note_path``)."""
    here = str(cwd) if cwd else os.getcwd()  # noqa: PTH109 (a str, as shown_note_path)
    if not _inside(str(config.home), here):
        return str(Path(here) / file)
    return _relative(str(file), here)


@lru_cache(maxsize=16)
def _inside(home: str, here: str) -> bool:
    """Whether the folder ``here`` is the knowledge base ``home`` or lies inside it."""
    folder, base = Path(here).resolve(), Path(home).resolve()
    return folder == base or base in folder.parents


@lru_cache(maxsize=16)
def _relative_root(root: str, here: str) -> str | None:
    """``root`` relative to ``here``; None when ``here`` is the root or lies inside it (a
    note's path from here need not pass through the root then)."""
    base = _relative(root, here)
    return None if all(part in (".", "..") for part in Path(base).parts) else base


def _relative(file: str, here: str) -> str:
    try:
        return os.path.relpath(file, here)
    except ValueError:  # another drive (Windows)
        return file
