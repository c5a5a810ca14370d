"""``kb init`` and ``kb ingest``."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from kb.cli.output import (
    ProgressReporter,
    check_exists,
    ingest_summary,
    open_kb,
    path_line,
    relative_path,
    show_problems,
    stop_on_signals,
)
from kb.engines.registry import engine_names
from kb.errors import KbError


@click.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option(
    "--default",
    "make_default",
    is_flag=True,
    help="Also make it the default knowledge base, used from any folder.",
)
def init(directory: Path, make_default: bool) -> None:
    """Create a knowledge base in DIRECTORY: kb.yaml, index/ and, when no notes exist
    yet, notes/. A Hugo site (content/), a Jekyll site (the folder), an Obsidian vault, a
    VuePress, Docusaurus or MkDocs docs folder or a folder of Markdown is read where its
    notes are; kb says what it chose. In a git repository it also writes
    index/.gitignore (*), so the store stays out of git."""
    from kb.knowledge_base import KnowledgeBase  # deferred: 32 modules more

    made = KnowledgeBase.init(directory, make_default)
    click.echo(f"knowledge base ready in {made.home}")
    if made.chose:
        click.echo(made.chose)
    if made.default_config is not None:
        click.echo(f"set as the default knowledge base in {made.default_config}")
    try:
        index_dir = KnowledgeBase.open(made.home).config.index_dir
    except KbError:  # kb.yaml kept as it was, and unreadable: kb ingest will say why
        index_dir = None
    if index_dir is not None:
        ignore = keep_out_of_git(index_dir)
        if ignore is not None:
            click.echo(f"kept the store out of git: wrote {path_line(relative_path(ignore))} (*)")
    click.echo(f"next, read the notes into the store: {_ingest_command(made.home)}")


def _ingest_command(home: Path) -> str:
    """``kb ingest`` when kb run here finds ``home``, else with ``--kb`` naming it."""
    from kb.knowledge_base import KnowledgeBase  # deferred: 32 modules more

    try:
        found, _ = KnowledgeBase.locate()
    except KbError:
        found = None
    if found is not None and found.resolve() == home.resolve():
        return "kb ingest"
    here = Path.cwd().resolve()
    folder = home.resolve()
    named = relative_path(folder) if folder.is_relative_to(here) else str(folder)
    return f"kb --kb {shlex.quote(path_line(named))} ingest"


GITIGNORE = "# kb's store, derived from the notes (kb ingest --rebuild makes it again)\n*\n"


def keep_out_of_git(index_dir: Path) -> Path | None:
    """In a git work tree, an ``index/.gitignore`` holding ``*``, so ``git status`` never
    offers the store (a binary SQLite file that changes on every ingest) for a commit.
    The file written, or None: not in a repository, or an ignore file is already there
    (it is the user's then, and kept as it is)."""
    here = index_dir.resolve()
    if not any((folder / ".git").exists() for folder in (here, *here.parents)):
        return None  # a .git folder, or a .git file in a worktree or submodule
    ignore = index_dir / ".gitignore"
    if ignore.exists():
        return None
    index_dir.mkdir(parents=True, exist_ok=True)
    ignore.write_text(GITIGNORE, encoding="utf-8")
    return ignore


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--rebuild", is_flag=True, help="Forget the store and ingest everything again.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as a JSON object.")
@click.option(
    "-v", "--verbose", is_flag=True, help="List every added, updated, moved and removed note."
)
@click.option(
    "--engine",
    type=click.Choice(engine_names()),
    default=None,
    help="With --rebuild: build and use this search engine from now on.",
)
@click.option(
    "--wait",
    type=float,
    default=None,
    help="Seconds to wait for another ingest to finish (default: 5).",
)
@click.pass_context
def ingest(
    ctx: click.Context,
    paths: tuple[Path, ...],
    rebuild: bool,
    as_json: bool,
    verbose: bool,
    engine: str | None,
    wait: float | None,
) -> None:
    """Read notes into the store: all notes roots, or only PATHS (files or folders).

    Unchanged files are skipped; renamed files are moved, not re-added. Exit codes: 0 the
    run finished (warnings or not), 1 it could not run, 2 usage, 3 another ingest holds
    the lock, 130 interrupted (143 SIGTERM, 129 SIGHUP).
    """
    if rebuild and paths:
        raise click.UsageError("--rebuild works on the whole knowledge base; drop the PATHS")
    kb = open_kb(ctx)
    for given in paths:
        check_exists(kb, given)
    stop_on_signals()
    with ProgressReporter(enabled=not as_json) as progress:
        stats = kb.ingest(
            list(paths) or None, rebuild=rebuild, progress=progress, lock_wait=wait, engine=engine
        )
    show_problems(stats)
    if as_json:
        from kb.text import json_text  # deferred: on first use

        click.echo(json_text(stats.counts()))
        return
    if verbose:
        from kb.text import one_line  # deferred: on first use

        for action, path in stats.changes:
            click.echo(f"{action:8} {one_line(path)}")
    click.echo(ingest_summary(stats))
    advice = kb.engine_advice(stats.added)
    if advice:
        click.echo(f"kb: {advice}", err=True)
    if not paths and not stats.added + stats.updated + stats.moved + stats.unchanged:
        hint = kb.markdown_elsewhere()
        if hint:
            click.echo(f"kb: {hint}", err=True)
