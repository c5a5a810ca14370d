"""kb.notes.listing.parse_filters: `kb list`'s options and `kb mcp`'s list_notes
arguments read into ListFilters by one parser; each face names a bad filter its way."""

from __future__ import annotations

from datetime import datetime

import pytest

from kb.errors import UsageError
from kb.notes.listing import ListFilters, parse_filters

NOTES = {"redis": 7, "跳表": 9}


def cli_option(name: str) -> str:
    return "--" + name.replace("_", "-")


def test_no_filter_given_is_no_filter() -> None:
    assert parse_filters(NOTES.__getitem__) == ListFilters()
    assert parse_filters(NOTES.__getitem__, since="", linked_from="") == ListFilters()


def test_filters_are_read_and_notes_found() -> None:
    filters = parse_filters(
        NOTES.__getitem__,
        tags=["db", "cs336/lecture"],
        series=("数据库",),
        paths=["posts/"],
        since="2024-03",
        until="2024",
        draft=False,
        orphan=True,
        linked_from="redis",
        linking_to="跳表",
    )
    assert filters == ListFilters(
        tags=("db", "cs336/lecture"),
        series=("数据库",),
        paths=("posts/",),
        since="2024-03",
        until="2024",
        draft=False,
        orphan=True,
        linked_from=7,
        linking_to=9,
    )


def test_a_day_that_ends_a_range_is_the_whole_day() -> None:
    filters = parse_filters(
        NOTES.__getitem__, modified_since="2024-03-10", modified_until="2024-03-10"
    )
    assert filters.modified_since is not None and filters.modified_until is not None
    assert filters.modified_since.replace(tzinfo=None) == datetime(2024, 3, 10)
    assert filters.modified_until.replace(tzinfo=None) == datetime(2024, 3, 10, 23, 59, 59, 999999)
    assert filters.modified_since.tzinfo is not None  # local time, compared with file times


@pytest.mark.parametrize(
    ("given", "cli_says", "mcp_says"),
    [
        ({"since": "2024-3"}, "--since takes a date", "since takes a date"),
        ({"until": "March"}, "--until takes a date", "until takes a date"),
        ({"modified_since": "yesterday"}, "--modified-since takes a date", "modified_since takes"),
        ({"modified_until": "2024-13-01"}, "--modified-until takes a date", "modified_until takes"),
    ],
)
def test_a_bad_filter_is_named_as_each_face_spells_it(
    given: dict[str, str], cli_says: str, mcp_says: str
) -> None:
    with pytest.raises(UsageError, match=f"^{cli_says}"):
        parse_filters(NOTES.__getitem__, cli_option, **given)
    with pytest.raises(UsageError, match=f"^{mcp_says}"):
        parse_filters(NOTES.__getitem__, **given)
