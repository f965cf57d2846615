"""A moment as a person reads it in their zone, the zone named; which names are zones. Pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from chalicelib import zones
from chalicelib.templates import engine


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(
    ("moment", "zone", "console", "message"),
    [
        (utc(2026, 11, 27, 13, 5), "Europe/Paris", "27 Nov 2026, 14:05 CET", "Fri 27 Nov 2026, 14:05 CET"),
        (utc(2026, 7, 1, 12, 0), "Europe/Paris", "1 Jul 2026, 14:00 CEST", "Wed 1 Jul 2026, 14:00 CEST"),
        (utc(2026, 11, 27, 13, 5), "UTC", "27 Nov 2026, 13:05 UTC", "Fri 27 Nov 2026, 13:05 UTC"),
        (utc(2026, 11, 27, 13, 5), None, "27 Nov 2026, 13:05 UTC", "Fri 27 Nov 2026, 13:05 UTC"),
        # The day changes with the zone.
        (utc(2026, 11, 27, 23, 30), "Asia/Tokyo", "28 Nov 2026, 08:30 JST", "Sat 28 Nov 2026, 08:30 JST"),
        (utc(2026, 11, 27, 3, 0), "America/Los_Angeles", "26 Nov 2026, 19:00 PST", "Thu 26 Nov 2026, 19:00 PST"),
        # Zones whose abbreviation is only an offset are named by it.
        (utc(2026, 11, 27, 13, 5), "Asia/Dubai", "27 Nov 2026, 17:05 UTC+4", "Fri 27 Nov 2026, 17:05 UTC+4"),
        (utc(2026, 11, 27, 13, 5), "Asia/Kolkata", "27 Nov 2026, 18:35 IST", "Fri 27 Nov 2026, 18:35 IST"),
        (utc(2026, 11, 27, 13, 5), "Asia/Kathmandu", "27 Nov 2026, 18:50 UTC+5:45", "Fri 27 Nov 2026, 18:50 UTC+5:45"),
        (utc(2026, 11, 27, 13, 5), "America/Sao_Paulo", "27 Nov 2026, 10:05 UTC-3", "Fri 27 Nov 2026, 10:05 UTC-3"),
        # A name the database lost shows UTC rather than failing a page.
        (utc(2026, 11, 27, 13, 5), "Mars/Olympus", "27 Nov 2026, 13:05 UTC", "Fri 27 Nov 2026, 13:05 UTC"),
        # A naive moment is read as UTC.
        (datetime(2026, 11, 27, 13, 5), "Europe/Paris", "27 Nov 2026, 14:05 CET", "Fri 27 Nov 2026, 14:05 CET"),
        # An aware moment in another offset is the same instant.
        (
            datetime(2026, 11, 27, 8, 5, tzinfo=timezone(timedelta(hours=-5))),
            "Europe/Paris",
            "27 Nov 2026, 14:05 CET",
            "Fri 27 Nov 2026, 14:05 CET",
        ),
    ],
)
def test_a_moment_in_a_zone_table(moment: datetime, zone: str | None, console: str, message: str) -> None:
    assert zones.console_time(moment, zone) == console
    assert zones.message_time(moment, zone) == message


@pytest.mark.parametrize(
    ("moment", "zone", "shown"),
    [
        # Spring forward in Paris (29 Mar 2026, 02:00 CET -> 03:00 CEST): one minute apart, an hour apart on the clock.
        (utc(2026, 3, 29, 0, 59), "Europe/Paris", "29 Mar 2026, 01:59 CET"),
        (utc(2026, 3, 29, 1, 0), "Europe/Paris", "29 Mar 2026, 03:00 CEST"),
        # Fall back (25 Oct 2026): 02:30 is shown twice, the zone tells them apart.
        (utc(2026, 10, 25, 0, 30), "Europe/Paris", "25 Oct 2026, 02:30 CEST"),
        (utc(2026, 10, 25, 1, 30), "Europe/Paris", "25 Oct 2026, 02:30 CET"),
        # New York (8 Mar and 1 Nov 2026).
        (utc(2026, 3, 8, 6, 59), "America/New_York", "8 Mar 2026, 01:59 EST"),
        (utc(2026, 3, 8, 7, 0), "America/New_York", "8 Mar 2026, 03:00 EDT"),
        (utc(2026, 11, 1, 5, 30), "America/New_York", "1 Nov 2026, 01:30 EDT"),
        (utc(2026, 11, 1, 6, 30), "America/New_York", "1 Nov 2026, 01:30 EST"),
        # The southern hemisphere is in summer time in November.
        (utc(2026, 11, 27, 13, 5), "Australia/Sydney", "28 Nov 2026, 00:05 AEDT"),
        (utc(2026, 6, 27, 13, 5), "Australia/Sydney", "27 Jun 2026, 23:05 AEST"),
    ],
)
def test_daylight_saving_changes_show_with_the_zone_that_applies(moment: datetime, zone: str, shown: str) -> None:
    assert zones.console_time(moment, zone) == shown


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("Europe/Paris", True),
        ("UTC", True),
        ("America/Argentina/Buenos_Aires", True),
        ("Etc/GMT+5", True),
        ("Mars/Olympus", False),
        ("europe/paris", False),
        ("", False),
        ("../etc/passwd", False),
        ("/etc/localtime", False),
        ("localtime", False),
        ("posixrules", False),
        ("Factory", False),
        ("E" * 65, False),
        (None, False),
        (42, False),
    ],
)
def test_which_names_are_zones(name: object, valid: bool) -> None:
    assert zones.is_valid_zone(name) is valid
    assert zones.zone_or_default(name if isinstance(name, str) else None) == (name if valid else "UTC")


def test_the_zones_offered_are_sorted_region_names_after_utc() -> None:
    offered = zones.offered_zones()
    assert offered[0] == "UTC" and list(offered[1:]) == sorted(offered[1:])
    assert {"Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Adelaide"} <= set(offered)
    assert not any(name.startswith(("Etc/", "US/", "posix/", "right/")) for name in offered)
    assert all(zones.is_valid_zone(name) for name in offered)


def test_the_template_filters_take_datetimes_and_rfc3339_strings() -> None:
    assert engine.console_time("2026-11-27T13:05:00Z", "Europe/Paris") == "27 Nov 2026, 14:05 CET"
    assert engine.console_time("2026-11-27T13:05:00.000+00:00", "UTC") == "27 Nov 2026, 13:05 UTC"
    assert engine.message_time(utc(2026, 11, 27, 13, 5), "Europe/Paris") == "Fri 27 Nov 2026, 14:05 CET"
    with pytest.raises(ValueError):
        engine.console_time("yesterday", "UTC")
