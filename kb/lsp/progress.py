"""Work-done progress (``$/progress``) of a long background ingest."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from kb.lsp.server import KbLanguageServer


class Progress:
    """Work-done progress of a background ingest, sent from the server's loop; nothing
    when the client did not ask for it or the ingest ends within half a second."""

    def __init__(self, ls: KbLanguageServer, title: str) -> None:
        self.ls = ls
        self.title = title
        self.token = f"kb-{uuid.uuid4()}"
        self.started = time.monotonic()
        self.begun = False
        self.last = 0.0
        window = ls.client_capabilities.window if ls.loop else None
        self.enabled = bool(window and window.work_done_progress)

    def _send(self, call: Callable[[], None]) -> None:
        if self.enabled and self.ls.loop is not None:
            self.ls.loop.call_soon_threadsafe(call)

    def update(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.started < 0.5 or now - self.last < 0.2:
            return
        self.last = now
        message = f"{done}/{total} notes"
        percentage = int(100 * done / total) if total else None
        if not self.begun:
            self.begun = True
            progress = self.ls.work_done_progress
            begin = types.WorkDoneProgressBegin(self.title, message=message, percentage=percentage)

            def start() -> None:
                progress.create(self.token)
                progress.begin(self.token, begin)

            self._send(start)
        else:
            report = types.WorkDoneProgressReport(message=message, percentage=percentage)
            self._send(lambda: self.ls.work_done_progress.report(self.token, report))

    def done(self, message: str) -> None:
        if self.begun:
            end = types.WorkDoneProgressEnd(message=message)
            self._send(lambda: self.ls.work_done_progress.end(self.token, end))
