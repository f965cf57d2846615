"""The 90 uptime bars of each component on the human status page. Pure: the uptime.json document
goes in, the view objects the template `statuspage/parts.html` (macro `uptime`) lays out come out.

Script-free and not colour alone: every bar carries its day's text (visually hidden text that
screen readers read as a list item, and the same words as its `title` for a pointer), each
component shows its 90-day figure as text, and the days that were not fully operational are
listed in words behind a disclosure. Bar colours have at least 3:1 contrast against the card
(WCAG non-text contrast); a day without data is a short pale bar, told apart by its shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
CARD_BACKGROUND = "#ffffff"
NO_DATA = "none"
DAYS_SHOWN_ON_DESKTOP = 90

# (status, legend text, bar colour): worst first, as the legend lists them.
BAR_STYLES: tuple[tuple[str, str, str], ...] = (
    ("operational", "Operational", "#1a7f37"),
    ("degraded_performance", "Degraded performance", "#b08800"),
    ("partial_outage", "Partial outage", "#e8590c"),
    ("major_outage", "Major outage", "#cf222e"),
    ("under_maintenance", "Under maintenance", "#0d6efd"),
    ("unknown", "Unknown", "#6c757d"),
)
NO_DATA_COLOUR = "#d0d7de"
_LABELS = {status: text for status, text, _ in BAR_STYLES}

PHONE_DAYS = 30  # bars a phone shows; the older ones stay in the list for screen readers
_CLIPPED = "position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip:rect(0 0 0 0);border:0"
UPTIME_CSS = (
    # Visually hidden but read by screen readers (display:none would hide it from them too).
    f".vh{{{_CLIPPED};white-space:nowrap}}"
    ".uptime{padding:0 0 .75rem}.bars{position:relative;display:flex;align-items:flex-end;gap:2px;height:2.25rem;"
    "list-style:none;margin:.1rem 0 .25rem;padding:0}"
    ".bars>li{flex:1 1 0;min-width:0;height:100%;border-radius:2px}.bars>li:hover{opacity:.6}"
    f".bars>.up-{NO_DATA}{{height:45%;background:{NO_DATA_COLOUR}}}"
    ".scale{display:flex;flex-wrap:wrap;justify-content:space-between;gap:0 .5rem}.scale>.figure{font-weight:600}"
    ".scale>.narrow{display:none}"
    ".days>ul{margin:.25rem 0 0;padding-left:1.25rem}.days summary{font-size:.875rem}"
    ".legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0 0 .75rem}"
    ".legend>li{display:flex;align-items:center;gap:.35rem}"
    ".swatch{display:inline-block;width:.6rem;height:1rem;border-radius:2px}"
    f".swatch.up-{NO_DATA}{{height:.45rem;background:{NO_DATA_COLOUR}}}"
    # Phones: 90 bars would be 2-3 px wide; show the last 30 (as Atlassian Statuspage does), the
    # older ones clipped, not removed, and the figure on its own line under the scale.
    f"@media (max-width:30rem){{.bars>li:nth-child(-n+{DAYS_SHOWN_ON_DESKTOP - PHONE_DAYS}){{{_CLIPPED}}}"
    ".scale>.wide{display:none}.scale>.narrow{display:inline}.scale>.figure{order:3;flex-basis:100%}}"
    + "".join(f".up-{status}{{background:{colour}}}" for status, _, colour in BAR_STYLES)
)


@dataclass(frozen=True)
class Bar:
    css: str  # "up-<status>" or "up-none"
    text: str  # the day in words


@dataclass(frozen=True)
class UptimeBars:
    label: str  # the list's accessible name
    bars: list[Bar]  # oldest first
    oldest: str  # "90 days ago"
    oldest_on_phones: str  # "30 days ago"
    figure: str  # "99.95% uptime over 90 days"
    problems_summary: str
    problems: list[str]  # the days not fully operational, newest first


@dataclass(frozen=True)
class LegendEntry:
    css: str
    text: str


LEGEND = [LegendEntry(f"up-{status}", text) for status, text, _ in BAR_STYLES] + [
    LegendEntry(f"up-{NO_DATA}", "No data")
]


def percent_text(value: object) -> str:
    """99.95 -> '99.95%', 100.0 -> '100%', 99.5 -> '99.5%'."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return "no data"
    return f"{value:.2f}".rstrip("0").rstrip(".") + "%"


def _day_text(value: object) -> str:
    try:
        day = date.fromisoformat(str(value))
    except ValueError:
        return str(value)
    return f"{day.day} {_MONTHS[day.month - 1]} {day.year}"


def _status_words(status: object) -> str:
    label = _LABELS.get(str(status))
    return label.lower() if label else str(status).replace("_", " ")


def _bar(day: Mapping[str, Any]) -> Bar:
    when, status, value = _day_text(day.get("date")), day.get("worst_status"), day.get("uptime_percent")
    if status is None:
        return Bar(f"up-{NO_DATA}", f"{when}: no data")
    css = f"up-{status}" if status in _LABELS else "up-unknown"
    if value is None:
        return Bar(css, f"{when}: no uptime data, {_status_words(status)}")
    if status == "operational":
        return Bar(css, f"{when}: {percent_text(value)} uptime, operational")
    return Bar(css, f"{when}: {percent_text(value)} uptime, worst: {_status_words(status)}")


def component_bars(component: Mapping[str, Any], days: int) -> UptimeBars:
    name = str(component.get("name") or "")
    entries = list(component.get("days") or [])
    bars = [_bar(day) for day in entries]
    problems = [
        bar.text
        for bar, day in zip(reversed(bars), reversed(entries), strict=True)
        if day.get("worst_status") not in (None, "operational")
    ]
    figure = component.get("uptime_percent")
    return UptimeBars(
        label=f"{name}: uptime per day, last {days} days, oldest first",
        bars=bars,
        oldest=f"{days} days ago",
        oldest_on_phones=f"{min(days, PHONE_DAYS)} days ago",
        figure=f"{percent_text(figure)} uptime over {days} days" if figure is not None else "No uptime data yet",
        problems_summary=f"{len(problems)} day{'' if len(problems) == 1 else 's'} not fully operational",
        problems=problems,
    )


def uptime_by_component(document: Mapping[str, Any] | None) -> dict[str, UptimeBars]:
    """The bars of every component in the uptime document, by component id."""
    if not document:
        return {}
    days = int(document.get("days") or 0)
    return {
        str(component.get("component_id")): component_bars(component, days)
        for component in document.get("components") or []
    }
