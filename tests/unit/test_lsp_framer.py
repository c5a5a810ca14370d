"""kb.lsp.framing: LSP's framing read off a byte stream, every way a client can get it wrong
(issue 37): each bad frame is one error, and the next good message is found."""

from __future__ import annotations

import pytest

from kb.lsp.framing import MAX_HEADER_LINE, Framer, FramingError

GOOD = b'{"id": 1}'
NEXT = b"Content-Length: 9\r\n\r\n" + GOOD


def _read(*chunks: bytes) -> list[bytes | str]:
    framer = Framer()
    out: list[bytes | str] = []
    for chunk in chunks:
        for item in framer.feed(chunk):
            out.append(item.reason if isinstance(item, FramingError) else item)
    return out


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        (NEXT, [GOOD]),
        (NEXT + NEXT, [GOOD, GOOD]),
        (b"Content-Length: 9\n\n" + GOOD, [GOOD]),  # bare \n line ends
        (b"content-length:9\r\nContent-Type: x\r\n\r\n" + GOOD, [GOOD]),
        (b"\r\n" + NEXT, [GOOD]),  # a stray blank line
        (
            b"Content-Length: abc\r\n\r\n" + GOOD + NEXT,
            ["Content-Length is not a length: 'abc'", GOOD],
        ),
        (
            b"Content-Length: -5\r\n\r\n" + GOOD + NEXT,
            ["Content-Length is not a length: '-5'", GOOD],
        ),
        (
            b"Content-Type: x\r\n\r\n" + GOOD + NEXT,
            ["a message without a Content-Length header", GOOD],
        ),
        (b"Content-Length: 0\r\n\r\n" + NEXT, ["an empty message (Content-Length: 0)", GOOD]),
        # Too small: the body's tail glues itself to the next header, which is still found.
        (
            b"Content-Length: 3\r\n\r\n" + GOOD + NEXT,
            [b'{"i', "not a header: 'd\": 1}Content-Length: 9'", GOOD],
        ),
        (
            b"Content-Length: 1000000000000\r\n\r\n" + GOOD + NEXT,
            ["a message of 1,000,000,000,000 bytes; kb lsp reads at most 64 MB", GOOD],
        ),
        (
            b"x" * (MAX_HEADER_LINE + 1) + NEXT,
            [f"a header line longer than {MAX_HEADER_LINE:,} bytes", GOOD],
        ),
    ],
    ids=[
        "one",
        "two",
        "bare-newlines",
        "other-headers",
        "blank-line",
        "not-a-number",
        "negative",
        "missing",
        "zero",
        "too-small",
        "a-terabyte",
        "endless-line",
    ],
)
def test_each_bad_frame_is_one_error_then_the_next_message(
    stream: bytes, expected: list[bytes | str]
) -> None:
    assert _read(stream) == expected
    assert _read(*(stream[i : i + 1] for i in range(len(stream)))) == expected  # byte by byte


def test_skipping_keeps_little_memory() -> None:
    framer = Framer()
    framer.feed(b"Content-Length: 1000000000000\r\n\r\n")
    for _ in range(100):
        assert framer.feed(b"x" * 65536) == []
    assert len(framer.buffer) < 100
    assert framer.feed(NEXT) == [GOOD]
