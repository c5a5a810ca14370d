"""Reading the editor's messages off stdin: LSP's framing (``Content-Length: N``, a blank
line, N bytes of JSON), read strictly enough to find the messages and leniently enough to
never lose the thread.

pygls's own loop waits for ever after a header it cannot read (``Content-Length: abc``,
a negative or missing length, a length too small, which leaves the rest of the body where
the next header should be) and allocates whatever length it is told (a terabyte: a
MemoryError). ``Framer`` is fed the bytes and returns messages and framing errors; after an
error it skips to the next ``Content-Length:`` wherever it stands (a too-short body glues
the next header to its tail), so the server answers the error and goes on. Bare ``\\n``
line ends are accepted. ``FramedReader`` puts it in front of pygls's loop, which then only
ever sees well-formed frames.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import BinaryIO

log = logging.getLogger("kb.lsp")
MAX_MESSAGE_BYTES = 64 * 1024**2  # a 20 MB note, escaped in JSON, fits
MAX_HEADER_LINE = 8 * 1024
_CONTENT_LENGTH = re.compile(rb"content-length:", re.IGNORECASE)
_MARK = len(b"content-length:")
# A header name is an HTTP token; anything else (a JSON tail before a glued header) is not
# a header.
_HEADER = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*")
_READ_SIZE = 64 * 1024


@dataclass(frozen=True, slots=True)
class FramingError:
    """Bytes that are no message: why, for the parse error and the log."""

    reason: str


class Framer:
    """Bytes in, messages (``bytes`` bodies) and ``FramingError``s out, in order."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.length: int | None = None  # the Content-Length of the headers being read
        self.headers = 0  # header lines of the message being read
        self.body: int | None = None  # bytes of body awaited
        self.lost = False  # skipping to the next Content-Length after an error

    def feed(self, data: bytes) -> list[bytes | FramingError]:
        self.buffer += data
        out: list[bytes | FramingError] = []
        while self._step(out):
            pass
        return out

    def pending(self) -> bool:
        """Whether the input stopped inside a message."""
        return self.body is not None or self.headers > 0

    def _step(self, out: list[bytes | FramingError]) -> bool:
        """One step on the buffer; False when more bytes are needed."""
        if self.lost:
            return self._resync()
        if self.body is not None:
            if len(self.buffer) < self.body:
                return False
            out.append(bytes(self.buffer[: self.body]))
            del self.buffer[: self.body]
            self.body = None
            return True
        end = self.buffer.find(b"\n", 0, MAX_HEADER_LINE + 1)
        if end < 0:
            if len(self.buffer) > MAX_HEADER_LINE:
                return self._error(out, f"a header line longer than {MAX_HEADER_LINE:,} bytes")
            return False
        line = bytes(self.buffer[:end]).removesuffix(b"\r")
        if not line:
            del self.buffer[: end + 1]
            return self._end_of_headers(out)
        match = _HEADER.fullmatch(line)
        if match is None:
            # Not consumed: a glued header may stand in this very line.
            return self._error(out, f"not a header: {_shown(line)}")
        del self.buffer[: end + 1]
        self.headers += 1
        name, value = match.groups()
        if name.lower() == b"content-length":
            if not value.isdigit():
                return self._error(out, f"Content-Length is not a length: {_shown(value)}")
            self.length = int(value)
        return True

    def _end_of_headers(self, out: list[bytes | FramingError]) -> bool:
        if self.headers == 0:
            return True  # a stray blank line between messages
        length, self.length, self.headers = self.length, None, 0
        if length is None:
            return self._error(out, "a message without a Content-Length header")
        if length == 0:
            out.append(FramingError("an empty message (Content-Length: 0)"))
            return True
        if length > MAX_MESSAGE_BYTES:
            return self._error(
                out,
                f"a message of {length:,} bytes; kb lsp reads at most "
                f"{MAX_MESSAGE_BYTES // 1024**2} MB",
            )
        self.body = length
        return True

    def _error(self, out: list[bytes | FramingError], reason: str) -> bool:
        out.append(FramingError(reason))
        self.length, self.headers, self.body = None, 0, None
        self.lost = True
        # The header that failed is skipped, so that a bad Content-Length is not found again.
        if self.buffer[:_MARK].lower() == b"content-length:":
            del self.buffer[:_MARK]
        return True

    def _resync(self) -> bool:
        found = _CONTENT_LENGTH.search(self.buffer)
        if found is None:
            # Keep a tail that may be the start of the next header, no more (bounded memory).
            del self.buffer[: max(0, len(self.buffer) - _MARK)]
            return False
        del self.buffer[: found.start()]
        self.lost = False
        return True


def _shown(raw: bytes) -> str:
    text = raw[:60].decode("utf-8", "replace")
    return repr(text + ("…" if len(raw) > 60 else ""))


class FramedReader:
    """pygls's reader interface (``readline``, ``readexactly``) over a ``Framer``: each
    message is handed on as a canonical frame; each framing error goes to ``on_error``
    (in the event loop's thread) before the next message."""

    def __init__(
        self, stream: BinaryIO, executor: Executor, on_error: Callable[[str], None]
    ) -> None:
        self.stream = stream
        self.executor = executor
        self.on_error = on_error
        self.framer = Framer()
        self.ready: list[bytes | FramingError] = []
        self.body: bytes | None = None
        self.header_sent = False
        self.ended = False

    async def readline(self) -> bytes:
        if self.body is not None and self.header_sent:
            return b"\r\n"  # the blank line after the header
        loop = asyncio.get_running_loop()
        while True:
            if not self.ready:
                self.ready = await loop.run_in_executor(self.executor, self._read_more)
                if not self.ready:
                    return b""  # the input ended
            item = self.ready.pop(0)
            if isinstance(item, FramingError):
                self.on_error(item.reason)
                continue
            self.body, self.header_sent = item, True
            return b"Content-Length: %d\r\n" % len(item)

    async def readexactly(self, n: int) -> bytes:
        body, self.body, self.header_sent = self.body or b"", None, False
        return body

    def _read_more(self) -> list[bytes | FramingError]:
        """The next messages or errors; [] at the end of the input."""
        read = getattr(self.stream, "read1", self.stream.read)
        while not self.ended:
            data = read(_READ_SIZE)
            if not data:
                self.ended = True
                if self.framer.pending():  # nobody is left to answer: the log says it
                    log.warning("the input ended inside a message; stopping")
                return []
            found = self.framer.feed(data)
            if found:
                return found
        return []
