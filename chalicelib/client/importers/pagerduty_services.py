"""A PagerDuty service's urgency rule, support hours and alert grouping as Tocsin's. Pure.

Tocsin's support hours narrow a rule as PagerDuty's "use support hours" does when the hours
outside are low urgency: inside the window the rule applies, outside every incident is low. Other
combinations keep the urgency inside the hours and say so."""

from __future__ import annotations

from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.importers.context import Context
from chalicelib.client.importers.timezones import iana

DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WINDOW_MAX = 1440
CONTENT_FIELDS = {"summary": "title", "source": "source", "severity": "severity"}


def _urgency(part: Any) -> str:
    if isinstance(part, dict):
        return str(part.get("urgency") or "high")
    return "high"


def _hours(raw: dict[str, Any]) -> doc.SupportHours | None:
    hours = raw.get("support_hours") or {}
    zone = iana(hours.get("time_zone"))
    days = sorted({int(day) for day in hours.get("days_of_week") or [] if 1 <= int(day) <= 7})
    start, end = str(hours.get("start_time") or "")[:5], str(hours.get("end_time") or "")[:5]
    if zone is None or not days or len(start) != 5 or len(end) != 5 or start == end:
        return None
    return doc.SupportHours(time_zone=zone, days=[DAYS[day - 1] for day in days], start=start, end=end)


def pagerduty_urgency(raw: dict[str, Any], name: str, vendor_id: str, ctx: Context) -> doc.UrgencyRule:
    rule = raw.get("incident_urgency_rule") or {"type": "constant", "urgency": "high"}
    if rule.get("type") != "use_support_hours":
        urgency = _urgency(rule)
        return doc.UrgencyRule(type=urgency if urgency in ("high", "low", "severity_based") else "high")
    inside, outside = _urgency(rule.get("during_support_hours")), _urgency(rule.get("outside_support_hours"))
    hours = _hours(raw)
    if hours is None:
        ctx.notes.approximate(
            "service", name, vendor_id, "its support hours could not be read: the rule applies always"
        )
        return doc.UrgencyRule(type=inside)
    if outside != "low":
        ctx.notes.approximate(
            "service",
            name,
            vendor_id,
            f"outside support hours PagerDuty uses {outside} urgency; Tocsin's support hours make it low",
            "a separate service or event rule for those hours",
        )
    if raw.get("scheduled_actions"):
        ctx.notes.approximate(
            "service",
            name,
            vendor_id,
            "scheduled actions (raise urgency at the start of support hours) are not carried over",
        )
    return doc.UrgencyRule(type=inside, support_hours=hours)


def pagerduty_grouping(raw: dict[str, Any], name: str, vendor_id: str, ctx: Context) -> doc.AlertGrouping:
    params = raw.get("alert_grouping_parameters") or {}
    kind = params.get("type") or raw.get("alert_grouping")
    config = params.get("config") or {}
    if not kind:
        return doc.AlertGrouping()
    if kind == "time":
        minutes = int(config.get("timeout") or raw.get("alert_grouping_timeout") or 0)
        if not 1 <= minutes <= WINDOW_MAX:
            ctx.notes.approximate(
                "service", name, vendor_id, "time-based grouping until the incident resolves", "a 24-hour window"
            )
            minutes = WINDOW_MAX
        return doc.AlertGrouping(type="time", window_minutes=minutes)
    if kind == "content_based":
        fields = [CONTENT_FIELDS[f] for f in config.get("fields") or [] if f in CONTENT_FIELDS]
        dropped = [f for f in config.get("fields") or [] if f not in CONTENT_FIELDS]
        if dropped or not fields:
            ctx.notes.approximate(
                "service", name, vendor_id, f"content grouping on {', '.join(dropped) or 'no field'}", "labels.<name>"
            )
        seconds = int(config.get("time_window") or 0)
        window = min(WINDOW_MAX, max(1, seconds // 60)) if seconds else None
        return doc.AlertGrouping(type="content", fields=fields or ["title"], window_minutes=window)
    ctx.notes.approximate(
        "service", name, vendor_id, f"{kind} alert grouping has no Tocsin equivalent", "time-based grouping"
    )
    return doc.AlertGrouping()
