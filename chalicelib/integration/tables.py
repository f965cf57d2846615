"""Integrations (keyed by the hash of their routing key) and alert dedup claims."""

from __future__ import annotations

from pynamodb.attributes import ListAttribute, TTLAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import GlobalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index
from chalicelib.store.model import TocsinModel


@aws.register_model
class IntegrationRecord(TocsinModel):
    """One routing key of an integration. Regenerating the URL supersedes the item with a new one;
    revoking marks it. Only the keyed hash of the routing key is stored."""

    class Meta(TocsinModel.Meta):
        table_name = "integrations"

    routing_key_hash = UnicodeAttribute(hash_key=True)
    integration_id = UnicodeAttribute()
    organization_id = UnicodeAttribute()
    integration_type = UnicodeAttribute()
    name = UnicodeAttribute()
    state = UnicodeAttribute()  # active | revoked | superseded
    default_service_key = UnicodeAttribute(null=True)
    signing_secret_sealed = UnicodeAttribute(null=True)  # custom webhooks, AES-GCM sealed
    client_secret_sealed = UnicodeAttribute(null=True)  # Sentry, AES-GCM sealed
    ip_allowlist = ListAttribute(of=UnicodeAttribute, default=list)
    expected_topic_arn = UnicodeAttribute(null=True)  # CloudWatch through SNS
    key_hint = UnicodeAttribute()  # first characters of the routing key, to recognise it
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute(null=True)
    revoked_at = UTCDateTimeAttribute(null=True)
    superseded_at = UTCDateTimeAttribute(null=True)

    by_organization: GlobalSecondaryIndex[IntegrationRecord] = global_index(
        "organization-index", "organization_id", "integration_id"
    )


@aws.register_model
class AlertDedupRecord(TocsinModel):
    """Which alert (and so which incident) an alert source's dedup key currently points at."""

    class Meta(TocsinModel.Meta):
        table_name = "alert-dedup"

    dedup_id = UnicodeAttribute(hash_key=True)  # <organization_id>#<origin id>#<dedup key>
    # The alert the key names; absent on claims written before alerts were records.
    alert_id = UnicodeAttribute(null=True)
    # The alert's incident; absent while the alert is suppressed (no incident).
    incident_number = UnicodeAttribute(null=True)
    updated_at = UTCDateTimeAttribute()
    expires_at = TTLAttribute(null=True)
