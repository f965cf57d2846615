"""CloudWatch embedded-metric format (EMF) log lines: the figures a dashboard charts, with no
scraper and no PutMetricData call on AWS (CloudWatch Logs turns each line into metrics).

A line is one JSON object: `_aws` holds the Timestamp (Unix milliseconds) and one directive
(Namespace `Tocsin`, the dimension sets, the metrics' names and units); the dimension values
(strings) and the metric values (numbers) are members of the root, as the specification says
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
Every line also has an empty dimension set, so each metric has an all-services total.

The builders are pure; `emit` writes lines through the service's JSON logging
(chalicelib.logs) on the `tocsin.metrics` logger, only when the `emf_metrics` setting says so
(on for AWS stages, off locally and in tests unless asked). A message redelivered by SQS after
its consumer logged a line logs it again: the figures are for monitoring, not accounting.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal

NAMESPACE = "Tocsin"
Unit = Literal["Count", "Seconds"]
MetricLine = dict[str, Any]
MAX_DIMENSION_VALUE = 1024  # CloudWatch's limit on a dimension value
NONE = "none"  # a dimension value may not be empty

logger = logging.getLogger("tocsin.metrics")


def _dimension_value(value: str | None) -> str:
    text = (value or "").strip()
    return text[:MAX_DIMENSION_VALUE] if text else NONE


def metric_line(
    *, now: datetime, dimensions: Mapping[str, str | None], metrics: Mapping[str, tuple[float, Unit]]
) -> MetricLine:
    """One EMF document: `metrics` (name -> (value, unit)) under `dimensions` (name -> value)."""
    names = list(dimensions)
    line: MetricLine = {
        "_aws": {
            "Timestamp": int(now.timestamp() * 1000),
            "CloudWatchMetrics": [
                {
                    "Namespace": NAMESPACE,
                    "Dimensions": [names, []] if names else [[]],
                    "Metrics": [{"Name": name, "Unit": unit} for name, (_, unit) in metrics.items()],
                }
            ],
        }
    }
    line.update({name: _dimension_value(value) for name, value in dimensions.items()})
    line.update({name: value for name, (value, _) in metrics.items()})
    return line


IncidentEvent = Literal["opened", "acknowledged", "resolved"]
_INCIDENT_METRICS: dict[IncidentEvent, tuple[str, str | None]] = {
    "opened": ("IncidentsOpened", None),
    "acknowledged": ("IncidentsAcknowledged", "TimeToAcknowledge"),
    "resolved": ("IncidentsResolved", "TimeToResolve"),
}


def incident_line(
    event: IncidentEvent, *, service: str | None, severity: str, now: datetime, seconds: float | None = None
) -> MetricLine:
    """An incident opened, acknowledged or resolved; for the last two, how long after it opened."""
    counter, timer = _INCIDENT_METRICS[event]
    metrics: dict[str, tuple[float, Unit]] = {counter: (1, "Count")}
    if timer is not None and seconds is not None:
        metrics[timer] = (max(seconds, 0.0), "Seconds")
    return metric_line(now=now, dimensions={"Service": service, "Severity": severity}, metrics=metrics)


def notification_line(*, channel: str, sent: bool, now: datetime) -> MetricLine:
    name = "NotificationsSent" if sent else "NotificationsFailed"
    return metric_line(now=now, dimensions={"Channel": channel}, metrics={name: (1, "Count")})


def inbound_line(*, source: str, outcome: str, now: datetime) -> MetricLine:
    """An inbound event (a webhook's alert) by what became of it: created, deduplicated, grouped,
    suppressed, dropped, or ignored (an action with nothing to act on)."""
    return metric_line(
        now=now, dimensions={"Source": source, "Outcome": outcome}, metrics={"InboundEvents": (1, "Count")}
    )


def emit(lines: Iterable[MetricLine], *, enabled: bool) -> None:
    """Log each line (one JSON object per line) when EMF is on (`enabled`: EMF_ENABLED); nothing otherwise."""
    if not enabled:
        return
    for line in lines:
        logger.info("metrics", extra=line)
