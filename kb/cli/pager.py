"""Long output on a terminal, through a pager, as git does: ``kb help TOPIC`` and ``kb show``.

The page is rendered with Rich into a string first; when it is taller than the terminal it
goes to ``$PAGER`` (``less`` when unset, with ``LESS=FRX`` unless the user set ``LESS``, so
colours show and the screen is not cleared), otherwise straight to the terminal. Piped
output never comes here: each command prints its plain text then. Note text reaches Rich as
Markdown or ``Text``, never as Rich markup, and with control characters already removed.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from kb.cli.output import use_color

if TYPE_CHECKING:
    from rich.console import Console

# What less and lv are given unless the user chose (git's defaults): quit when the page
# fits, pass colours through, leave the text on the screen.
PAGER_ENVIRONMENT = {"LESS": "FRX", "LV": "-c"}


def stdout_is_terminal() -> bool:
    """Whether kb writes to a terminal (the one place the commands and tests ask)."""
    return sys.stdout.isatty()


def pager_command() -> list[str] | None:
    """``$PAGER`` as words (``less`` when unset); None when it says not to page: empty,
    ``cat``, or not a command line shlex can read."""
    value = os.environ.get("PAGER", "less").strip()
    try:
        words = shlex.split(value)
    except ValueError:  # an unclosed quote: not a command kb can run
        return None
    if not words or words == ["cat"]:
        return None
    return words


def show_rendered(render: Callable[[Console], None], *, pager: bool = True) -> None:
    """Run ``render`` on a console as wide as the terminal and print what it drew: through
    the pager when it is taller than the terminal and ``pager`` is true, else directly."""
    from rich.console import Console  # rich: only the commands that render load it

    break_lines_the_kb_way()
    color = use_color()
    # Only a terminal comes here (each command asks stdout_is_terminal first); the console
    # is told so, as it is told whether to colour (--color, NO_COLOR).
    console = Console(color_system="auto" if color else None, force_terminal=color, highlight=False)
    with console.capture() as captured:
        render(console)
    text = captured.get()
    command = pager_command() if pager else None
    if command is not None and text.count("\n") >= console.size.height and _page(command, text):
        return
    sys.stdout.write(text)
    sys.stdout.flush()


def _page(command: list[str], text: str) -> bool:
    """Give ``text`` to the pager and wait for it to end; False when it cannot start (a
    line on stderr says so, and the caller prints the text instead)."""
    import subprocess  # only a page that goes to the pager needs a process

    env = {**PAGER_ENVIRONMENT, **os.environ}
    try:
        pager = subprocess.Popen(command, stdin=subprocess.PIPE, env=env)
    except OSError as exc:
        click.echo(f"kb: cannot run the pager {command[0]!r} ({exc.strerror}); set PAGER", err=True)
        return False
    assert pager.stdin is not None  # stdin=PIPE
    encoding = sys.stdout.encoding or "utf-8"
    try:
        try:
            pager.stdin.write(text.encode(encoding, errors="replace"))
        finally:
            pager.stdin.close()
    except BrokenPipeError:
        pass  # the reader quit before the end of the page: that is all it wanted
    except KeyboardInterrupt:
        pass  # Ctrl-C reaches the pager too; it decides whether to end
    while True:
        try:
            pager.wait()
            return True
        except KeyboardInterrupt:
            continue  # as git: the pager owns the terminal until it ends


def break_lines_the_kb_way() -> None:
    """Rich wraps only at spaces, so Chinese lines end half empty and a Latin word glued to
    Chinese is split; point the name Rich's Text calls at kb's line breaker instead (as
    the app does, kb/tui/wrapping.py). Only where lines break changes, never the text."""
    import rich.text  # rich: only the commands that render load it

    from kb.linebreak import break_lines  # deferred: 4 modules more

    spaces_only = rich.text.divide_line

    def divide_line(text: str, width: int, fold: bool = True) -> list[int]:
        if width < 1:
            return spaces_only(text, width, fold)
        return [start for start, _ in break_lines(text, width)[1:]]

    rich.text.divide_line = divide_line
