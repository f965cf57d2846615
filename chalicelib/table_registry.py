"""The registry of every table.

Each domain describes its own items in its `tables.py` (on `chalicelib.store.model.TocsinModel`);
`all_models()` imports them all, for provisioning, the CloudFormation drift test and the admin
CLI. It sits at the top of the import layers: it knows every domain, and no domain knows it.
"""

from __future__ import annotations

from pynamodb.models import Model

from chalicelib import aws


def all_models() -> list[type[Model]]:
    # Imported here so that a route needing one table does not load every domain.
    import chalicelib.alert.tables
    import chalicelib.apikey.tables
    import chalicelib.change.tables
    import chalicelib.console.tables
    import chalicelib.contact.tables
    import chalicelib.directory.tables
    import chalicelib.escalation.tables
    import chalicelib.eventlog.tables
    import chalicelib.eventrule.tables
    import chalicelib.externalref.tables
    import chalicelib.heartbeat.tables
    import chalicelib.idempotency.tables
    import chalicelib.identity.tables
    import chalicelib.incident.tables
    import chalicelib.insights.tables
    import chalicelib.integration.tables
    import chalicelib.maintenance.tables
    import chalicelib.notification.deliveries
    import chalicelib.oncall.tables
    import chalicelib.opsgenie.tables
    import chalicelib.organization.tables
    import chalicelib.outbound.tables
    import chalicelib.postmortem.tables
    import chalicelib.ratelimit.tables
    import chalicelib.statuspage.tables
    import chalicelib.store.counters
    import chalicelib.store.unique
    import chalicelib.subscriber.tables  # noqa: F401

    return aws.registered_models()
