"""GET /api/v1/insights/incidents, pure: from the hourly items of one dimension kind, the figures
per bucket (day, week or month in a time zone) and per group, filtered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from chalicelib import clock
from chalicelib.insights import figures, periods, rollups
from chalicelib.insights.bands import Bands

GroupBy = Literal["none", "service", "team", "severity"]
GROUP_BYS: tuple[GroupBy, ...] = ("none", "service", "team", "severity")


@dataclass(frozen=True)
class HourItem:
    """One rollup item read back: its UTC hour, its value and its counters."""

    hour: datetime
    value: str
    counters: Mapping[str, int]


@dataclass(frozen=True)
class IncidentQuery:
    span: periods.Range
    zone_name: str
    interval: periods.Interval = "day"
    group_by: GroupBy = "none"
    # Filters: each one a set of accepted values (empty: any), by dimension kind.
    filters: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.zone_name)

    def kind_to_read(self) -> str:
        """The one dimension kind that answers: `all` when nothing is filtered or grouped, the
        single dimension involved, else the combined items."""
        involved = {kind for kind, values in self.filters.items() if values}
        if self.group_by != "none":
            involved.add(self.group_by)
        if not involved:
            return rollups.ALL
        if len(involved) == 1:
            return next(iter(involved))
        return rollups.COMBINED


def dimensions_of(kind: str, value: str) -> dict[str, str]:
    if kind == rollups.COMBINED:
        return rollups.split_combined(value)
    return {} if kind == rollups.ALL else {kind: value}


@dataclass
class _Accumulator:
    counters: dict[str, int] = field(default_factory=dict)
    outside: int = 0

    def add(self, counters: Mapping[str, int], outside: bool) -> None:
        for name, value in counters.items():
            self.counters[name] = self.counters.get(name, 0) + value
        if outside:
            self.outside += counters.get(rollups.OPENED, 0)

    def figures(self) -> figures.IncidentFigures:
        return figures.incident_figures(self.counters, outside_working_hours=self.outside)


def compute(
    query: IncidentQuery, kind: str, items: Sequence[HourItem], bands: Bands, names: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The answer's data: per group (one group, `null`, without group_by), every bucket of the
    range (empty ones too) and the group's totals; the totals of everything filtered in."""
    zone = query.zone
    starts = periods.bucket_starts(query.span, query.interval, zone)
    groups: dict[str | None, dict[datetime, _Accumulator]] = {}
    group_totals: dict[str | None, _Accumulator] = {}
    overall = _Accumulator()
    if query.group_by == "none":
        groups[None] = {}
        group_totals[None] = _Accumulator()
    for item in items:
        if not query.span.since <= item.hour < query.span.until:
            continue
        dims = dimensions_of(kind, item.value)
        if any(values and dims.get(dim) not in values for dim, values in query.filters.items()):
            continue
        group = None if query.group_by == "none" else dims.get(query.group_by, rollups.NO_VALUE)
        outside = not bands.is_working(item.hour.astimezone(zone))
        start = periods.bucket_start(item.hour, query.interval, zone)
        groups.setdefault(group, {}).setdefault(start, _Accumulator()).add(item.counters, outside)
        group_totals.setdefault(group, _Accumulator()).add(item.counters, outside)
        overall.add(item.counters, outside)
    answer_groups = []
    for group in sorted(groups, key=lambda g: (g is None, g or "")):
        buckets = groups[group]
        answer_groups.append(
            {
                "group": None if group is None else _group(query.group_by, group, names or {}),
                "buckets": [_bucket(start, query, buckets.get(start)) for start in starts],
                "totals": group_totals[group].figures().to_dict(),
            }
        )
    return {
        "since": clock.isoformat(query.span.since),
        "until": clock.isoformat(query.span.until),
        "time_zone": query.zone_name,
        "interval": query.interval,
        "group_by": query.group_by,
        "groups": answer_groups,
        "totals": overall.figures().to_dict(),
    }


def _group(kind: str, value: str, names: Mapping[str, str]) -> dict[str, Any]:
    if value == rollups.NO_VALUE:
        return {"kind": kind, "id": None, "name": None}
    return {"kind": kind, "id": value, "name": names.get(value, value if kind == "severity" else None)}


def _bucket(start: datetime, query: IncidentQuery, found: _Accumulator | None) -> dict[str, Any]:
    end = periods.next_start(start, query.interval, query.zone)
    data = (found or _Accumulator()).figures().to_dict()
    return {"start": start.isoformat(), "end": end.isoformat(), **data}
