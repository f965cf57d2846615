"""People's time zones: which names are zones, and a moment as a person reads it in theirs. Pure.

A zone is an IANA name the zone database has ("Europe/Paris", "America/New_York", "UTC"). A time
shown to a person names its zone, so a reader never has to guess:
- `console_time`: "27 Nov 2026, 14:05 CET" (the console's tables and facts);
- `message_time`: "Thu 27 Nov 2026, 14:05 CET" (emails, Slack's fallback text).
The zone is named by its abbreviation when the database has a lettered one (CET, CEST, EST, UTC);
zones whose abbreviation is only an offset ("+04") are named "UTC+4" or "UTC+5:30". English names
whatever the server's locale.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

DEFAULT_ZONE = "UTC"
ZONE_MAX = 64
ZONE_KEY_PATTERN = re.compile(r"^[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*$")
# Keys zoneinfo can load that are not real, portable IANA zones.
_REJECTED_ZONE_KEYS = frozenset({"localtime", "posixrules", "Factory"})
# Groups of the database that hold aliases and legacy names, left out of the choices people see.
_NOT_OFFERED_PREFIXES = ("Etc/", "SystemV/", "posix/", "right/", "US/", "Canada/", "Mexico/", "Brazil/", "Chile/")
_LETTERED = re.compile(r"^[A-Za-z]{2,6}$")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
ZONE_HINT = "must be an IANA time zone such as Europe/Paris or America/New_York"


def is_valid_zone(name: object) -> bool:
    """True for an IANA zone key zoneinfo can load ("Europe/Berlin", "UTC"); False otherwise."""
    if not isinstance(name, str) or len(name) > ZONE_MAX or name in _REJECTED_ZONE_KEYS:
        return False
    if not ZONE_KEY_PATTERN.match(name):
        return False
    try:
        ZoneInfo(name)
    except (KeyError, ValueError, OSError):  # ZoneInfoNotFoundError is a KeyError
        return False
    return True


def zone_or_default(name: str | None) -> str:
    """`name` when it is a zone, else DEFAULT_ZONE: a stored name the database lost still shows times."""
    return name if name is not None and is_valid_zone(name) else DEFAULT_ZONE


def zone_info(name: str | None) -> tzinfo:
    """The tzinfo for a zone name (UTC for None or a name that is not a zone)."""
    key = zone_or_default(name)
    return UTC if key == DEFAULT_ZONE else ZoneInfo(key)


@cache
def offered_zones() -> tuple[str, ...]:
    """The zones a person picks from: the database's region/city names and UTC, sorted."""
    names = {
        name
        for name in available_timezones()
        if "/" in name and not name.startswith(_NOT_OFFERED_PREFIXES) and is_valid_zone(name)
    }
    return (DEFAULT_ZONE, *sorted(names))


def _offset_label(offset: timedelta) -> str:
    minutes = int(offset.total_seconds()) // 60
    if minutes == 0:
        return "UTC"
    sign = "+" if minutes > 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def zone_label(local: datetime) -> str:
    """How a local moment names its zone: its lettered abbreviation, else its offset from UTC."""
    name = local.tzname() or ""
    if _LETTERED.match(name):
        return name
    return _offset_label(local.utcoffset() or timedelta(0))


def in_zone(moment: datetime, zone: str | None) -> datetime:
    """The moment on the zone's wall clock (a naive moment is read as UTC)."""
    aware = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment
    return aware.astimezone(zone_info(zone))


def console_time(moment: datetime, zone: str | None) -> str:
    """`27 Nov 2026, 14:05 CET`."""
    local = in_zone(moment, zone)
    return f"{local.day} {_MONTHS[local.month - 1]} {local.year}, {local:%H:%M} {zone_label(local)}"


def message_time(moment: datetime, zone: str | None) -> str:
    """`Thu 27 Nov 2026, 14:05 CET`."""
    local = in_zone(moment, zone)
    return f"{_WEEKDAYS[local.weekday()]} {console_time(local, zone)}"
