"""The tokens of the notes an ingest wrote, kept for an engine whose index lives outside
the store (tantivy, whoosh) until the store has committed.

A note's streams are about twice its size (bigrams and side streams), so a first ingest of
100,000 notes kept them all in memory: 1.4 GB. The spool keeps the first few megabytes in
memory and the rest in an unnamed temporary file beside the index, compressed; reading a
note back costs a seek and a decompress, much less than tokenizing it again.
"""

from __future__ import annotations

import marshal
import tempfile
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

Streams = tuple[str, ...]

# Characters held in memory (32-64 MB as Python stores them: 1 byte a character for Latin
# text, 2 with Chinese): a few thousand notes' tokens; beyond that, the file.
IN_MEMORY_CHARACTERS = 32_000_000
_LEVEL = 1  # tokens compress ~4x even at the fastest level


class StreamSpool(Mapping[int, Streams]):
    """note id -> streams; written once per note by ingest, read by the engine."""

    def __init__(self, folder: Path, memory_characters: int | None = None) -> None:
        self.folder = folder
        self.memory_characters = (
            IN_MEMORY_CHARACTERS if memory_characters is None else memory_characters
        )
        self._memory: dict[int, Streams] = {}
        self._kept = 0  # characters held in memory
        self._file: IO[bytes] | None = None
        self._spilled: dict[int, tuple[int, int]] = {}  # note id -> (offset, length)
        self._end = 0

    def __setitem__(self, note_id: int, streams: Streams) -> None:
        earlier = self._memory.pop(note_id, None)
        if earlier is not None:
            self._kept -= sum(map(len, earlier))
        self._spilled.pop(note_id, None)  # its old record stays in the file, unread
        size = sum(map(len, streams))
        if self._kept + size < self.memory_characters:
            self._memory[note_id] = streams
            self._kept += size
            return
        record = zlib.compress(marshal.dumps(streams), _LEVEL)
        file = self._open()
        file.seek(self._end)
        file.write(record)
        self._spilled[note_id] = (self._end, len(record))
        self._end += len(record)

    def __getitem__(self, note_id: int) -> Streams:
        if note_id in self._memory:
            return self._memory[note_id]
        offset, length = self._spilled[note_id]  # KeyError when not kept: as a dict
        assert self._file is not None
        self._file.seek(offset)
        streams: Streams = marshal.loads(zlib.decompress(self._file.read(length)))
        return streams

    def __contains__(self, note_id: object) -> bool:
        return note_id in self._memory or note_id in self._spilled

    def __iter__(self) -> Iterator[int]:
        yield from self._memory
        yield from self._spilled

    def __len__(self) -> int:
        return len(self._memory) + len(self._spilled)

    @property
    def spilled(self) -> int:
        """How many notes' streams are in the file."""
        return len(self._spilled)

    def close(self) -> None:
        self._memory.clear()
        self._spilled.clear()
        if self._file is not None:
            self._file.close()  # unnamed: closing it frees its space
            self._file = None

    def _open(self) -> IO[bytes]:
        if self._file is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            # Unnamed where the platform allows it: a killed ingest leaves nothing behind.
            self._file = tempfile.TemporaryFile(prefix="kb-streams-", dir=self.folder)  # noqa: SIM115 - kept open until close()
        return self._file
