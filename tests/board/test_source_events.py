"""What a polled source (plankit.board.sources) tells the open pages: plans added,
changed and removed between two polls, and what it answers between polls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from plankit.board.sources import Source


class _Sheets(Source):
    """A source whose polls return the summaries a test hands it."""

    name = "Google Sheets"

    def __init__(self) -> None:
        super().__init__()
        self.where = "2 spreadsheets"
        self.next: list[dict[str, Any]] = []
        self.touched: set[str] = set()

    def poll(self) -> list[dict[str, Any]]:
        return self._publish(self.next, self.touched)


def _plan(sid: str, done: int) -> dict[str, Any]:
    return {"id": f"sheet:{sid}", "title": f"Budget {sid}", "progress": {"done": done, "total": 4}}


def test_a_first_poll_adds_every_plan_in_the_sources_order() -> None:
    source = _Sheets()
    assert source.plans() == [] and not source.owns("sheet:b")
    source.next = [_plan("b", 0), _plan("a", 1)]
    assert source.poll() == [
        {"type": "added", "plan": _plan("b", 0)},
        {"type": "added", "plan": _plan("a", 1)},
    ]
    assert source.plans() == [_plan("b", 0), _plan("a", 1)]
    assert source.owns("sheet:a") and not source.owns("sheet:c")


def test_only_what_changed_is_told_and_removals_come_first_sorted() -> None:
    source = _Sheets()
    source.next = [_plan("c", 0), _plan("a", 0), _plan("b", 0), _plan("d", 0)]
    source.poll()
    source.next = [_plan("b", 2), _plan("d", 0), _plan("e", 0)]
    assert source.poll() == [
        {"type": "removed", "id": "sheet:a"},
        {"type": "removed", "id": "sheet:c"},
        {"type": "changed", "plan": _plan("b", 2)},
        {"type": "added", "plan": _plan("e", 0)},
    ]
    assert source.poll() == []
    assert not source.owns("sheet:a")


def test_a_plan_whose_page_changed_is_told_though_its_line_did_not() -> None:
    source = _Sheets()
    source.next = [_plan("a", 1), _plan("b", 1)]
    source.poll()
    source.touched = {"sheet:b", "sheet:gone"}
    assert source.poll() == [{"type": "changed", "plan": _plan("b", 1)}]


def test_a_source_says_where_it_reads_and_what_went_wrong() -> None:
    source = _Sheets()
    assert source.status() == {"name": "Google Sheets", "where": "2 spreadsheets", "error": None}
    source.error = "quota exceeded"
    assert source.status()["error"] == "quota exceeded"
    assert source.tracked("plans/auth") is None
    assert source.close() is None


def test_a_source_must_say_how_it_polls_and_shows_a_page() -> None:
    bare = Source()
    assert (bare.name, bare.interval, bare.where, bare.error) == ("", 1.0, "", None)
    query: Mapping[str, str] = {}
    with pytest.raises(NotImplementedError):
        bare.poll()
    with pytest.raises(NotImplementedError):
        bare.detail("sheet:a", query)
    with pytest.raises(NotImplementedError):
        bare.versions("sheet:a")
