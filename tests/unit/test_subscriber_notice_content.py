"""What a subscriber notice says and who hears it: pure rules, as tables."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.statuspage.announcements import incident_change, maintenance_change
from chalicelib.subscriber.notice_content import (
    UnreadableNotice,
    chunks,
    format_moment,
    format_window,
    headline,
    notice_from_dict,
    notice_id,
    notice_to_dict,
    read_notice,
    subject_line,
    wants,
    webhook_body,
)

PAGE = {"page_id": "page_1", "name": "Acme Cloud", "slug": "acme", "url": "https://status.acme.test/status/acme"}


def incident(status: str = "investigating", updates: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "incident_id": "inc_1",
        "title": "Slow checkout",
        "status": status,
        "updates": [
            {"status": status, "body": f"update {n}", "published_at": "2026-11-22T12:00:00+00:00"}
            for n in range(updates, 0, -1)
        ],
        "affected_components": [{"component_id": "cmp_a", "name": "Checkout"}],
        **extra,
    }


def window(change: str) -> dict[str, Any]:
    return {
        "status_page": PAGE,
        "maintenance": {
            "maintenance_id": "mnt_1",
            "title": "Database upgrade",
            "status": "scheduled",
            "scheduled_start": "2026-12-01T02:00:00+00:00",
            "scheduled_end": "2026-12-01T04:00:00+00:00",
            "affected_components": [],
        },
        "change": change,
    }


@pytest.mark.parametrize(
    ("previous", "status", "change"),
    [
        (None, "investigating", "created"),
        (None, "resolved", "created"),
        ("investigating", "identified", "updated"),
        ("identified", "identified", "updated"),
        ("monitoring", "resolved", "resolved"),
        ("resolved", "resolved", "updated"),  # a note after the end is not a second resolution
        ("resolved", "investigating", "updated"),  # reopened
    ],
)
def test_incident_changes(previous: str | None, status: str, change: str) -> None:
    assert incident_change(previous, status) == change


@pytest.mark.parametrize(
    ("previous", "status", "change"),
    [
        (None, "scheduled", "scheduled"),
        (None, "in_progress", "started"),  # created with its start already passed
        (None, "completed", None),  # created already over: a record of the past, not news
        ("scheduled", "scheduled", None),  # retitled, or its components changed
        ("scheduled", "in_progress", "started"),
        ("in_progress", "completed", "completed"),
        ("scheduled", "completed", "completed"),  # the scheduler was down through it
        ("scheduled", "cancelled", "cancelled"),
        ("in_progress", "cancelled", "cancelled"),
    ],
)
def test_maintenance_changes(previous: str | None, status: str, change: str | None) -> None:
    assert maintenance_change(previous, status) == change


@pytest.mark.parametrize(
    ("previous", "status", "change"),
    [
        ("scheduled", "scheduled", "rescheduled"),
        ("in_progress", "in_progress", "rescheduled"),  # extended while under way
        ("scheduled", "in_progress", "started"),  # moved into the past: it started, that is the news
        ("completed", "completed", None),  # never: a final window keeps its times
        (None, "scheduled", "scheduled"),
    ],
)
def test_new_times_are_news_for_an_open_window(previous: str | None, status: str, change: str | None) -> None:
    assert maintenance_change(previous, status, times_moved=True) == change


@pytest.mark.parametrize(
    ("subscribed", "touched", "told"),
    [
        ([], ["cmp_a"], True),  # the whole page
        (None, ["cmp_a"], True),
        (["cmp_a"], ["cmp_a", "cmp_b"], True),
        (["cmp_c"], ["cmp_a", "cmp_b"], False),
        (["cmp_c"], [], True),  # a change naming no component is about the whole page
        ([], [], True),
    ],
)
def test_who_hears_a_change(subscribed: list[str] | None, touched: list[str], told: bool) -> None:
    assert wants(subscribed, touched) is told


def test_a_notice_id_is_the_same_for_every_delivery_of_one_message() -> None:
    first = read_notice(
        kind="incident",
        message_id="m1",
        occurred_at="t",
        payload={"status_page": PAGE, "incident": incident(), "change": "created"},
    )
    again = read_notice(
        kind="incident",
        message_id="m1",
        occurred_at="t",
        payload={"status_page": PAGE, "incident": incident(), "change": "created"},
    )
    other = read_notice(
        kind="incident",
        message_id="m2",
        occurred_at="t",
        payload={"status_page": PAGE, "incident": incident(), "change": "created"},
    )
    assert first.notice_id == again.notice_id == notice_id("m1") != other.notice_id
    assert first.event_type == "incident.created"
    assert first.component_ids == ["cmp_a"] and first.component_names == ["Checkout"]
    assert notice_from_dict(json.loads(json.dumps(notice_to_dict(first)))) == first


@pytest.mark.parametrize(
    ("updates", "status", "change"),
    [(1, "investigating", "created"), (2, "identified", "updated"), (3, "resolved", "resolved")],
)
def test_a_message_from_before_change_was_published_is_read_from_its_updates(
    updates: int, status: str, change: str
) -> None:
    payload = {"status_page": PAGE, "incident": incident(status, updates)}
    assert read_notice(kind="incident", message_id="m", occurred_at="t", payload=payload).change == change


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"status_page": PAGE},
        {"status_page": "acme", "incident": incident(), "change": "created"},
        {"status_page": PAGE, "incident": incident(), "change": "exploded"},
        {"status_page": PAGE, "maintenance": {}, "change": "started"},  # kind incident, maintenance shape
    ],
)
def test_an_unknown_shape_is_refused(payload: dict[str, Any]) -> None:
    with pytest.raises(UnreadableNotice):
        read_notice(kind="incident", message_id="m", occurred_at="t", payload=payload)


def test_maintenance_notices_and_their_words() -> None:
    for change, words in [
        ("scheduled", "Scheduled maintenance"),
        ("started", "Maintenance in progress"),
        ("completed", "Maintenance completed"),
        ("cancelled", "Maintenance cancelled"),
    ]:
        notice = read_notice(kind="maintenance", message_id="m", occurred_at="t", payload=window(change))
        assert notice.event_type == f"maintenance.{change}"
        assert subject_line(notice) == f"[Acme Cloud] {words}: Database upgrade"
        assert notice.component_ids == []


def test_subject_lines_are_one_short_line() -> None:
    long_title = incident(title="Checkout\tis   slow " + "x" * 300)
    payload = {"status_page": {**PAGE, "name": "Acme\nCloud"}, "incident": long_title, "change": "created"}
    notice = read_notice(kind="incident", message_id="m", occurred_at="t", payload=payload)
    line = subject_line(notice)
    assert line.startswith("[Acme Cloud] Investigating: Checkout is slow x")
    assert len(line) == 150 and line.endswith("…") and "\n" not in line and "\t" not in line
    assert headline(notice).startswith("Investigating: ")


def test_times_read_as_people_write_them() -> None:
    assert format_moment("2026-12-01T02:00:00+00:00") == "Tue 1 Dec 2026, 02:00 UTC"
    assert (
        format_window("2026-12-01T02:00:00+00:00", "2026-12-01T04:30:00+00:00") == "Tue 1 Dec 2026, 02:00 to 04:30 UTC"
    )
    assert (
        format_window("2026-12-01T22:00:00+00:00", "2026-12-02T01:00:00+00:00")
        == "Tue 1 Dec 2026, 22:00 to Wed 2 Dec 2026, 01:00 UTC"
    )


def test_chunks() -> None:
    assert list(chunks([], 50)) == []
    assert [len(c) for c in chunks((str(n) for n in range(120)), 50)] == [50, 50, 20]
    assert [len(c) for c in chunks([str(n) for n in range(100)], 50)] == [50, 50]


def test_a_webhook_body_carries_the_change_the_page_and_the_way_out() -> None:
    notice = read_notice(
        kind="maintenance", message_id="m", occurred_at="2026-11-22T12:00:00+00:00", payload=window("started")
    )
    body = json.loads(webhook_body(notice, unsubscribe_url="https://x.test/u?token=t"))
    assert body == {
        "id": notice.notice_id,
        "type": "maintenance.started",
        "occurred_at": "2026-11-22T12:00:00+00:00",
        "status_page": PAGE,
        "maintenance": window("started")["maintenance"],
        "unsubscribe_url": "https://x.test/u?token=t",
    }
