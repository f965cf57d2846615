"""A vendor account as its readers fetch it: the vendor's own JSON, objects completed with the
parts the vendor serves apart (a user's contact methods, a team's members, a schedule's
overrides), and the sections that could not be read with the reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Raw = dict[str, Any]


@dataclass
class PagerDutyAccount:
    users: list[Raw] = field(default_factory=list)  # + contact_methods, notification_rules (full objects)
    teams: list[Raw] = field(default_factory=list)  # + members: [{user, role}]
    schedules: list[Raw] = field(default_factory=list)  # full, + overrides (from now), + final_schedule
    escalation_policies: list[Raw] = field(default_factory=list)
    services: list[Raw] = field(default_factory=list)  # + integrations (full objects)
    maintenance_windows: list[Raw] = field(default_factory=list)  # ongoing and future
    unavailable: dict[str, str] = field(default_factory=dict)  # section -> why it could not be read

    def counts(self) -> dict[str, int]:
        return {
            "users": len(self.users),
            "teams": len(self.teams),
            "schedules": len(self.schedules),
            "escalation policies": len(self.escalation_policies),
            "services": len(self.services),
            "integrations": sum(len(s.get("integrations") or []) for s in self.services),
            "maintenance windows": len(self.maintenance_windows),
        }


@dataclass
class OpsgenieAccount:
    users: list[Raw] = field(default_factory=list)  # + contacts, notificationRules (with steps)
    teams: list[Raw] = field(default_factory=list)  # + members, routingRules (None: not readable)
    schedules: list[Raw] = field(default_factory=list)  # + rotations, overrides
    escalations: list[Raw] = field(default_factory=list)
    services: list[Raw] | None = None  # None: the Service API did not answer
    integrations: list[Raw] = field(default_factory=list)
    maintenances: list[Raw] = field(default_factory=list)  # full, with rules; not past or cancelled
    heartbeats: list[Raw] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {
            "users": len(self.users),
            "teams": len(self.teams),
            "schedules": len(self.schedules),
            "escalations": len(self.escalations),
            "services": len(self.services or []),
            "integrations": len(self.integrations),
            "maintenances": len(self.maintenances),
            "heartbeats": len(self.heartbeats),
        }
