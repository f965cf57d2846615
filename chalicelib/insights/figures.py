"""The figures of a set of rollup items (pure): counts, means and percentiles in seconds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.insights import histogram, rollups


@dataclass(frozen=True)
class Durations:
    mean: float | None
    p50: float | None
    p90: float | None

    def to_dict(self) -> dict[str, float | None]:
        return {"mean": self.mean, "p50": self.p50, "p90": self.p90}


def durations(count: int, total_seconds: int, buckets: Mapping[int, int]) -> Durations:
    if count <= 0:
        return Durations(None, None, None)
    return Durations(
        round(total_seconds / count, 1), histogram.percentile(buckets, 0.5), histogram.percentile(buckets, 0.9)
    )


def summed(items: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for counters in items:
        for name, value in counters.items():
            total[name] = total.get(name, 0) + value
    return total


@dataclass(frozen=True)
class IncidentFigures:
    count: int
    acknowledged: int
    resolved: int
    escalated: int
    opened_outside_working_hours: int
    acknowledged_within_sla: int
    mtta: Durations
    mttr: Durations

    @property
    def acknowledged_within_sla_share(self) -> float | None:
        return round(self.acknowledged_within_sla / self.count, 4) if self.count else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "acknowledged": self.acknowledged,
            "resolved": self.resolved,
            "escalated": self.escalated,
            "opened_outside_working_hours": self.opened_outside_working_hours,
            "acknowledged_within_sla": self.acknowledged_within_sla,
            "acknowledged_within_sla_share": self.acknowledged_within_sla_share,
            "mtta_seconds": self.mtta.to_dict(),
            "mttr_seconds": self.mttr.to_dict(),
        }


def incident_figures(counters: Mapping[str, int], *, outside_working_hours: int) -> IncidentFigures:
    acked = counters.get(rollups.ACKED, 0)
    resolved = counters.get(rollups.RESOLVED, 0)
    ack_buckets = rollups.histogram_of(rollups.ACK_HISTOGRAM, counters)
    resolve_buckets = rollups.histogram_of(rollups.RESOLVE_HISTOGRAM, counters)
    return IncidentFigures(
        count=counters.get(rollups.OPENED, 0),
        acknowledged=acked,
        resolved=resolved,
        escalated=counters.get(rollups.ESCALATED, 0),
        opened_outside_working_hours=outside_working_hours,
        acknowledged_within_sla=counters.get(rollups.ACK_IN_SLA, 0),
        mtta=durations(acked, counters.get(rollups.ACK_SECONDS, 0), ack_buckets),
        mttr=durations(resolved, counters.get(rollups.RESOLVE_SECONDS, 0), resolve_buckets),
    )
