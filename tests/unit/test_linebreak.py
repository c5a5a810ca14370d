"""The line breaker for mixed Chinese/English text: where lines break, and that only that."""

from __future__ import annotations

import itertools
import time

import pytest
from rich.cells import cell_len

from kb.linebreak import break_lines, wrap

MIXED = (
    "这篇最早是 2023 年写的，显存带宽是GPU的瓶颈。FlashAttention（FA）在 A100 上跑了 36 秒，"
    "8 分钟后 loss 收敛到 0.35。See https://example.com/path/to_file.md for `kv_cache_size`, "
    "「引号」与『书名』，还有【括号】；他说——好吧……然后“走了”！\n\n第二段 second paragraph。\n"
)

# text, width, the lines as shown
CASES = [
    ("显存带宽是GPU的瓶颈", 10, ["显存带宽是", "GPU的瓶颈"]),
    ("显存带宽是GPU的瓶颈", 11, ["显存带宽是", "GPU的瓶颈"]),
    ("显存带宽是GPU的瓶颈", 13, ["显存带宽是GPU", "的瓶颈"]),
    ("我们用FlashAttention加速", 14, ["我们用", "FlashAttention", "加速"]),
    ("结果如下。结论", 10, ["结果如下。", "结论"]),  # 。 follows its character
    ("好的，我们开始吧", 4, ["好", "的，", "我们", "开始", "吧"]),  # 的 goes with its ，
    ("见（附录）", 4, ["见", "（附", "录）"]),
    ("他说「好」。", 8, ["他说", "「好」。"]),
    ("跑了 36 秒，", 6, ["跑了", "36", "秒，"]),  # too narrow for the unit: ，still not first
    ("a paragraph。", 9, ["a", "paragrap", "h。"]),
    ("跑了 36 秒", 5, ["跑了", "36 秒"]),
    ("跑了36秒", 5, ["跑了", "36秒"]),
    ("用了 8 分钟", 6, ["用了", "8 分钟"]),
    ("显存 16 GB 够用", 6, ["显存", "16 GB", "够用"]),
    ("这篇最早是 2023 年写的", 10, ["这篇最早是", "2023 年写", "的"]),
    ("hello world foo", 7, ["hello", "world", "foo"]),
    ("https://example.com/a_b", 10, ["https://ex", "ample.com/", "a_b"]),
    ("调用kv_cache_size_bytes_total", 8, ["调用", "kv_cache", "_size_by", "tes_tota", "l"]),
    ("他说——好吧……", 6, ["他说——", "好吧……"]),
    ("a\n\nb\n", 5, ["a", "", "b"]),
    ("", 5, [""]),
    ("  indented", 4, ["  in", "dent", "ed"]),
    ("e\u0301e\u0301e\u0301e\u0301", 2, ["e\u0301e\u0301", "e\u0301e\u0301"]),  # combining
    ("中文", 1, ["中", "文"]),  # a wide character on a line of one cell: alone
]


@pytest.mark.parametrize(("text", "width", "expected"), CASES)
def test_lines(text: str, width: int, expected: list[str]) -> None:
    assert wrap(text, width) == expected


@pytest.mark.parametrize("text", [row[0] for row in CASES] + [MIXED])
@pytest.mark.parametrize("width", [1, 2, 5, 10, 40, 80, 120])
def test_only_breaks_change(text: str, width: int) -> None:
    spans = break_lines(text, width)
    assert spans[0][0] == 0
    assert spans[-1][1] == len(text)
    assert all(end == next_start for (_, end), (next_start, _) in itertools.pairwise(spans))
    assert "".join(text[start:end] for start, end in spans) == text


@pytest.mark.parametrize("width", [6, 7, 10, 13, 20, 40, 80])
def test_mixed_note(width: int) -> None:
    lines = wrap(MIXED, width)
    for line in lines:
        assert cell_len(line) <= width, (width, line)
        assert not line or line[0] not in "。，、；：！？）」』】”…", (width, line)
        assert not line or line[-1] not in "（「『【“", (width, line)
    shown = "\n".join(lines)
    for whole in ("GPU", "FlashAttention", "36 秒，", "8 分", "0.35。", "A100", "——", "……"):
        if cell_len(whole) <= width:
            assert whole in shown, (width, whole)


def test_widths_are_cells() -> None:
    assert wrap("中文中文", 4) == ["中文", "中文"]
    assert wrap("abcdabcd", 4) == ["abcd", "abcd"]
    assert all(cell_len(line) <= 20 for line in wrap("显存" * 50, 20))


def test_width_must_be_positive() -> None:
    with pytest.raises(ValueError, match="width"):
        break_lines("text", 0)


def test_a_30kb_note_breaks_in_tens_of_milliseconds() -> None:
    text = MIXED * (30_000 // len(MIXED.encode()) + 1)
    break_lines(text, 80)  # warm the width cache and rich's tables
    started = time.perf_counter()
    break_lines(text, 80)
    assert time.perf_counter() - started < 0.2  # ~10 ms here; generous for slow CI
