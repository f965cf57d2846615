"""The words of a handoff notice: subject, plain text and an SMS-sized short text. Pure.

Times are shown in the schedule's zone, in English whatever the server's locale:
"Mon 24 Nov 09:00" in the subject and short text, with the year and the zone's abbreviation in
the text. The short text fits one SMS: at most SHORT_TEXT_MAX GSM-7 septets (the characters of
the GSM 03.38 default alphabet count 1, those of its extension table 2); a character outside both
is replaced by its unaccented letter when that is in the alphabet, else "?" (`short_name`). A
long schedule name is shortened ("...") to fit; the times and the zone always show.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime

from chalicelib.oncall.handoffs import HORIZON, Handoff
from chalicelib.oncall.wallclock import zone_for

SHORT_TEXT_MAX = 160
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# GSM 03.38: the default alphabet (one septet each) and the extension table (escape + one).
GSM7_BASIC = frozenset(
    "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?"
    "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
)
GSM7_EXTENSION = frozenset("^{}\\[~]|€\f")
_ELLIPSIS = "..."


@dataclass(frozen=True)
class NoticeText:
    subject: str
    text: str
    short_text: str


def gsm7_length(text: str) -> int:
    """Septets `text` takes in the GSM 7-bit alphabet (extension characters count 2)."""
    return sum(2 if char in GSM7_EXTENSION else 1 for char in text)


def to_gsm7(text: str) -> str:
    """`text` in characters the GSM 7-bit alphabet has: accents dropped where that helps, else '?'."""
    out = []
    for char in text:
        if char in GSM7_BASIC or char in GSM7_EXTENSION:
            out.append(char)
            continue
        base = "".join(part for part in unicodedata.normalize("NFKD", char) if not unicodedata.combining(part))
        out.append(base if base and all(part in GSM7_BASIC for part in base) else "?")
    return "".join(out)


def _short_time(moment: datetime) -> str:
    return f"{_WEEKDAYS[moment.weekday()]} {moment.day:02d} {_MONTHS[moment.month - 1]} {moment:%H:%M}"


def _long_time(moment: datetime) -> str:
    day = f"{_WEEKDAYS[moment.weekday()]} {moment.day:02d} {_MONTHS[moment.month - 1]} {moment.year}"
    return f"{day} {moment:%H:%M} {moment.tzname()}"


def short_name(name: str) -> str:
    """The schedule's name for a short text: in GSM-7, a run of unconvertible characters as one
    "?", and "your schedule" when no letter or digit is left (a name in a script GSM-7 lacks)."""
    converted = re.sub(r"\?{2,}", "?", to_gsm7(" ".join(name.split())))
    return converted if any(char.isalnum() for char in converted) else "your schedule"


def _fit_name(template: str, name: str) -> str:
    """`template` with `{name}` filled, the name shortened until the whole fits one SMS."""
    name = short_name(name)
    while True:
        text = template.format(name=name)
        if gsm7_length(text) <= SHORT_TEXT_MAX or not name.strip(". "):
            return text
        name = name[: max(0, len(name.removesuffix(_ELLIPSIS)) - 1)].rstrip() + _ELLIPSIS


def render_notice(handoff: Handoff, *, schedule_name: str, time_zone: str) -> NoticeText:
    zone = zone_for(time_zone)
    at = handoff.at.astimezone(zone)
    when = f"{_short_time(at)} ({time_zone})"
    if handoff.kind == "on_call":
        ends = handoff.shift_ends_at.astimezone(zone) if handoff.shift_ends_at is not None else None
        subject = f"You are on call for {schedule_name} from {when}"
        until_long = _long_time(ends) if ends is not None else f"further notice (no end within {HORIZON.days} days)"
        text = (
            f"You are on call for the schedule {schedule_name}.\n"
            f"From: {_long_time(at)}\n"
            f"Until: {until_long}\n"
            f"Times are in {time_zone}."
        )
        until_short = f" to {_short_time(ends)}" if ends is not None else ""
        short_template = "Tocsin: you are on call for {name} from " + f"{_short_time(at)}{until_short} ({time_zone})."
    else:
        subject = f"You are off call for {schedule_name} from {when}"
        text = (
            f"Your on-call shift for the schedule {schedule_name} ends.\n"
            f"Off call from: {_long_time(at)}\n"
            f"Times are in {time_zone}."
        )
        short_template = "Tocsin: you are off call for {name} from " + f"{_short_time(at)} ({time_zone})."
    # The template's own characters are ASCII (zone names are); only the name needs converting.
    return NoticeText(subject, text, _fit_name(short_template, schedule_name))


# The same forms for the other notices about a schedule (swap requests, coverage gaps).
short_time = _short_time
long_time = _long_time
fit_short_text = _fit_name
