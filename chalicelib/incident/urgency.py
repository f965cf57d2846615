"""An incident's urgency: set from its service's urgency rule when it opens, recomputed when its
severity changes (docs/INCIDENTS.md, "Urgency").

The incident keeps a copy of the rule it was opened under (`urgency_rule`), so a later change of
the service's rule never moves an open incident, as in PagerDuty; a severity change recomputes
under that copy at the time of the change. An incident stored before urgency existed has neither
attribute and reads as severity-based (`chalicelib.severity.urgency`).
"""

from __future__ import annotations

from datetime import datetime

from chalicelib.catalog.urgency import UrgencyRule, incident_urgency, rule_from_dict
from chalicelib.incident.tables import IncidentRecord
from chalicelib.severity import Urgency, urgency


def urgency_of(incident: IncidentRecord) -> Urgency:
    """The stored urgency, or the severity's when none is stored (incidents older than the field)."""
    stored = incident.urgency
    if stored == "high":
        return "high"
    if stored == "low":
        return "low"
    return urgency(incident.severity)


def set_urgency(incident: IncidentRecord, rule: UrgencyRule, now: datetime) -> None:
    """At creation: the rule's urgency for the incident's severity at `now`, and the rule kept with it."""
    incident.urgency_rule = rule.to_dict()
    incident.urgency = incident_urgency(rule, incident.severity, now)


def recompute_urgency(incident: IncidentRecord, now: datetime) -> tuple[Urgency, Urgency]:
    """After a severity change: (before, after) under the rule the incident was opened with."""
    before = urgency_of(incident)
    after = incident_urgency(rule_from_dict(incident.urgency_rule), incident.severity, now)
    incident.urgency = after
    return before, after
