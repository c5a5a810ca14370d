"""``kb new`` writes front matter any title reads back from exactly, so a second
``kb new`` with that title opens the note; an ``$EDITOR`` or ``$VISUAL`` kb cannot split or
start costs one line (a notification in the app), and the note is kept."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from kb.errors import KbError
from kb.notes.editing import editor_command, new_note_text
from kb.parse.frontmatter import split_front_matter
from kb.parse.note import parse_note
from tests.conftest import REPO
from tests.conftest import run_cli as run

TITLES = [
    "Redis 学习笔记",
    "C:\\users\\x",  # was: "\u" read as an escape, the front matter invalid, the date lost
    "a\\b",  # was: "\b" read as a backspace, the title "a"
    "\\",
    "ends with \\",
    "a: b",
    "key:value",
    'He said "hi"',
    "it's",
    "'",
    '"',
    "#tag",
    "x #y",
    "---",
    "...",
    "+++",
    "- item",
    "? what",
    "{braces",
    "[brackets]",
    "*star",
    "&anchor",
    "!tag",
    "%percent",
    "@at",
    "`tick",
    "| pipe",
    "> quote",
    "~",
    "yes",
    "No",
    "on",
    "null",
    "1.0",
    "42",
    "0x10",
    ".inf",
    "2024-01-01",
    "🎉 派对",
    "中文：冒号",
    "Ünïcødé",
    "x" * 300,
]


def front_matter_lines(text: str) -> list[str]:
    return text.split("---\n")[1].splitlines()


@pytest.mark.parametrize("title", TITLES)
def test_every_title_reads_back_as_typed_with_the_date(title: str) -> None:
    text = new_note_text(title, today=date(2026, 12, 1))
    front = split_front_matter(text)
    assert front.problems == []
    assert front.data["title"] == title
    assert front.data["tags"] == []
    assert str(front.data["date"]) == "2026-12-01"
    note = parse_note("x.md", text)
    assert note.title == title
    assert note.date is not None and note.date.startswith("2026-12-01")


def test_the_template_keeps_its_layout() -> None:
    text = new_note_text("Redis 学习笔记", today=date(2026, 12, 1), tags=["db", "缓存"])
    assert text == (
        "---\ntitle: Redis 学习笔记\ndate: 2026-12-01\ntags: [db, 缓存]\n---\n\n"
        "# Redis 学习笔记\n\n"
    )
    assert front_matter_lines(new_note_text("yes", today=date(2026, 12, 1))) == [
        "title: 'yes'",
        "date: 2026-12-01",
        "tags: []",
    ]


@pytest.mark.parametrize("title", ["C:\\users\\x", "a\\b", "a: b #c", "yes"])
def test_new_twice_with_the_same_title_opens_the_note(make_kb, title: str) -> None:
    kb = make_kb({})
    first = run(kb, "new", "--no-edit", "--", title)
    assert first.exit_code == 0, first.output
    again = run(kb, "new", "--no-edit", "--", title)
    assert again.exit_code == 0, again.output
    assert again.stdout == first.stdout
    assert len(list(kb.notes_root.rglob("*.md"))) == 1
    listed = json.loads(run(kb, "list", "--json").stdout)
    assert [(note["title"], note["date"][:4]) for note in listed] == [
        (title, str(date.today().year))
    ]


@pytest.mark.slow
def test_new_twice_with_any_title_makes_one_note(make_kb) -> None:
    kb = make_kb({})
    for title in TITLES:
        made = run(kb, "new", "--no-edit", "--", title)
        assert made.exit_code == 0, (title, made.output)
        assert run(kb, "new", "--no-edit", "--", title).stdout == made.stdout, title
    assert len(list(kb.notes_root.rglob("*.md"))) == len(TITLES)
    listed = json.loads(run(kb, "list", "--json", "--limit", "1000").stdout)
    assert sorted(note["title"] for note in listed) == sorted(TITLES)


# -- the editor -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("visual", "editor", "command"),
    [
        (None, "code --wait", ["code", "--wait", "n.md"]),
        ("nvim -f", "vi", ["nvim", "-f", "n.md"]),
        ("  ", "'my editor' -w", ["my editor", "-w", "n.md"]),  # blank is unset
        (None, None, ["vi", "n.md"]),
        (None, "", ["vi", "n.md"]),
    ],
)
def test_the_editor_command(monkeypatch, visual, editor, command) -> None:
    for name, value in (("VISUAL", visual), ("EDITOR", editor)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert editor_command(Path("n.md")) == command


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("EDITOR", "code --wait '", "no closing quotation"),
        ("EDITOR", 'vim "-c', "no closing quotation"),
        ("VISUAL", "emacs \\", "no escaped character"),
    ],
)
def test_an_editor_that_cannot_be_split_names_the_variable(
    monkeypatch, name: str, value: str, words: str
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv(name, value)
    with pytest.raises(KbError, match=rf"^\${name} is not a command kb can run .*{words}"):
        editor_command(Path("n.md"))


BAD_EDITORS = {
    "an unbalanced quote": ("code --wait '", "$EDITOR is not a command kb can run"),
    "no such program": ("/no/such/editor", "cannot start the editor /no/such/editor"),
    "not a program": (str(REPO / "README.md"), "cannot start the editor "),
}


def use_editor(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("EDITOR", value)
    monkeypatch.delenv("VISUAL", raising=False)


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kb: "), stderr
    return lines[0]


@pytest.mark.parametrize("case", list(BAD_EDITORS))
def test_new_with_a_bad_editor_keeps_and_ingests_the_note(make_kb, monkeypatch, case) -> None:
    value, words = BAD_EDITORS[case]
    use_editor(monkeypatch, value)
    kb = make_kb({})
    result = run(kb, "new", "周末", "读书")
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    line = one_error_line(result.stderr)
    assert words in line and "kept and ingested" in line, line
    made = Path(result.stdout.strip())
    assert made.read_text(encoding="utf-8").startswith("---\ntitle: 周末 读书\ndate: ")
    assert [hit.title for hit in kb.search("周末").hits] == ["周末 读书"]


@pytest.mark.parametrize("case", list(BAD_EDITORS))
def test_edit_with_a_bad_editor_is_one_line(make_kb, monkeypatch, case) -> None:
    value, words = BAD_EDITORS[case]
    use_editor(monkeypatch, value)
    kb = make_kb({"a.md": "# A\n"})
    kb.ingest()
    result = run(kb, "edit", "a.md")
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert words in one_error_line(result.stderr)
    assert (kb.notes_root / "a.md").read_text(encoding="utf-8") == "# A\n"


# -- the app ----------------------------------------------------------------------------


async def settle(app, pilot) -> None:
    from tests.tui.pilot import settle as settle_app

    await settle_app(app, pilot)


def notifications(app) -> list[str]:
    return [str(note.message) for note in app._notifications]


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD_EDITORS))
async def test_the_apps_edit_key_with_a_bad_editor_notifies(make_kb, monkeypatch, case) -> None:
    from kb.tui.app import make_app
    from tests.tui.pilot import open_note

    value, words = BAD_EDITORS[case]
    use_editor(monkeypatch, value)
    kb = make_kb({"redis.md": "# Redis 学习笔记\n\nskiplist\n"})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "Redis")
        await pilot.press("ctrl+e")
        await settle(app, pilot)
        assert app.is_running and app.screen.id == "note"
        assert any(words in message for message in notifications(app)), notifications(app)


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD_EDITORS))
async def test_the_app_comes_back_from_an_editor_that_fails_in_a_terminal(
    make_kb, monkeypatch, case
) -> None:
    """In a terminal the app steps aside for the editor (App.suspend), and Textual takes it
    back only when the block ends normally: an editor failing in it left a blank screen
    that no key redrew."""
    from kb.tui.app import make_app
    from tests.tui.pilot import open_note

    value, words = BAD_EDITORS[case]
    use_editor(monkeypatch, value)
    kb = make_kb({"redis.md": "# Redis 学习笔记\n\nskiplist\n"})
    kb.ingest()
    app = make_app(kb, watch=False)
    steps: list[str] = []

    @contextlib.contextmanager
    def suspend() -> Iterator[None]:  # as Textual's: no finally around the yield
        steps.append("suspended")
        yield
        steps.append("resumed")

    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await open_note(app, pilot, "Redis")
        monkeypatch.setattr(app, "suspend", suspend)
        await pilot.press("ctrl+e")
        await settle(app, pilot)
        # A command that cannot be split never takes the terminal at all.
        unsplit = case == "an unbalanced quote"
        assert steps == ([] if unsplit else ["suspended", "resumed"])
        assert any(words in message for message in notifications(app)), notifications(app)


@pytest.mark.slow
async def test_the_apps_new_note_with_a_bad_editor_keeps_and_shows_it(make_kb, monkeypatch) -> None:
    from kb.tui.app import make_app
    from tests.tui.pilot import current_title, search

    use_editor(monkeypatch, "code --wait '")
    kb = make_kb({"redis.md": "# Redis\n"})
    kb.ingest()
    app = make_app(kb, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await search(app, pilot, "C:\\users\\x")
        await pilot.press("ctrl+n")
        await settle(app, pilot)
        assert any("$EDITOR is not a command" in m for m in notifications(app))
        assert app.screen.id == "note"
        assert current_title(app) == "C:\\users\\x"
    assert (kb.notes_root / "cusersx.md").is_file()


def test_a_stand_in_editor_still_runs(make_kb, monkeypatch, tmp_path: Path) -> None:
    script = tmp_path / "editor.py"
    script.write_text("import sys\nopen(sys.argv[1], 'a').write('edited\\n')\n")
    use_editor(monkeypatch, f"{sys.executable} '{script}'")
    kb = make_kb({"a.md": "# A\n"})
    kb.ingest()
    result = run(kb, "edit", "a.md")
    assert result.exit_code == 0, result.output
    assert (kb.notes_root / "a.md").read_text() == "# A\nedited\n"
