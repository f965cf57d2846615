"""Pure status-page rules: status order, effective and overall status, moves, ids, slugs, cursors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.errors import TransitionNotAllowed, ValidationFailed
from chalicelib.statuspage import rules
from chalicelib.statuspage.cursors import decode_cursor, encode_cursor

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
START = NOW + timedelta(hours=1)
END = NOW + timedelta(hours=2)


def test_every_spec_component_status_is_ranked_once() -> None:
    assert sorted(rules.COMPONENT_STATUS_ORDER) == sorted(
        ["operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance", "unknown"]
    )


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ([], "operational"),
        (["operational", "operational"], "operational"),
        (["operational", "unknown"], "unknown"),
        (["unknown", "under_maintenance"], "under_maintenance"),
        (["under_maintenance", "degraded_performance", "operational"], "degraded_performance"),
        (["degraded_performance", "partial_outage"], "partial_outage"),
        (["partial_outage", "major_outage", "operational"], "major_outage"),
    ],
)
def test_overall_status_is_the_worst(statuses: list[str], expected: str) -> None:
    assert rules.worst(statuses) == expected


@pytest.mark.parametrize(
    ("own", "expected"),
    [
        ("operational", "under_maintenance"),
        ("unknown", "under_maintenance"),
        ("under_maintenance", "under_maintenance"),
        ("degraded_performance", "degraded_performance"),
        ("major_outage", "major_outage"),
    ],
)
def test_maintenance_shows_unless_the_component_is_worse(own: str, expected: str) -> None:
    assert rules.effective_component_status(own, in_maintenance=True) == expected
    assert rules.effective_component_status(own, in_maintenance=False) == own


def test_resolving_stamps_and_reopening_clears_resolved_at() -> None:
    earlier = NOW - timedelta(hours=1)
    assert rules.resolved_at_after("resolved", current=None, now=NOW) == NOW
    assert rules.resolved_at_after("resolved", current=earlier, now=NOW) == earlier  # a second resolve keeps it
    assert rules.resolved_at_after("investigating", current=earlier, now=NOW) is None
    assert rules.incident_is_active("monitoring") and not rules.incident_is_active("resolved")


@pytest.mark.parametrize(
    ("current", "target"),
    [
        ("scheduled", "in_progress"),
        ("scheduled", "cancelled"),
        ("in_progress", "completed"),
        ("in_progress", "cancelled"),
    ],
)
def test_allowed_maintenance_moves(current: str, target: str) -> None:
    rules.check_maintenance_move(current, target)


@pytest.mark.parametrize(
    ("current", "target"),
    [
        ("scheduled", "completed"),
        ("in_progress", "scheduled"),
        ("completed", "in_progress"),
        ("completed", "cancelled"),
        ("cancelled", "scheduled"),
    ],
)
def test_disallowed_maintenance_moves(current: str, target: str) -> None:
    with pytest.raises(TransitionNotAllowed) as raised:
        rules.check_maintenance_move(current, target)
    assert raised.value.details and raised.value.details["from"] == current


def test_only_open_windows_can_be_rescheduled() -> None:
    rules.check_reschedulable("scheduled")
    rules.check_reschedulable("in_progress")
    for final in ("completed", "cancelled"):
        with pytest.raises(TransitionNotAllowed):
            rules.check_reschedulable(final)


def test_window_end_must_follow_start() -> None:
    rules.check_window(START, END)
    for end in (START, START - timedelta(minutes=1)):
        with pytest.raises(ValidationFailed):
            rules.check_window(START, end)


@pytest.mark.parametrize(
    ("status", "now", "expected"),
    [
        ("scheduled", START - timedelta(seconds=1), "scheduled"),
        ("scheduled", START, "in_progress"),
        ("scheduled", END, "completed"),  # the scheduler was down through the whole window
        ("in_progress", END - timedelta(seconds=1), "in_progress"),
        ("in_progress", END, "completed"),
        ("completed", END + timedelta(days=1), "completed"),
        ("cancelled", START, "cancelled"),
    ],
)
def test_due_maintenance_status(status: str, now: datetime, expected: str) -> None:
    assert rules.due_maintenance_status(status, start=START, end=END, now=now) == expected


def test_next_due_at_follows_the_status() -> None:
    assert rules.next_due_at("scheduled", start=START, end=END) == START
    assert rules.next_due_at("in_progress", start=START, end=END) == END
    assert rules.next_due_at("completed", start=START, end=END) is None
    assert rules.next_due_at("cancelled", start=START, end=END) is None


def test_ids_carry_the_prefix_and_sort_by_creation_time() -> None:
    first = rules.new_id("inc", NOW)
    second = rules.new_id("inc", NOW + timedelta(milliseconds=1))
    assert rules.is_id(first, "inc") and not rules.is_id(first, "mnt")
    assert first < second
    assert rules.new_id("inc", NOW) != rules.new_id("inc", NOW)
    assert not rules.is_id("inc_../../x", "inc")


@pytest.mark.parametrize("slug", ["a", "tocsin-demo", "acme-2", "x" * 63])
def test_valid_slugs(slug: str) -> None:
    assert rules.check_slug(slug) == slug


@pytest.mark.parametrize("slug", ["", "-a", "a-", "Acme", "a_b", "a b", "x" * 64, "api", "status", "é"])
def test_invalid_slugs(slug: str) -> None:
    with pytest.raises(ValidationFailed):
        rules.check_slug(slug)


def test_cursor_round_trip_and_tampering() -> None:
    cursor = encode_cursor(secret="s", scope="page_1#incidents", item_key="INC#inc_abc")
    assert decode_cursor(cursor, secret="s", scope="page_1#incidents", prefix="INC#") == "INC#inc_abc"
    refused = [
        ("garbage!!", "page_1#incidents", "INC#"),
        ("", "page_1#incidents", "INC#"),
        (cursor, "page_2#incidents", "INC#"),  # another page's cursor
        (cursor, "page_1#maintenance", "INC#"),  # another listing's cursor
        (cursor, "page_1#incidents", "MNT#"),
        (cursor[:-2] + ("A" if cursor[-2] != "A" else "B") + cursor[-1], "page_1#incidents", "INC#"),
    ]
    for value, scope, prefix in refused:
        with pytest.raises(ValidationFailed):
            decode_cursor(value, secret="s", scope=scope, prefix=prefix)
    with pytest.raises(ValidationFailed):
        decode_cursor(cursor, secret="other", scope="page_1#incidents", prefix="INC#")
