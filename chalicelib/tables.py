"""Shared PynamoDB building blocks and the registry of every table.

Each domain describes its own items in its `tables.py`; importing this module's
`all_models()` loads them all, for provisioning, the CloudFormation drift test
and the admin CLI.
"""

from __future__ import annotations

from pynamodb.models import Model

from chalicelib import aws


class TocsinModel(Model):
    """Base for every table: on-demand billing; name and endpoint bound lazily by aws.bind_tables."""

    class Meta:
        billing_mode = "PAY_PER_REQUEST"


def all_models() -> list[type[Model]]:
    # Imported here so that a route needing one table does not load every domain.
    import chalicelib.apikey.tables
    import chalicelib.counters
    import chalicelib.directory.tables
    import chalicelib.escalation.deliveries
    import chalicelib.escalation.tables
    import chalicelib.idempotency.tables
    import chalicelib.incident.tables
    import chalicelib.integration.tables
    import chalicelib.oncall.tables
    import chalicelib.organization.tables
    import chalicelib.outbound.tables
    import chalicelib.postmortem.tables
    import chalicelib.ratelimit.tables
    import chalicelib.statuspage.tables
    import chalicelib.store.unique  # noqa: F401

    return aws.registered_models()
