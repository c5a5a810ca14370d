"""Printing ``kb sql``'s rows as ``sqlite-utils query`` prints them: JSON (through
sqlite-utils' own writer), JSON lines, CSV, TSV, or a table on a terminal.

A table cell is note data on a terminal, so it is printed without control characters and
padded by display width (a Chinese character is two columns); JSON keeps exact values
(escaped); CSV and TSV keep them too, except on a terminal, where a control character is
shown escaped (``\\x1b``): a file name must not set the window title or clear the screen.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any, TextIO


def write_rows(columns: list[str], rows: Iterable[tuple[Any, ...]], fmt: str, out: TextIO) -> None:
    if fmt in ("json", "jsonl"):
        # deferred: loads click_default_group, dateutil, numpy, pluggy …
        from sqlite_utils.cli import output_rows

        for line in output_rows(rows, columns, nl=fmt == "jsonl", arrays=False, json_cols=False):
            out.write(line + "\n")
    elif fmt in ("csv", "tsv"):
        writer = csv.writer(out, dialect="excel-tab" if fmt == "tsv" else "excel")
        if out.isatty():
            from kb.text import escape_controls  # deferred: on first use

            columns = [escape_controls(name) for name in columns]
            rows = (
                tuple(escape_controls(v) if isinstance(v, str) else v for v in row) for row in rows
            )
        writer.writerow(columns)
        writer.writerows(rows)
    else:
        _table(columns, rows, out)


def _table(columns: list[str], rows: Iterable[tuple[Any, ...]], out: TextIO) -> None:
    from rich.console import Console  # deferred: loads rich
    from rich.table import Table  # deferred: loads rich
    from rich.text import Text  # deferred: loads rich

    from kb.text import one_line  # deferred: on first use

    table = Table(*columns, show_edge=False, header_style="bold", pad_edge=False)
    for row in rows:
        table.add_row(*(Text("" if value is None else one_line(str(value))) for value in row))
    Console(file=out, highlight=False).print(table)
