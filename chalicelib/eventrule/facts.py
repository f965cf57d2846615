"""What event rules see of an alert, and what they decide. Pure data, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class AlertFacts:
    """The normalized alert as conditions read it (fields title, source, severity, service_id,
    integration_type and labels.<name>)."""

    title: str
    source: str
    severity: str | None
    service_id: str | None  # SER-nnnnn of the service the alert names (or its integration's default)
    integration_type: str
    labels: Mapping[str, str] = field(default_factory=dict)
    service_key: str | None = None  # the same service's svc_ key: `service_id equals` matches either


@dataclass(frozen=True)
class RuleDecision:
    """What the matching rules decided. Nothing matched: every field at its default."""

    dropped: bool = False
    suppressed: bool = False
    severity: str | None = None
    route_to_service: str | None = None  # SER-nnnnn
    notes: tuple[str, ...] = ()
    matched_rule_ids: tuple[str, ...] = ()
    # Why the rules could not decide (evaluation passed its time budget: nothing above applied).
    # For whoever shows the event's outcome: the webhook answer's warnings, the integration's event log.
    warnings: tuple[str, ...] = ()
