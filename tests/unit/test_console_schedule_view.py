"""The console's day-by-day layout of final shifts and its reading of local form times."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from chalicelib.console.schedule_view import DAYS_SHOWN, Piece, days_of, local_moment, parse_day, window_start
from chalicelib.errors import ValidationFailed
from chalicelib.oncall.rotation import FinalShift
from chalicelib.oncall.wallclock import zone_for

BERLIN = zone_for("Europe/Berlin")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def lines(day_pieces: tuple[Piece, ...]) -> list[tuple[str, str, str | None, str]]:
    return [
        (p.start.strftime("%H:%M"), "24:00" if p.ends_next_day else p.end.strftime("%H:%M"), p.user_id, p.source)
        for p in day_pieces
    ]


def test_the_window_starts_at_local_midnight_today() -> None:
    first, since, until = window_start(BERLIN, utc("2026-11-22T23:30:00"))  # already Monday in Berlin
    assert first == date(2026, 11, 23)
    assert since == utc("2026-11-22T23:00:00")
    assert until == utc("2026-12-06T23:00:00")


def test_a_shift_over_midnight_shows_on_both_days_and_gaps_are_named() -> None:
    shifts = [
        FinalShift("ann", utc("2026-11-22T17:00:00"), utc("2026-11-23T08:00:00"), "layer", layer_id="l1"),
        FinalShift("bob", utc("2026-11-23T10:00:00"), utc("2026-11-23T12:00:00"), "override", override_id="o1"),
    ]
    days = days_of(BERLIN, date(2026, 11, 22), shifts, today=date(2026, 11, 23))
    assert len(days) == DAYS_SHOWN
    assert lines(days[0].pieces) == [("00:00", "18:00", None, "gap"), ("18:00", "24:00", "ann", "layer")]
    assert lines(days[1].pieces) == [
        ("00:00", "09:00", "ann", "layer"),
        ("09:00", "11:00", None, "gap"),
        ("11:00", "13:00", "bob", "override"),
        ("13:00", "24:00", None, "gap"),
    ]
    assert [d.is_today for d in days[:3]] == [False, True, False]
    assert lines(days[5].pieces) == [("00:00", "24:00", None, "gap")]


def test_a_day_across_the_dst_change_is_cut_at_local_midnights() -> None:
    # 2026-10-25: Berlin goes from +02:00 to +01:00 at 03:00 local; the day is 25 hours long.
    shift = FinalShift("ann", utc("2026-10-24T00:00:00"), utc("2026-10-27T00:00:00"), "layer")
    days = days_of(BERLIN, date(2026, 10, 25), [shift], today=date(2026, 10, 25))
    first = days[0].pieces
    assert lines(first) == [("00:00", "24:00", "ann", "layer")]
    assert first[0].end.astimezone(UTC) - first[0].start.astimezone(UTC) == timedelta(hours=25)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("2026-11-25T10:00", "2026-11-25T09:00:00+00:00"),
        ("2026-07-01T10:00:30", "2026-07-01T08:00:30+00:00"),
        ("2026-03-29T02:30", "2026-03-29T01:00:00+00:00"),  # skipped by the spring jump: its end
        ("2026-10-25T02:30", "2026-10-25T00:30:00+00:00"),  # shown twice: the first time
    ],
)
def test_local_times_are_read_in_the_schedules_zone(typed: str, expected: str) -> None:
    assert local_moment(typed, BERLIN, field="start").isoformat() == expected


@pytest.mark.parametrize("typed", ["", "tomorrow", "2026-11-25", "2026-11-25T25:00", "2026-11-25T10:00Z"])
def test_anything_else_is_a_400_naming_the_field(typed: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        local_moment(typed, BERLIN, field="end")
    assert [problem["field"] for problem in caught.value.details["fields"]] == ["end"]


def test_a_first_day_is_a_date_or_nothing() -> None:
    assert parse_day("", field="from") is None
    assert parse_day("2026-12-06", field="from") == date(2026, 12, 6)
    with pytest.raises(ValidationFailed):
        parse_day("06/12/2026", field="from")
