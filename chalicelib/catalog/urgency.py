"""A service's urgency rule and support hours: which urgency an incident pages with. Pure.

The rule (docs/INCIDENTS.md, "Urgency"):
- `high` or `low`: every incident of the service has that urgency;
- `severity_based` (the default): SEV0 and SEV1 are high, SEV2 to SEV4 low
  (`chalicelib.severity.urgency`).

Support hours (optional) narrow the rule to a weekly window in an IANA zone, as PagerDuty's
"use support hours" does: inside the window the rule applies, outside it every incident is low.
With type `low` they change nothing.

The window: on each listed day, from `start` to `end` local time (HH:MM), end excluded. An
`end` before `start` runs overnight into the next day: days mon-fri with 22:00-06:00 cover Monday
22:00 to Tuesday 06:00, ..., Friday 22:00 to Saturday 06:00 (a listed day names the day the
window STARTS). `end` 00:00 means midnight. `start` equal to `end` is refused (ambiguous: empty
or whole day).

An instant is inside when the wall clock in the zone, AT THAT INSTANT, shows a listed day and a
time in the window: the rule schedule restrictions follow (chalicelib/oncall/restrictions.py),
so DST needs no special case. Spring forward: local times that never happen are never shown (a
02:00-02:45 window on 2026-03-08 in America/New_York is empty that day). Fall back: local times
shown twice are inside twice (a 01:00-01:30 window on 2026-11-01 in America/New_York covers
05:00-05:30Z and 06:00-06:30Z).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast
from zoneinfo import ZoneInfo

from chalicelib.errors import ValidationFailed
from chalicelib.oncall.wallclock import as_utc, is_hhmm, is_valid_zone, minutes_of
from chalicelib.severity import Urgency
from chalicelib.severity import urgency as severity_urgency

RuleType = Literal["high", "low", "severity_based"]
RULE_TYPES: tuple[RuleType, ...] = ("severity_based", "high", "low")
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # datetime.weekday() order

Problems = list[dict[str, str]]


@dataclass(frozen=True)
class SupportHours:
    time_zone: str
    days: tuple[Weekday, ...]  # unique, Monday first (`canonical_days`)
    start: str  # HH:MM local
    end: str  # HH:MM local; before start: overnight into the next day

    def contains(self, now: datetime) -> bool:
        """True when the wall clock in the zone at `now` shows a time inside the window."""
        local = as_utc(now).astimezone(ZoneInfo(self.time_zone))
        minute = local.hour * 60 + local.minute
        today = WEEKDAYS[local.weekday()]
        yesterday = WEEKDAYS[(local.weekday() - 1) % 7]
        start, end = minutes_of(self.start), minutes_of(self.end)
        if start < end:
            return today in self.days and start <= minute < end
        # Overnight: the evening part of a listed day, or the morning after one.
        return (today in self.days and minute >= start) or (yesterday in self.days and minute < end)

    def to_dict(self) -> dict[str, Any]:
        return {"time_zone": self.time_zone, "days": list(self.days), "start": self.start, "end": self.end}


@dataclass(frozen=True)
class UrgencyRule:
    type: RuleType = "severity_based"
    support_hours: SupportHours | None = field(default=None)

    def to_dict(self) -> dict[str, Any]:
        hours = self.support_hours.to_dict() if self.support_hours is not None else None
        return {"type": self.type, "support_hours": hours}


DEFAULT_RULE = UrgencyRule()


def canonical_days(days: Iterable[str]) -> tuple[Weekday, ...]:
    """Known day names, each once, Monday first."""
    wanted = set(days)
    return tuple(day for day in WEEKDAYS if day in wanted)


def incident_urgency(rule: UrgencyRule, severity: str, now: datetime) -> Urgency:
    """The urgency of an incident of `severity` under `rule` at `now` (its creation or severity change)."""
    if rule.support_hours is not None and not rule.support_hours.contains(now):
        return "low"
    if rule.type == "severity_based":
        return severity_urgency(severity)
    return rule.type


def rule_problems(rule: UrgencyRule, where: str = "urgency_rule") -> Problems:
    """Every problem of the rule as {field, message}; [] when it is usable."""
    problems: Problems = []

    def problem(name: str, message: str) -> None:
        problems.append({"field": f"{where}.{name}", "message": message})

    if rule.type not in RULE_TYPES:
        problem("type", f"must be one of {', '.join(RULE_TYPES)}")
    hours = rule.support_hours
    if hours is None:
        return problems
    if not is_valid_zone(hours.time_zone):
        problem("support_hours.time_zone", "must be an IANA time zone such as Europe/Berlin or America/New_York")
    if not hours.days:
        problem("support_hours.days", "must list at least one day")
    unknown = [day for day in hours.days if day not in WEEKDAYS]
    if unknown:
        problem("support_hours.days", f"unknown day {unknown[0]!r}; use {', '.join(WEEKDAYS)}")
    times_ok = True
    for name in ("start", "end"):
        if not is_hhmm(getattr(hours, name)):
            problem(f"support_hours.{name}", "must be a local time HH:MM (00:00 to 23:59)")
            times_ok = False
    if times_ok and hours.start == hours.end:
        problem("support_hours.end", "must differ from start (an end before start runs overnight)")
    return problems


def check_rule(rule: UrgencyRule, where: str = "urgency_rule") -> UrgencyRule:
    """The rule, or ValidationFailed listing every problem (details.fields)."""
    problems = rule_problems(rule, where)
    if problems:
        raise ValidationFailed.for_fields(problems, f"The {where} is invalid.")
    return rule


def rule_from_dict(stored: Mapping[str, Any] | None) -> UrgencyRule:
    """A stored rule (`UrgencyRule.to_dict`); None or an unreadable one is the default rule."""
    if not isinstance(stored, Mapping):
        return DEFAULT_RULE
    kind = stored.get("type")
    hours = stored.get("support_hours")
    support_hours = None
    if isinstance(hours, Mapping):
        support_hours = SupportHours(
            time_zone=str(hours.get("time_zone", "")),
            days=canonical_days(str(day) for day in hours.get("days") or ()),
            start=str(hours.get("start", "")),
            end=str(hours.get("end", "")),
        )
    rule = UrgencyRule(
        type=cast(RuleType, kind) if kind in RULE_TYPES else "severity_based", support_hours=support_hours
    )
    # Stored rules were checked when written; one that no longer reads (e.g. a zone the database
    # dropped) falls back to the default rather than failing every incident of the service.
    return rule if not rule_problems(rule) else DEFAULT_RULE
