"""The words of a coverage notice: a schedule or policy pages nobody for some spans ahead. Pure.

Times in the reader's zone, named; at most MAX_LISTED spans are listed (then "and N more"); the
short text fits one SMS (chalicelib.oncall.handoff_text's forms and rules)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from chalicelib.oncall.handoff_text import NoticeText, fit_short_text, long_time, short_time
from chalicelib.oncall.intervals import Span
from chalicelib.oncall.wallclock import zone_for

MAX_LISTED = 10


def render_coverage_notice(
    *, kind: str, name: str, gaps: Sequence[Span], levels: Sequence[Sequence[int]] = (), time_zone: str, now: datetime
) -> NoticeText:
    """`kind` schedule or policy; `levels` (a policy's) lists, per gap, the levels that reach nobody."""
    zone = zone_for(time_zone)
    what = "schedule" if kind == "schedule" else "escalation policy"
    first_start = max(gaps[0][0], now).astimezone(zone)
    count = len(gaps)
    plural = "" if count == 1 else "s"
    subject = f"Nobody to page: {what} {name} has {count} coverage gap{plural} from {short_time(first_start)}"
    spans = "this span" if count == 1 else "these spans"
    lines = [f"The {what} {name} leaves {spans} of the next 14 days with nobody to page:"]
    for index, (start, end) in enumerate(gaps[:MAX_LISTED]):
        shown_start = max(start, now).astimezone(zone)
        at_levels = f" (level {', '.join(str(n) for n in levels[index])})" if index < len(levels) else ""
        lines.append(f"- {long_time(shown_start)} to {long_time(end.astimezone(zone))}{at_levels}")
    if count > MAX_LISTED:
        lines.append(f"- and {count - MAX_LISTED} more")
    lines.append("An incident then pages nobody (the fallback contacts, when the organization has some).")
    lines.append(f"Times are in {time_zone}.")
    short = (
        "Tocsin: {name} " + f"has nobody to page from {short_time(first_start)} ({time_zone}). Open Tocsin to fix it."
    )
    return NoticeText(subject, "\n".join(lines), fit_short_text(short, name))
