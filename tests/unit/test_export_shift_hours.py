"""A shift's hours, off-hours and weekend hours in a zone, computed by hand (2026-11-20 is a
Friday; Europe/Paris moves its clocks back on 2026-10-25 at 03:00 local)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from chalicelib.exports.shift_hours import ShiftHours, shift_hours


def utc(day: int, hour: int, month: int = 11, minute: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


PARIS = ZoneInfo("Europe/Paris")
NEW_YORK = ZoneInfo("America/New_York")


@pytest.mark.parametrize(
    ("start", "end", "zone", "expected"),
    [
        (utc(20, 9), utc(20, 18), UTC, ShiftHours(9.0, 0.0, 0.0)),  # a working day
        (utc(20, 9), utc(21, 9), UTC, ShiftHours(24.0, 6.0, 9.0)),  # Fri 18-24 off, Sat 00-09 weekend
        (utc(21, 0), utc(23, 0), UTC, ShiftHours(48.0, 0.0, 48.0)),  # the whole weekend
        (utc(23, 0), utc(23, 9), UTC, ShiftHours(9.0, 9.0, 0.0)),  # Monday before work
        (utc(20, 17, minute=30), utc(20, 18, minute=30), UTC, ShiftHours(1.0, 0.5, 0.0)),
        (utc(20, 9), utc(20, 18), PARIS, ShiftHours(9.0, 1.0, 0.0)),  # 10:00-19:00 in Paris
        (utc(20, 9), utc(21, 9), NEW_YORK, ShiftHours(24.0, 11.0, 4.0)),  # Fri 04:00-Sat 04:00 local
        (utc(21, 9), utc(21, 9), UTC, ShiftHours(0.0, 0.0, 0.0)),
        (utc(21, 9), utc(20, 9), UTC, ShiftHours(0.0, 0.0, 0.0)),
        # The night Paris leaves summer time lasts 25 hours: Sat 24 Oct 22:00 UTC is Sun 00:00 local.
        (utc(24, 22, month=10), utc(25, 23, month=10), PARIS, ShiftHours(25.0, 0.0, 25.0)),
        (utc(25, 23, month=10), utc(26, 23, month=10), PARIS, ShiftHours(24.0, 15.0, 0.0)),
    ],
)
def test_shift_hours(start: datetime, end: datetime, zone: ZoneInfo, expected: ShiftHours) -> None:
    assert shift_hours(start, end, zone) == expected


@pytest.mark.parametrize("zone", [UTC, PARIS, NEW_YORK, ZoneInfo("Asia/Kolkata")])
def test_the_bands_never_exceed_the_hours(zone: ZoneInfo) -> None:
    for days in (1, 3, 7, 29):
        found = shift_hours(utc(1, 7), utc(1 + days, 7), zone)
        assert found.hours == 24.0 * days
        working = found.hours - found.off_hours - found.weekend_hours
        assert 0 <= working <= found.hours
        assert round(working, 2) <= 9.0 * days
