"""GET /api/v1/insights/alerts, pure: what raised the most alerts and incidents in the range, by
source, service and dedup key (or title), with how many of them flapped (resolved by their source
within `flap_minutes`) and how many events rules and maintenance suppressed or dropped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chalicelib import clock
from chalicelib.insights import figures, histogram, periods, rollups
from chalicelib.insights.incident_metrics import HourItem

# Flapping is counted from the lifetime histogram: the window must be one of its bounds.
FLAP_MINUTES: tuple[int, ...] = tuple(b // 60 for b in histogram.BOUNDS if b % 60 == 0 and b <= 86400)
DEFAULT_FLAP_MINUTES = 10
DEFAULT_LIMIT = 10


def alert_figures(counters: Mapping[str, int], flap_minutes: int) -> dict[str, int]:
    lifetimes = rollups.histogram_of(rollups.FLAP_HISTOGRAM, counters)
    flapping = histogram.cumulative(lifetimes, (flap_minutes * 60,))[0][1]
    return {
        "events": counters.get(rollups.EVENTS, 0),
        "alerts": counters.get(rollups.ALERTS, 0),
        "incidents": counters.get(rollups.ALERT_INCIDENTS, 0),
        "suppressed_by_rules": counters.get(rollups.SUPPRESSED_RULE, 0),
        "suppressed_by_maintenance": counters.get(rollups.SUPPRESSED_MAINTENANCE, 0),
        "dropped": counters.get(rollups.DROPPED, 0),
        "auto_resolved": counters.get(rollups.AUTO_RESOLVED, 0),
        "flapping": flapping,
    }


def _by_value(items: Sequence[HourItem], span: periods.Range) -> dict[str, dict[str, int]]:
    grouped: dict[str, list[Mapping[str, int]]] = {}
    for item in items:
        if span.since <= item.hour < span.until:
            grouped.setdefault(item.value, []).append(item.counters)
    return {value: figures.summed(counters) for value, counters in grouped.items()}


def top(
    items: Sequence[HourItem], span: periods.Range, flap_minutes: int, limit: int
) -> tuple[list[tuple[str, dict[str, int]]], dict[str, int]]:
    """The `limit` values with the most alerts (then incidents, then events), and the sum of all."""
    by_value = _by_value(items, span)
    ranked = sorted(
        ((value, alert_figures(counters, flap_minutes)) for value, counters in by_value.items()),
        key=lambda pair: (-pair[1]["alerts"], -pair[1]["incidents"], -pair[1]["events"], pair[0]),
    )
    total = alert_figures(figures.summed(by_value.values()), flap_minutes)
    return ranked[:limit], total


def compute(
    span: periods.Range,
    items_by_kind: Mapping[str, Sequence[HourItem]],
    *,
    flap_minutes: int,
    limit: int,
    service_names: Mapping[str, str],
) -> dict[str, Any]:
    sources, totals = top(items_by_kind[rollups.ALERT_SOURCE], span, flap_minutes, limit)
    services, _ = top(items_by_kind[rollups.ALERT_SERVICE], span, flap_minutes, limit)
    keys, _ = top(items_by_kind[rollups.ALERT_KEY], span, flap_minutes, limit)

    def named(value: str) -> dict[str, str | None]:
        return (
            {"id": None, "name": None} if value == rollups.NO_VALUE else {"id": value, "name": service_names.get(value)}
        )

    return {
        "since": clock.isoformat(span.since),
        "until": clock.isoformat(span.until),
        "flap_minutes": flap_minutes,
        "totals": totals,
        "top_sources": [{"source": value, **data} for value, data in sources],
        "top_services": [{"service": named(value), **data} for value, data in services],
        "top_keys": [{"key": value, **data} for value, data in keys],
    }
