"""Insights time rules as tables: bands of a local hour (DST included), buckets in a zone, ranges,
hours on call split into working hours, off-hours and weekends (across midnight, DST, overlaps)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from chalicelib.errors import ValidationFailed
from chalicelib.insights import periods
from chalicelib.insights.bands import DEFAULT_BANDS, Bands, bands_from
from chalicelib.insights.responder_load import merged, on_call_hours

PARIS = ZoneInfo("Europe/Paris")


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(
    ("moment", "band"),
    [
        (utc(2026, 11, 16, 9), "working"),  # Monday 09:00
        (utc(2026, 11, 16, 8, 59), "evening"),
        (utc(2026, 11, 16, 17, 59), "working"),
        (utc(2026, 11, 16, 18), "evening"),
        (utc(2026, 11, 16, 23), "sleep"),
        (utc(2026, 11, 17, 6, 59), "sleep"),
        (utc(2026, 11, 17, 7), "evening"),
        (utc(2026, 11, 21, 10), "evening"),  # Saturday: no working hours
        (utc(2026, 11, 22, 3), "sleep"),  # Sunday night sleeps as any night
    ],
)
def test_default_bands_of_a_local_hour(moment: datetime, band: str) -> None:
    assert DEFAULT_BANDS.band_of(moment) == band


@pytest.mark.parametrize(
    ("moment", "band"),
    [
        # Paris moves to summer time at 01:00 UTC on Sunday 29 March 2026.
        (utc(2026, 3, 23, 7, 30), "evening"),  # Monday 08:30 CET
        (utc(2026, 3, 30, 7, 30), "working"),  # Monday 09:30 CEST: the same UTC hour, a week later
        (utc(2026, 3, 29, 0, 30), "sleep"),  # 01:30 CET
        (utc(2026, 3, 29, 1, 30), "sleep"),  # 03:30 CEST (02:00-03:00 never happens)
        (utc(2026, 3, 29, 5, 30), "evening"),  # 07:30 CEST on a Sunday
        (utc(2026, 10, 25, 0, 30), "sleep"),  # 02:30 CEST, the first of two
        (utc(2026, 10, 25, 1, 30), "sleep"),  # 02:30 CET, the second
    ],
)
def test_bands_follow_the_local_clock_across_dst(moment: datetime, band: str) -> None:
    assert DEFAULT_BANDS.band_of(moment.astimezone(PARIS)) == band


def test_an_organization_may_set_its_bands_and_bad_ones_are_refused() -> None:
    night_shift = bands_from({"working_start_hour": 22, "working_end_hour": 6, "sleep_start_hour": 10,
                              "sleep_end_hour": 18, "working_days": [0, 1, 2, 3, 4, 5]})  # fmt: skip
    assert night_shift.band_of(utc(2026, 11, 21, 23)) == "working"  # Saturday 23:00
    assert night_shift.band_of(utc(2026, 11, 21, 12)) == "sleep"
    assert night_shift.band_of(utc(2026, 11, 22, 23)) == "evening"  # Sunday is not a working day
    assert bands_from(None) == DEFAULT_BANDS
    assert bands_from({"working_end_hour": 17}) == Bands(working_end=17)
    with pytest.raises(ValidationFailed) as refused:
        bands_from({"working_start_hour": 25, "working_days": [7], "sleep_end_hour": True})
    fields = {problem["field"] for problem in (refused.value.details or {})["fields"]}
    assert fields == {"working_start_hour", "working_days", "sleep_end_hour"}


def test_ranges_default_to_thirty_days_round_to_hours_and_refuse_empty_or_long_ones() -> None:
    now = utc(2026, 11, 22, 12, 30)
    span = periods.checked_range(None, None, now)
    assert (span.since, span.until) == (utc(2026, 10, 23, 12), utc(2026, 11, 22, 13))
    assert len(list(periods.checked_range(utc(2026, 1, 1), utc(2026, 1, 2), now).hours())) == 24
    for since, until in ((utc(2026, 1, 2), utc(2026, 1, 1)), (utc(2026, 1, 1), utc(2026, 1, 1)),
                         (utc(2025, 1, 1), utc(2026, 3, 1))):  # fmt: skip
        with pytest.raises(ValidationFailed):
            periods.checked_range(since, until, now)


def test_daily_buckets_in_paris_across_the_spring_change_and_weeks_and_months() -> None:
    span = periods.checked_range(utc(2026, 3, 27, 23), utc(2026, 3, 30, 22), utc(2026, 4, 1))
    starts = periods.bucket_starts(span, "day", PARIS)
    assert [start.isoformat() for start in starts] == [
        "2026-03-28T00:00:00+01:00",
        "2026-03-29T00:00:00+01:00",
        "2026-03-30T00:00:00+02:00",
    ]
    following = periods.next_start(starts[1], "day", PARIS)
    assert following.astimezone(UTC) - starts[1].astimezone(UTC) == timedelta(hours=23)  # the short day
    assert periods.bucket_start(utc(2026, 11, 22, 23, 30), "week", PARIS).isoformat() == "2026-11-23T00:00:00+01:00"
    assert periods.bucket_start(utc(2026, 11, 22), "week", UTC).isoformat() == "2026-11-16T00:00:00+00:00"
    assert periods.next_start(datetime(2026, 12, 1, tzinfo=PARIS), "month", PARIS).isoformat().startswith("2027-01-01")


def test_hours_on_call_across_midnight_and_a_weekend() -> None:
    # Friday 17:00 to Monday 09:00 UTC: 1 h of Friday's working hours, Friday 18-24 and Monday 0-9
    # off-hours, all of Saturday and Sunday weekend.
    hours = on_call_hours([(utc(2026, 11, 20, 17), utc(2026, 11, 23, 9))], ZoneInfo("UTC"), DEFAULT_BANDS)
    assert hours == {"total": 64.0, "working": 1.0, "off_hours": 15.0, "weekend": 48.0}


def test_hours_on_call_count_real_hours_across_dst_and_overlaps_once() -> None:
    # Saturday 23:00 CET to Sunday 06:00 CEST is six real hours, all weekend.
    night = (utc(2026, 3, 28, 22), utc(2026, 3, 29, 4))
    assert on_call_hours([night], PARIS, DEFAULT_BANDS) == {"total": 6.0, "working": 0.0, "off_hours": 0.0,
                                                             "weekend": 6.0}  # fmt: skip
    # An override inside a layer's shift (two schedules, or a swap) is not counted twice.
    day = (utc(2026, 11, 16, 9), utc(2026, 11, 16, 12))
    inside = (utc(2026, 11, 16, 10, 30), utc(2026, 11, 16, 11))
    after = (utc(2026, 11, 16, 12), utc(2026, 11, 16, 12, 45))
    assert merged([inside, after, day]) == [(day[0], after[1])]
    assert on_call_hours([inside, day, after], ZoneInfo("UTC"), DEFAULT_BANDS)["working"] == 3.75
    # Half an hour of a half-hour zone: India is +05:30, so 03:00 UTC is 08:30 local.
    india = on_call_hours([(utc(2026, 11, 16, 3), utc(2026, 11, 16, 4))], ZoneInfo("Asia/Kolkata"), DEFAULT_BANDS)
    assert (india["off_hours"], india["working"]) == (0.5, 0.5)
