"""Maintenance windows' pure rules as tables: state from now, the times a window may have, the list
order, the sort keys the alert pipeline's Query relies on, and the request models."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from chalicelib.errors import ValidationFailed
from chalicelib.maintenance import rules
from chalicelib.maintenance.models import MaintenanceWindowCreate, MaintenanceWindowListQuery, MaintenanceWindowPatch

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
SECOND = timedelta(seconds=1)
TINY = timedelta(microseconds=1)


@pytest.mark.parametrize(
    ("start", "end", "state"),
    [
        (NOW + HOUR, NOW + 2 * HOUR, "future"),
        (NOW + TINY, NOW + HOUR, "future"),
        (NOW, NOW + HOUR, "ongoing"),  # exactly at its start: in effect
        (NOW - HOUR, NOW + TINY, "ongoing"),
        (NOW - HOUR, NOW, "past"),  # exactly at its end: over
        (NOW - 2 * HOUR, NOW - HOUR, "past"),
    ],
)
def test_state_is_half_open(start: datetime, end: datetime, state: str) -> None:
    assert rules.state_of(start=start, end=end, now=NOW) == state


@pytest.mark.parametrize(
    ("state", "wanted", "matches"),
    [
        ("ongoing", None, True),
        ("past", None, True),
        ("ongoing", "ongoing", True),
        ("future", "ongoing", False),
        ("future", "future", True),
        ("past", "past", True),
        ("ongoing", "past", False),
        ("ongoing", "open", True),
        ("future", "open", True),
        ("past", "open", False),
    ],
)
def test_state_filter(state: rules.State, wanted: rules.StateFilter | None, matches: bool) -> None:
    assert rules.matches_state(state, wanted) is matches


def test_a_start_in_the_past_means_now() -> None:
    assert rules.effective_start(NOW - HOUR, NOW) == NOW
    assert rules.effective_start(NOW + HOUR, NOW) == NOW + HOUR
    assert rules.effective_start(NOW, NOW) == NOW


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (NOW, NOW + TINY),
        (NOW + HOUR, NOW + HOUR + SECOND),
        (NOW, NOW + rules.MAX_DURATION),  # exactly the longest
        (NOW - HOUR, NOW + HOUR),  # an ongoing window's times
    ],
)
def test_times_a_window_may_have(start: datetime, end: datetime) -> None:
    rules.check_span(start=start, end=end, now=NOW)


@pytest.mark.parametrize(
    ("start", "end", "problem"),
    [
        (NOW + HOUR, NOW + HOUR, "must be after start"),
        (NOW + 2 * HOUR, NOW + HOUR, "must be after start"),
        (NOW - 2 * HOUR, NOW - HOUR, "must be in the future"),
        (NOW - HOUR, NOW, "must be in the future"),  # ending exactly now is no window
        (NOW, NOW + rules.MAX_DURATION + TINY, "a window lasts at most 90 days"),
        (NOW - HOUR, NOW + rules.MAX_DURATION, "a window lasts at most 90 days"),
    ],
)
def test_times_a_window_may_not_have(start: datetime, end: datetime, problem: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        rules.check_span(start=start, end=end, now=NOW)
    assert raised.value.details == {"fields": [{"field": "end", "message": problem}]}


def test_a_problem_is_reported_on_the_field_named() -> None:
    with pytest.raises(ValidationFailed) as raised:
        rules.check_span(start=NOW + 2 * HOUR, end=NOW + HOUR, now=NOW, end_field="start")
    assert raised.value.details == {"fields": [{"field": "start", "message": "must be after start"}]}


def test_list_order_ongoing_then_future_then_past() -> None:
    windows = {
        "past-long-ago": (NOW - 5 * HOUR, NOW - 4 * HOUR),
        "future-later": (NOW + 3 * HOUR, NOW + 4 * HOUR),
        "ongoing-ends-late": (NOW - HOUR, NOW + 5 * HOUR),
        "past-recent": (NOW - 2 * HOUR, NOW - HOUR),
        "future-soon": (NOW + HOUR, NOW + 9 * HOUR),
        "ongoing-ends-soon": (NOW - 3 * HOUR, NOW + HOUR),
    }
    ordered = sorted(
        windows,
        key=lambda name: rules.list_order(start=windows[name][0], end=windows[name][1], window_id=name, now=NOW),
    )
    assert ordered == [
        "ongoing-ends-soon",
        "ongoing-ends-late",
        "future-soon",
        "future-later",
        "past-recent",
        "past-long-ago",
    ]


def test_sort_keys_order_as_time_and_the_bound_excludes_a_window_ending_now() -> None:
    window_id = rules.new_window_id()
    assert rules.is_window_id(window_id)
    bound = rules.ending_after(NOW)
    assert rules.membership_sort_key(NOW, window_id) < bound  # ends exactly now: not after now
    assert rules.membership_sort_key(NOW + TINY, window_id) > bound
    assert rules.membership_sort_key(NOW - TINY, window_id) < bound
    # an offset is the same instant
    other_zone = NOW.astimezone(ZoneInfo("Asia/Kolkata"))
    assert rules.membership_sort_key(other_zone, window_id) == rules.membership_sort_key(NOW, window_id)
    moments = [NOW + timedelta(days=d, microseconds=m) for d in (-400, -1, 0, 1, 30) for m in (0, 1, 999_999)]
    assert sorted(moments, key=rules.sort_time) == sorted(moments)


@pytest.mark.parametrize("value", ["mw_" + "a" * 32, "mw_" + "0123456789abcdef" * 2])
def test_window_ids(value: str) -> None:
    assert rules.is_window_id(value)


@pytest.mark.parametrize("value", ["", "mw_", "mw_" + "A" * 32, "mw_" + "a" * 31, "whs_" + "a" * 32, "mw_" + "g" * 32])
def test_not_window_ids(value: str) -> None:
    assert not rules.is_window_id(value)


# --- request models --------------------------------------------------------------------------------

VALID = {"service_ids": ["SER-00001"], "start": "2026-11-22T13:00:00+02:00", "end": "2026-11-22T14:00:00Z"}


def test_create_accepts_service_ids_and_keys_and_times_with_offsets() -> None:
    body = MaintenanceWindowCreate.model_validate(
        {**VALID, "service_ids": ["SER-00001", "svc_abcdefghij", "ser-00002"], "description": " Disk swap "}
    )
    assert body.service_ids == ["SER-00001", "svc_abcdefghij", "ser-00002"]
    assert body.start == datetime(2026, 11, 22, 11, 0, tzinfo=UTC)
    assert body.description == "Disk swap"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"service_ids": []}, "service_ids"),
        ({"service_ids": ["payments"]}, "service_ids.0"),
        ({"service_ids": ["SER-1"]}, "service_ids.0"),
        ({"service_ids": ["svc_ABCDEFGHIJ"]}, "service_ids.0"),
        ({"service_ids": ["SER-00001"] * (rules.MAX_SERVICES + 1)}, "service_ids"),
        ({"start": "2026-11-22T13:00:00"}, "start"),  # no offset
        ({"start": 1764000000}, "start"),  # epoch seconds
        ({"end": "1999-12-31T23:00:00Z"}, "end"),
        ({"description": "a\u202eb"}, "description"),
        ({"description": "x" * 1001}, "description"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_create_refuses(change: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as raised:
        MaintenanceWindowCreate.model_validate({**VALID, **change})
    assert field in {".".join(str(part) for part in error["loc"]) for error in raised.value.errors()}


@pytest.mark.parametrize("missing", ["service_ids", "start", "end"])
def test_create_requires(missing: str) -> None:
    with pytest.raises(ValidationError):
        MaintenanceWindowCreate.model_validate({k: v for k, v in VALID.items() if k != missing})


def test_patch_needs_a_change_and_refuses_null_except_description() -> None:
    for body in ({}, {"version": 2}, {"end": None}, {"service_ids": None}, {"start": None}):
        with pytest.raises(ValidationError):
            MaintenanceWindowPatch.model_validate(body)
    patch = MaintenanceWindowPatch.model_validate({"description": None, "service_ids": ["SER-00001"], "version": 3})
    assert patch.domain_changes() == {"description": None, "service_refs": ["SER-00001"]}
    assert patch.version == 3


@pytest.mark.parametrize("query", [{"state": "done"}, {"service_id": "payments"}, {"limit": 0}, {"other": "x"}])
def test_list_query_refuses(query: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        MaintenanceWindowListQuery.model_validate(query)
