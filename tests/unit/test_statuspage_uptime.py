"""Daily uptime over 90 days from the time spent in each status (chalicelib/statuspage/uptime.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from chalicelib.statuspage.uptime import (
    DAYS,
    MaintenanceMark,
    Span,
    StatusChange,
    daily_uptime,
    maintenance_spans,
    percent,
    window_start,
)

NOW = datetime(2026, 11, 24, 18, 0, tzinfo=UTC)  # today is 24 Nov; the period starts 27 Aug
TODAY = NOW.date()
LONG_AGO = datetime(2025, 1, 1, tzinfo=UTC)


def at(day: date, hour: float = 0) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(hours=hour)


def days_ago(n: int) -> date:
    return TODAY - timedelta(days=n)


def uptime(changes=(), *, created_at=LONG_AGO, current="operational", maintenance=(), now=NOW):
    return daily_uptime(
        now=now, created_at=created_at, current_status=current, changes=list(changes), maintenance=list(maintenance)
    )


def day(result, n_days_ago: int):
    found = result.days[DAYS - 1 - n_days_ago]
    assert found.day == days_ago(n_days_ago)
    return found


def test_the_period_is_90_utc_days_oldest_first_ending_today():
    result = uptime()
    assert len(result.days) == 90
    assert result.days[0].day == date(2026, 8, 27) and result.days[-1].day == TODAY
    assert window_start(NOW) == datetime(2026, 8, 27, tzinfo=UTC)
    assert window_start(datetime(2026, 11, 24, 23, 0, tzinfo=timezone(timedelta(hours=-5)))) == datetime(
        2026, 8, 28, tzinfo=UTC
    )
    assert all(d.uptime_percent == 100.0 and d.worst_status == "operational" for d in result.days)
    assert result.uptime_percent == 100.0


def test_a_major_outage_counts_fully_as_down():
    # Six hours of major outage on a day: 75 % that day.
    result = uptime(
        [
            StatusChange(at(days_ago(10), 6), "operational", "major_outage"),
            StatusChange(at(days_ago(10), 12), "major_outage", "operational"),
        ]
    )
    assert day(result, 10).uptime_percent == 75.0
    assert day(result, 10).worst_status == "major_outage"
    assert day(result, 9).uptime_percent == 100.0 and day(result, 9).worst_status == "operational"
    assert day(result, 11).worst_status == "operational"


def test_a_partial_outage_counts_three_tenths():
    # A whole day of partial outage: 70 %.
    result = uptime(
        [
            StatusChange(at(days_ago(5)), "operational", "partial_outage"),
            StatusChange(at(days_ago(4)), "partial_outage", "operational"),
        ]
    )
    assert day(result, 5).uptime_percent == 70.0 and day(result, 5).worst_status == "partial_outage"
    assert day(result, 4).uptime_percent == 100.0


@pytest.mark.parametrize("status", ["degraded_performance", "under_maintenance", "operational"])
def test_slow_or_planned_is_not_down_but_is_the_worst_status(status):
    result = uptime(
        [
            StatusChange(at(days_ago(3), 1), "operational", status),
            StatusChange(at(days_ago(3), 2), status, "operational"),
        ]
    )
    assert day(result, 3).uptime_percent == 100.0
    assert day(result, 3).worst_status == status


def test_an_outage_across_midnight_is_split_between_the_days():
    result = uptime(
        [
            StatusChange(at(days_ago(2), 18), "operational", "major_outage"),
            StatusChange(at(days_ago(1), 12), "major_outage", "operational"),
        ]
    )
    assert day(result, 2).uptime_percent == 75.0
    assert day(result, 1).uptime_percent == 50.0


def test_the_worst_of_a_day_wins_and_any_down_time_shows_below_100():
    result = uptime(
        [
            StatusChange(at(days_ago(7), 1), "operational", "degraded_performance"),
            StatusChange(at(days_ago(7), 2), "degraded_performance", "major_outage"),
            StatusChange(at(days_ago(7), 2) + timedelta(seconds=1), "major_outage", "partial_outage"),
            StatusChange(at(days_ago(7), 3), "partial_outage", "operational"),
        ]
    )
    found = day(result, 7)
    assert found.worst_status == "major_outage"
    # One second down + 3599 s at 0.3 of 86 400 s: 98.749... %, rounded down.
    assert found.uptime_percent == percent(86_400, 10 + 3599 * 3) == 98.74
    assert percent(86_400, 1) == 99.99  # a tenth of a second of weighted down time still shows
    assert percent(0, 0) is None


def test_before_the_component_existed_is_no_data():
    created = at(days_ago(2), 12)
    result = uptime([StatusChange(created, None, "operational")], created_at=created)
    assert all(d.uptime_percent is None and d.worst_status is None for d in result.days[:-3])
    assert day(result, 2).uptime_percent == 100.0 and day(result, 2).worst_status == "operational"
    # Measured from creation: half a day of partial outage is 70 % of that half day.
    partial = uptime(
        [
            StatusChange(created, None, "operational"),
            StatusChange(at(days_ago(2), 18), "operational", "partial_outage"),
        ],
        created_at=created,
        current="partial_outage",
    )
    assert day(partial, 2).uptime_percent == 85.0
    assert day(partial, 1).uptime_percent == 70.0


def test_unknown_is_no_data_but_still_reported_as_the_worst():
    result = uptime(
        [StatusChange(at(days_ago(4), 12), "major_outage", "unknown")],
        current="unknown",
    )
    # Before noon major outage (the status the first change replaced), after it unknown: 0 % of what is known.
    assert day(result, 4).uptime_percent == 0.0 and day(result, 4).worst_status == "major_outage"
    assert day(result, 3).uptime_percent is None and day(result, 3).worst_status == "unknown"
    assert day(result, 5).uptime_percent == 0.0


def test_without_changes_in_the_period_the_current_status_held_throughout():
    result = uptime(current="partial_outage")
    assert all(d.uptime_percent == 70.0 for d in result.days)
    assert result.uptime_percent == 70.0


def test_today_counts_only_up_to_now():
    result = uptime([StatusChange(at(TODAY, 12), "operational", "major_outage")], current="major_outage")
    assert day(result, 0).uptime_percent == 66.66  # 6 of 18 hours down, rounded down


def test_the_90_day_figure_weighs_every_second_alike():
    created = at(days_ago(1))
    result = uptime(
        [StatusChange(created, None, "major_outage"), StatusChange(at(days_ago(0), 6), "major_outage", "operational")],
        created_at=created,
    )
    # 24 h + 6 h down of 42 h measured (not the mean of 0 % and 50 %).
    assert result.uptime_percent == percent(42, 30 * 10) == 28.57
    assert uptime(created_at=NOW + timedelta(hours=1)).uptime_percent is None


def test_maintenance_shows_unless_the_own_status_is_worse():
    spans = [Span(at(days_ago(6), 2), at(days_ago(6), 4)), Span(at(days_ago(5), 2), at(days_ago(5), 4))]
    result = uptime(
        [
            StatusChange(at(days_ago(5), 3), "operational", "major_outage"),
            StatusChange(at(days_ago(5), 9), "major_outage", "operational"),
        ],
        maintenance=spans,
    )
    assert day(result, 6).worst_status == "under_maintenance" and day(result, 6).uptime_percent == 100.0
    assert day(result, 5).worst_status == "major_outage" and day(result, 5).uptime_percent == 75.0


def test_an_open_maintenance_span_lasts_until_now():
    result = uptime(maintenance=[Span(at(TODAY, 10), None)])
    assert day(result, 0).worst_status == "under_maintenance" and day(result, 1).worst_status == "operational"


def test_changes_at_one_instant_keep_their_order():
    moment = at(days_ago(1), 12)
    result = uptime(
        [StatusChange(moment, "operational", "major_outage"), StatusChange(moment, "major_outage", "operational")]
    )
    assert day(result, 1).uptime_percent == 100.0 and day(result, 1).worst_status == "operational"


def mark(hour_ago_day: int, hour: float, maintenance_id: str, begins: bool, scheduled: datetime | None = None):
    return MaintenanceMark(at(days_ago(hour_ago_day), hour), maintenance_id, "cmp_1", begins, scheduled)


def test_maintenance_spans_pair_marks_per_window():
    since = window_start(NOW)
    spans = maintenance_spans(
        [mark(3, 2, "mnt_a", True), mark(3, 4, "mnt_a", False), mark(3, 3, "mnt_b", True)], since=since
    )
    assert Span(at(days_ago(3), 2), at(days_ago(3), 4)) in spans
    assert Span(at(days_ago(3), 3), None) in spans and len(spans) == 2


def test_a_stop_without_a_begin_began_before_the_period_or_at_its_scheduled_start():
    since = window_start(NOW)
    (before,) = maintenance_spans([mark(80, 1, "mnt_a", False)], since=since)
    assert before == Span(since, at(days_ago(80), 1))
    scheduled = at(days_ago(80), 0)
    (clamped,) = maintenance_spans([mark(80, 1, "mnt_a", False, scheduled)], since=since)
    assert clamped == Span(scheduled, at(days_ago(80), 1))


def test_a_window_in_progress_without_marks_holds_since_before_the_period():
    since = window_start(NOW)
    assert maintenance_spans([], since=since, in_progress=[("mnt_a", None)]) == [Span(since, None)]
    # With a begin mark in the period, that mark says when.
    spans = maintenance_spans([mark(1, 5, "mnt_a", True)], since=since, in_progress=[("mnt_a", None)])
    assert spans == [Span(at(days_ago(1), 5), None)]
