"""What became of a request to an integration, as the event log records it (pure).

The handler of an inbound route leaves an `Outcome` on its call (`call.outcome`) for the
pipeline's after-answer step; a request answered with an error has its outcome from the error.

| outcome | when |
|---|---|
| created | a new incident opened (or a change event was recorded) |
| grouped | a new alert joined an open incident (the service's alert grouping) |
| deduplicated | one more event on an existing alert (a repeat, a resolve, an acknowledge) |
| suppressed | kept without an incident: a maintenance window or an event rule (`suppressed_by`) |
| dropped | an event rule dropped it (`rule_ids`): nothing recorded |
| accepted | nothing to do (a resolve with no open alert, an SNS subscription confirmed, ...) |
| refused | answered 4xx: its error code and message (replayable, chalicelib.eventlog.replay) |
| rate_limited | answered 429 |
| failed | answered 5xx: our failure; the sender retries (not replayable: it may have half run) |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chalicelib.errors import AppError
from chalicelib.integration.triggering import IngestResult

OUTCOMES = (
    "created",
    "grouped",
    "deduplicated",
    "suppressed",
    "dropped",
    "accepted",
    "refused",
    "rate_limited",
    "failed",
)
SIGNATURE_ERRORS = frozenset({"INVALID_SIGNATURE", "SIGNATURE_EXPIRED"})


@dataclass(frozen=True)
class Outcome:
    outcome: str
    action: str | None = None
    title: str | None = None
    message: str | None = None
    error_code: str | None = None
    warnings: tuple[str, ...] = ()
    incident_number: str | None = None
    alert_id: str | None = None
    suppressed_by: dict[str, Any] | None = None
    rule_ids: tuple[str, ...] = field(default=())


def of_ingest(result: IngestResult, *, action: str, title: str | None, warnings: tuple[str, ...]) -> Outcome:
    """`warnings`: everything the answer said (the parser's and the ingest's)."""
    alert = result.alert
    common: dict[str, Any] = {
        "action": action,
        "title": title,
        "message": result.note,
        "warnings": warnings,
        "incident_number": result.incident.incident_number if result.incident is not None else None,
        "alert_id": alert.alert_id if alert is not None else None,
    }
    if result.dropped:
        return Outcome("dropped", rule_ids=result.dropped_by, **common)
    if result.suppressed:
        suppressed_by = dict(alert.suppressed_by) if alert is not None and alert.suppressed_by else None
        return Outcome("suppressed", suppressed_by=suppressed_by, **common)
    if result.created:
        return Outcome("created", **common)
    if result.grouped:
        return Outcome("grouped", **common)
    if result.deduplicated:
        return Outcome("deduplicated", **common)
    return Outcome("accepted", **common)


def of_error(error: AppError, handled: Outcome | None = None) -> Outcome:
    """A request answered with `error`; `handled`: what its handler knew before (the title, the
    warnings of a parse that went on to fail)."""
    if error.code == "RATE_LIMITED":
        kind = "rate_limited"
    elif error.status >= 500:
        kind = "failed"
    else:
        kind = "refused"
    known = handled or Outcome(kind)
    return Outcome(
        kind,
        action=known.action,
        title=known.title,
        message=error.message,
        error_code=error.code,
        warnings=known.warnings,
    )


def refused_for_signature(error_code: str | None) -> bool:
    return error_code in SIGNATURE_ERRORS
