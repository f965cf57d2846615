"""Where an alert comes from: an integration's routing key, or a heartbeat that missed its ping.

The alert pipeline (chalicelib.integration.ingest) needs only these few facts, so a heartbeat can
raise alerts exactly as a monitoring tool does without pretending to be an integration.
"""

from __future__ import annotations

from dataclasses import dataclass

from chalicelib.auth.principal import Principal
from chalicelib.integration.tables import IntegrationRecord


@dataclass(frozen=True)
class AlertOrigin:
    organization_id: str
    # The integration's id, or the heartbeat's: dedup keys are scoped to it.
    origin_id: str
    # custom, sentry, newrelic, alertmanager, cloudwatch, pagerduty, opsgenie, or heartbeat.
    integration_type: str
    name: str
    default_service_key: str | None
    # None for a heartbeat: its alerts have no integration (and no integration event rules).
    integration_id: str | None
    # The person a sender names as acting (Opsgenie's `user`): the timeline names them, via the integration.
    acting_user: str | None = None

    @classmethod
    def of(cls, integration: IntegrationRecord, *, acting_user: str | None = None) -> AlertOrigin:
        return cls(
            organization_id=integration.organization_id,
            origin_id=integration.integration_id,
            integration_type=integration.integration_type,
            name=integration.name,
            default_service_key=integration.default_service_key,
            integration_id=integration.integration_id,
            acting_user=acting_user,
        )

    @property
    def principal(self) -> Principal:
        """Who the timeline names for what the alert does."""
        extra = {"integration_id": self.integration_id} if self.integration_id else {}
        integration = f"{self.name} ({self.integration_type})"
        return Principal(
            organization_id=self.organization_id,
            credential_kind="integration",
            scopes=frozenset(),
            display_name=self.acting_user or integration,
            via=integration if self.acting_user else None,
            extra=extra,  # outbound loop prevention keys on the integration id
        )
