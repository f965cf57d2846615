"""The /metrics text (pure): Tocsin's own counters and histograms out of the all-time totals.

The OpenMetrics text format (https://openmetrics.io), which Prometheus's text parser reads too:
counter samples end in `_total`, histograms have cumulative `_bucket{le=...}` samples ending at
`+Inf`, then `_count` and `_sum`, and the exposition ends with `# EOF`. Label values are escaped
(backslash, double quote, newline). Families appear in a fixed order, series sorted by labels.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from chalicelib.insights import histogram, rollups

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Counter:
    name: str
    help: str
    counter: str  # the rollup counter it reads
    kind: str  # the totals' kind whose items it reads
    label_names: tuple[str, ...]


COUNTERS: tuple[Counter, ...] = (
    Counter("tocsin_incidents_opened", "Incidents opened.", rollups.OPENED, rollups.TOTAL_SERVICE_SEVERITY,
            ("service", "severity")),
    Counter("tocsin_incidents_acknowledged", "Incidents acknowledged.", rollups.ACKED,
            rollups.TOTAL_SERVICE_SEVERITY, ("service", "severity")),
    Counter("tocsin_incidents_resolved", "Incidents resolved (a reopen takes its resolution back).",
            rollups.RESOLVED, rollups.TOTAL_SERVICE_SEVERITY, ("service", "severity")),
    Counter("tocsin_incidents_escalated", "Incidents escalated past their first level.", rollups.ESCALATED,
            rollups.TOTAL_SERVICE_SEVERITY, ("service", "severity")),
    Counter("tocsin_notifications_sent", "Pages sent, by channel.", rollups.PAGES, rollups.TOTAL_CHANNEL,
            ("channel",)),
    Counter("tocsin_notifications_failed", "Pages that failed on a channel.", rollups.PAGES_FAILED,
            rollups.TOTAL_CHANNEL, ("channel",)),
    Counter("tocsin_inbound_events", "Inbound trigger events, by what became of them.", rollups.EVENTS,
            rollups.TOTAL_INBOUND, ("outcome",)),
)  # fmt: skip


@dataclass(frozen=True)
class Histogram:
    name: str
    help: str
    prefix: str
    count: str
    seconds: str


HISTOGRAMS: tuple[Histogram, ...] = (
    Histogram("tocsin_incident_time_to_acknowledge_seconds", "Seconds from opening to the acknowledgement.",
              rollups.ACK_HISTOGRAM, rollups.ACKED, rollups.ACK_SECONDS),
    Histogram("tocsin_incident_time_to_resolve_seconds", "Seconds from opening to the resolution that stands.",
              rollups.RESOLVE_HISTOGRAM, rollups.RESOLVED, rollups.RESOLVE_SECONDS),
)  # fmt: skip


def escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: Labels) -> str:
    return "{" + ",".join(f'{name}="{escape(value)}"' for name, value in labels) + "}" if labels else ""


def _series(
    totals: Mapping[str, Mapping[str, int]], kind: str, names: tuple[str, ...]
) -> list[tuple[Labels, Mapping[str, int]]]:
    found = []
    for slot, counters in totals.items():
        found_kind, _, value = slot.partition("#")
        if found_kind != kind:
            continue
        values = value.split("|") if len(names) > 1 else [value]
        found.append((tuple(zip(names, values, strict=False)), counters))
    return sorted(found, key=lambda pair: pair[0])


def render(totals: Mapping[str, Mapping[str, int]], service_names: Mapping[str, str] | None = None) -> str:
    """`totals`: `<kind>#<value>` -> counters, as reading.totals answers."""
    del service_names  # services are labelled by key: a renamed service keeps its series
    lines: list[str] = []
    for counter in COUNTERS:
        lines += [f"# TYPE {counter.name} counter", f"# HELP {counter.name} {counter.help}"]
        for labels, counters in _series(totals, counter.kind, counter.label_names):
            lines.append(f"{counter.name}_total{_labels(labels)} {max(0, counters.get(counter.counter, 0))}")
    for family in HISTOGRAMS:
        lines += [f"# TYPE {family.name} histogram", f"# HELP {family.name} {family.help}"]
        for labels, counters in _series(totals, rollups.TOTAL_SERVICE_SEVERITY, ("service", "severity")):
            lines.extend(_histogram_lines(family, labels, counters))
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


def _histogram_lines(family: Histogram, labels: Labels, counters: Mapping[str, int]) -> Iterable[str]:
    buckets = rollups.histogram_of(family.prefix, counters)
    count = max(0, sum(buckets.values()))
    for bound, seen in histogram.cumulative(buckets, histogram.PROMETHEUS_BOUNDS):
        yield f"{family.name}_bucket{_labels((*labels, ('le', f'{float(bound)}')))} {max(0, seen)}"
    yield f"{family.name}_bucket{_labels((*labels, ('le', '+Inf')))} {count}"
    yield f"{family.name}_count{_labels(labels)} {count}"
    yield f"{family.name}_sum{_labels(labels)} {max(0, counters.get(family.seconds, 0))}"
