"""Small modal dialogs."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class TitleDialog(ModalScreen[str]):
    """Ask for the title of a new note; dismissed with it, or with '' when cancelled."""

    BINDINGS = [Binding("escape", "dismiss('')", "Cancel", id="cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Title of the new note")
            yield Input(id="title")

    @on(Input.Submitted, "#title")
    def submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip())
