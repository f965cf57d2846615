"""Shift swap rules as tables: which spans may be asked for, on whose shifts, overlaps, who may
take, the status a request has at a moment, and the words of its notices."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib.errors import Conflict, Forbidden, ValidationFailed
from chalicelib.oncall import Layer, Override, Schedule, final_shifts
from chalicelib.oncall.handoff_text import SHORT_TEXT_MAX, gsm7_length
from chalicelib.oncall.swap_rules import (
    SwapRequest,
    check_no_overlap,
    check_on_call,
    check_span,
    check_taker,
    members_of,
    open_first,
    uncovered,
)
from chalicelib.oncall.swap_text import render_swap_notice

NOW = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)  # Monday 08:00


def at(day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(2026, 1, day, hour, minute, tzinfo=UTC)


# a: Mon 09:00 - Tue 09:00, b: Tue 09:00 - Wed 09:00, a: Wed 09:00 - Thu 09:00, ...
SCHEDULE = Schedule(
    "sch_1",
    "Payments primary",
    "UTC",
    (Layer("lyr_1", "Daily", ("a", "b"), "daily", "09:00", at(5, 9)),),
    (Override("ovr_1", "c", at(7, 12), at(7, 14)),),
)
SHIFTS = final_shifts(SCHEDULE, at(5), at(12))


def request(**changes: Any) -> SwapRequest:
    values: dict[str, Any] = {
        "swap_id": "swp_1",
        "organization_id": "org_1",
        "schedule_id": "sch_1",
        "requester_id": "a",
        "start": at(5, 12),
        "end": at(5, 18),
        "status": "open",
        "created_at": NOW,
    }
    values.update(changes)
    return SwapRequest(**values)


SPAN_CASES: list[tuple[str, datetime, datetime, list[tuple[str, str]]]] = [
    ("a span ahead", at(5, 12), at(5, 18), []),
    ("starting now", NOW, at(5, 18), []),
    ("started ten minutes ago (a form filled in a little earlier)", NOW - timedelta(minutes=10), at(5, 18), []),
    ("started an hour ago", NOW - timedelta(hours=1), at(5, 18), [("start", "must not be in the past")]),
    ("backwards", at(5, 18), at(5, 12), [("end", "must be after the start")]),
    ("empty", at(5, 12), at(5, 12), [("end", "must be after the start")]),
    ("over", at(4), at(4, 6), [("end", "must be in the future")]),
    ("31 days is the most", at(5, 12), at(5, 12) + timedelta(days=31), []),
    (
        "longer",
        at(5, 12),
        at(5, 12) + timedelta(days=31, minutes=1),
        [("end", "must be at most 31 days after the start")],
    ),
]


@pytest.mark.parametrize(("name", "start", "end", "problems"), SPAN_CASES, ids=[case[0] for case in SPAN_CASES])
def test_which_spans_may_be_asked_for(
    name: str, start: datetime, end: datetime, problems: list[tuple[str, str]]
) -> None:
    if not problems:
        check_span(start, end, NOW)
        return
    with pytest.raises(ValidationFailed) as caught:
        check_span(start, end, NOW)
    assert [(p["field"], p["message"]) for p in caught.value.details["fields"]] == problems  # type: ignore[index]


ON_CALL_CASES: list[tuple[str, str, datetime, datetime, str | None]] = [
    ("within a's shift", "a", at(5, 12), at(5, 18), None),
    ("a's whole shift", "a", at(5, 9), at(6, 9), None),
    ("across a's two shifts, with b's between", "a", at(5, 12), at(7, 18), "end"),
    ("b's span, asked by a", "a", at(6, 12), at(6, 18), "start"),
    ("a's shift with c's override inside it", "a", at(7, 10), at(7, 16), "end"),
    ("c asks for their override", "c", at(7, 12), at(7, 14), None),
    ("before the rotation starts", "a", at(5, 6), at(5, 12), "start"),
]


@pytest.mark.parametrize(
    ("name", "requester", "start", "end", "wrong"), ON_CALL_CASES, ids=[case[0] for case in ON_CALL_CASES]
)
def test_a_person_asks_only_for_their_own_shifts(
    name: str, requester: str, start: datetime, end: datetime, wrong: str | None
) -> None:
    if wrong is None:
        check_on_call(SHIFTS, requester, start, end)
        assert uncovered(SHIFTS, requester, (start, end)) == []
        return
    with pytest.raises(ValidationFailed) as caught:
        check_on_call(SHIFTS, requester, start, end)
    assert caught.value.details == {
        "fields": [
            {"field": wrong, "message": "you are not on call for all of this span; ask only for your own shifts"}
        ]
    }


def test_one_persons_open_requests_never_overlap() -> None:
    existing = [request(), request(swap_id="swp_2", requester_id="b", start=at(6, 12), end=at(6, 18))]
    with pytest.raises(Conflict) as caught:
        check_no_overlap(existing, "a", at(5, 17), at(5, 20), NOW)
    assert caught.value.details == {"swap_request_id": "swp_1"}
    check_no_overlap(existing, "a", at(5, 18), at(5, 20), NOW)  # touching is fine
    check_no_overlap(existing, "a", at(6, 12), at(6, 13), NOW)  # b's is b's
    check_no_overlap([request(status="withdrawn")], "a", at(5, 12), at(5, 18), NOW)
    check_no_overlap([request()], "a", at(5, 12), at(5, 18), at(5, 12))  # expired by then


@pytest.mark.parametrize(
    ("status", "moment", "expected"),
    [
        ("open", NOW, "open"),
        ("open", at(5, 12), "expired"),
        ("taken", at(5, 13), "taken"),
        ("withdrawn", NOW, "withdrawn"),
        ("expired", NOW, "expired"),
    ],
)
def test_the_status_at_a_moment(status: str, moment: datetime, expected: str) -> None:
    assert request(status=status).status_at(moment) == expected


TAKER_CASES: list[tuple[str, SwapRequest, str, type[Exception] | None, str]] = [
    ("b, another member", request(), "b", None, ""),
    ("the requester", request(), "a", Conflict, "withdraw the request instead"),
    ("c, only in an override", request(), "c", Forbidden, "Only members of the schedule's rotations"),
    ("taken already", request(status="taken", taken_by="b"), "b", Conflict, "Someone took this request already."),
    ("withdrawn", request(status="withdrawn"), "b", Conflict, "The request was withdrawn."),
    ("its start has passed", request(start=NOW - timedelta(minutes=1)), "b", Conflict, "expired"),
]


@pytest.mark.parametrize(("name", "subject", "taker", "error", "words"), TAKER_CASES, ids=[c[0] for c in TAKER_CASES])
def test_who_may_take(name: str, subject: SwapRequest, taker: str, error: type[Exception] | None, words: str) -> None:
    if error is None:
        check_taker(subject, SCHEDULE, taker, NOW)
        return
    with pytest.raises(error) as caught:
        check_taker(subject, SCHEDULE, taker, NOW)
    assert words in str(caught.value)


def test_members_and_the_order_requests_are_listed_in() -> None:
    assert members_of(SCHEDULE) == ["a", "b"]
    later = request(swap_id="swp_later", start=at(6, 12), end=at(6, 13))
    done = request(swap_id="swp_done", status="taken", created_at=NOW + timedelta(minutes=5))
    old = request(swap_id="swp_old", status="withdrawn", created_at=NOW - timedelta(days=1))
    assert [r.swap_id for r in open_first([old, later, done, request()], NOW)] == [
        "swp_1",
        "swp_later",
        "swp_done",
        "swp_old",
    ]


@pytest.mark.parametrize("kind", ["asked", "taken", "expired"])
@pytest.mark.parametrize("name", ["Payments primary", "Ödön's very long schedule name " * 6, "{weird} name"])
def test_swap_notice_words_fit_one_sms_and_name_the_zone(kind: str, name: str) -> None:
    subject = replace(request(note="dentist"), taken_by="b")
    words = render_swap_notice(
        kind,  # type: ignore[arg-type]
        subject,
        schedule_name=name,
        time_zone="Europe/Berlin",
        requester_name="Ana {Lima}",
        taker_name="Bo",
    )
    assert gsm7_length(words.short_text) <= SHORT_TEXT_MAX
    assert "Europe/Berlin" in words.short_text and "Europe/Berlin" in words.text
    assert "Mon 05 Jan 13:00" in words.subject  # 12:00Z in Berlin
    if kind == "asked":
        assert words.subject.startswith("Ana {Lima} asks for cover on")
        assert "Note: dentist" in words.text
    elif kind == "taken":
        assert words.subject.startswith("Bo covers your shift on")
    else:
        assert words.subject.startswith("Nobody took your cover request")
