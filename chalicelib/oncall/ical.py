"""An iCalendar (RFC 5545) feed of a schedule's final shifts, for subscribing from a calendar app. Pure.

Every time is written in UTC ("Z" form), which is always correct and needs no VTIMEZONE;
calendar apps show the events in the viewer's zone. X-WR-TIMEZONE names the schedule's zone as
a hint for apps that display a calendar's own zone. Each shift's UID is derived from the
schedule, the user and the shift's start, so re-fetching the feed updates events in place.
Lines end with CRLF and are folded at 75 octets (never inside a UTF-8 character); TEXT values
escape backslash, semicolon, comma and newlines.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from chalicelib.oncall.rotation import FinalShift

PRODID = "-//Tocsin//On-call schedule//EN"
UID_DOMAIN = "tocsin"
REFRESH_INTERVAL = "PT1H"
LINE_LIMIT = 75  # octets, excluding the CRLF
CRLF = "\r\n"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def escape_text(value: str) -> str:
    """A TEXT value: backslash, semicolon, comma escaped; any newline as \\n; other controls dropped."""
    value = value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
    value = value.replace("\r\n", "\\n").replace("\r", "\\n").replace("\n", "\\n")
    return _CONTROL.sub("", value)


def _safe(value: str) -> str:
    """A non-TEXT value (URI, zone id): no control characters, so it cannot break a line."""
    return _CONTROL.sub("", value.replace("\r", "").replace("\n", ""))


def format_utc(moment: datetime) -> str:
    """DATE-TIME in UTC form, e.g. 20260308T140000Z (seconds precision, truncated)."""
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def fold(line: str) -> str:
    """Split a content line into CRLF + space continued pieces of at most 75 octets each."""
    encoded = line.encode("utf-8")
    if len(encoded) <= LINE_LIMIT:
        return line
    pieces: list[str] = []
    piece: list[str] = []
    size = 0
    limit = LINE_LIMIT
    for char in line:
        width = len(char.encode("utf-8"))
        if size + width > limit:
            pieces.append("".join(piece))
            piece, size, limit = [], 0, LINE_LIMIT - 1  # continuation lines start with one space
        piece.append(char)
        size += width
    pieces.append("".join(piece))
    return (CRLF + " ").join(pieces)


def shift_uid(schedule_key: str, shift: FinalShift) -> str:
    """Stable per (schedule, user, start): the same shift keeps its UID across fetches."""
    material = f"{schedule_key}\x00{shift.user_id}\x00{format_utc(shift.start)}"
    return f"{hashlib.sha256(material.encode()).hexdigest()[:32]}@{UID_DOMAIN}"


def _describe(shift: FinalShift, person: str, schedule_name: str) -> str:
    origin = f"override {shift.override_id}" if shift.source == "override" else f"layer {shift.layer_id}"
    return f"{person} is on call for {schedule_name} ({origin})."


def render_ical(
    schedule_name: str,
    shifts: Iterable[FinalShift],
    user_names: Mapping[str, str],
    *,
    now: datetime,
    calendar_url: str | None = None,
    schedule_id: str | None = None,
    time_zone: str = "UTC",
) -> str:
    """The VCALENDAR text: one VEVENT per shift, SUMMARY "On call: <name>" (the user id when unnamed).

    `schedule_id` (falls back to the name) keys the UIDs, so renaming a schedule keeps them when
    the id is given. `calendar_url` is advertised as the calendar's URL (RFC 7986).
    """
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        f"PRODID:{PRODID}",
        "CALSCALE:GREGORIAN",
        "METHOD:PUBLISH",
        f"X-WR-CALNAME:{escape_text(schedule_name)}",
        f"NAME:{escape_text(schedule_name)}",
        f"X-WR-TIMEZONE:{_safe(time_zone)}",
        f"REFRESH-INTERVAL;VALUE=DURATION:{REFRESH_INTERVAL}",
        f"X-PUBLISHED-TTL:{REFRESH_INTERVAL}",
    ]
    if calendar_url:
        lines.append(f"URL:{_safe(calendar_url)}")
    stamp = format_utc(now)
    key = schedule_id or schedule_name
    for shift in shifts:
        person = user_names.get(shift.user_id) or shift.user_id
        lines += [
            "BEGIN:VEVENT",
            f"UID:{shift_uid(key, shift)}",
            f"DTSTAMP:{stamp}",
            f"DTSTART:{format_utc(shift.start)}",
            f"DTEND:{format_utc(shift.end)}",
            f"SUMMARY:{escape_text(f'On call: {person}')}",
            f"DESCRIPTION:{escape_text(_describe(shift, person, schedule_name))}",
            "TRANSP:TRANSPARENT",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    return "".join(fold(line) + CRLF for line in lines)
