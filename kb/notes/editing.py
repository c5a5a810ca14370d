"""Writing notes: a new note's file name and front-matter template, and the editor that
opens one. The CLI's ``kb new`` and the TUI's new-note and edit keys use it.
"""

from __future__ import annotations

import os
import shlex
from datetime import date
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from kb.errors import KbError, UsageError
from kb.text import clean_line, one_line, slugify

if TYPE_CHECKING:
    from kb.notes.views import NoteChoice


def create_note(root: Path, folder: str, title: str, setting: str) -> Path:
    """Write a new note titled ``title`` into ``folder`` inside the notes ``root``; returns
    its path. ``setting`` names where ``folder`` came from, for the error when it leads
    outside the root."""
    if not title.strip():
        raise UsageError("a new note needs a title")
    target = (root / folder).resolve()
    if target != root and root not in target.parents:
        raise UsageError(f"{setting}: {folder!r} is outside the notes root {root}")
    target.mkdir(parents=True, exist_ok=True)
    heading = heads_with_title([_start_of(note) for note in _neighbours(target, root)])
    return write_new_note(target, title, new_note_text(title, heading=heading))


def write_new_note(folder: Path, title: str, text: str) -> Path:
    """A new file in ``folder`` named after ``title`` holding ``text``; never over a file
    made meanwhile, by kb or anyone (created exclusively: a name taken between the
    listing and the creation gets the next number)."""
    existing = {p.name.casefold() for p in folder.iterdir()}
    while True:
        path = folder / new_note_name(title, existing)
        try:
            with path.open("x", encoding="utf-8") as out:
                out.write(text)
        except FileExistsError:
            existing.add(path.name.casefold())
            continue
        return path


SAMPLED_NEIGHBOURS = 20  # notes read to learn whether this site repeats the title as `# …`
_START = 4096  # bytes of each: the front matter and the first line of the text


def _neighbours(folder: Path, root: Path) -> list[Path]:
    """A few notes beside where the new one goes, else anywhere in the root: the site's
    own habits. Stops after SAMPLED_NEIGHBOURS, never a walk of a large root."""
    found = sorted(islice((p for p in folder.glob("*.md") if p.is_file()), SAMPLED_NEIGHBOURS))
    if found:
        return found
    return list(islice((p for p in root.rglob("*.md") if p.is_file()), SAMPLED_NEIGHBOURS))


def _start_of(path: Path) -> str:
    try:
        with path.open("rb") as file:
            return file.read(_START).decode("utf-8", errors="replace")
    except OSError:
        return ""


def heads_with_title(starts: list[str]) -> bool:
    """Whether a new note should repeat its title as a ``#`` heading, from the starts of
    the notes beside it: not when most of those that carry a title in front matter (a Hugo
    or Jekyll post) begin their text without one, as the site's theme prints the title
    itself; yes otherwise, and with nothing to learn from."""
    from kb.parse.frontmatter import split_front_matter  # deferred: loads yaml

    titled = headed = 0
    for text in starts:
        front = split_front_matter(text.lstrip("\ufeff"))
        if not isinstance(front.data.get("title"), str):
            continue
        titled += 1
        first = next((line for line in front.body.splitlines() if line.strip()), "")
        headed += first.startswith("# ")
    return titled == 0 or 2 * headed >= titled


def new_note_text(
    title: str, today: date | None = None, tags: list[str] | None = None, heading: bool = True
) -> str:
    """The front-matter template of a new note: written by the YAML library, which quotes
    what needs it, so any title reads back as typed (a backslash, a colon, `#`, `yes`);
    the title again as a ``#`` heading unless ``heading`` is False."""
    import yaml  # deferred: loads yaml

    line = clean_line(title)
    fields = {"title": line, "date": today or date.today(), "tags": list(tags or [])}
    front = yaml.safe_dump(
        fields,
        sort_keys=False,  # title, date, tags
        allow_unicode=True,  # Chinese and emoji as they are, not \u escapes
        default_flow_style=None,  # tags: [a, b]
        width=2**31 - 1,  # never fold a long title over lines
    )
    return f"---\n{front}---\n\n# {line}\n\n" if heading else f"---\n{front}---\n\n"


def new_note_name(title: str, existing: set[str]) -> str:
    """A file name for a new note: the title's slug (Chinese kept), never an existing one."""
    stem = slugify(title)[:80].strip("-") or "untitled"
    name = f"{stem}.md"
    number = 2
    while name.casefold() in existing:
        name = f"{stem}-{number}.md"
        number += 1
    return name


def editor_command(path: Path) -> list[str]:
    """``$VISUAL``, else ``$EDITOR``, else vi, split as a shell would, with the note's path;
    KbError naming the variable when it cannot be split (``code --wait '``)."""
    for name in ("VISUAL", "EDITOR"):
        editor = os.environ.get(name, "")
        if editor.strip():  # blank is unset, as for a shell
            break
    else:
        name, editor = "", "vi"
    try:
        words = shlex.split(editor)
    except ValueError as exc:  # an unbalanced quote or a trailing backslash
        raise KbError(
            f"${name} is not a command kb can run ({one_line(editor)!r}: {str(exc).lower()})"
        ) from None
    return [*words, str(path)]


def start_editor(command: list[str], stdin: int | None = None) -> None:
    """Run the editor and wait for it; KbError when it cannot start (its exit status is
    its own business: many editors exit non-zero for reasons that leave the note fine)."""
    import subprocess  # deferred: 10 modules more

    try:
        subprocess.run(command, check=False, stdin=stdin)
    except OSError as exc:
        cause = exc.strerror or str(exc)
        raise KbError(f"cannot start the editor {one_line(command[0])}: {cause}") from None


def notes_titled(notes: list[NoteChoice], title: str) -> list[NoteChoice]:
    """The notes whose title is ``title``, ignoring case and runs of spaces: ``kb new``
    opens such a note rather than make a second one with the same title."""
    wanted = " ".join(clean_line(title).split()).casefold()
    return [note for note in notes if " ".join(note.title.split()).casefold() == wanted]
