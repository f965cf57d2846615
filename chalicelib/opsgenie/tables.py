"""The Opsgenie drop-in's own items, in one table (`opsgenie`), each read by its key (GetItem):

- `OpsgenieAlertRecord` (`<organization_id>#alert#<alert_id>`): an alert the drop-in created, seen
  as Opsgenie shows it: its tiny id, and what the create sent that a Tocsin alert has no field for
  (the alias as sent, tags, entity, source, user, actions, responders, visibleTo, priority);
- `OpsgenieTinyRecord` (`<organization_id>#tiny#<n>`): which alert tiny id n names, written in the
  same transaction as the alert's record, so both exist or neither;
- `OpsgenieRequestRecord` (`<organization_id>#request#<request id>`): what a request became, for
  GET /v2/alerts/requests/{requestId}.

Alerts' items live as long as the alerts (180 days from their last event), requests 7 days (TTL;
moto never expires items, so reads skip expired ones too).
"""

from __future__ import annotations

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    ListAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)

from chalicelib import aws
from chalicelib.store.model import TocsinModel


def alert_item_key(organization_id: str, alert_id: str) -> str:
    return f"{organization_id}#alert#{alert_id}"


def tiny_item_key(organization_id: str, tiny_id: int) -> str:
    return f"{organization_id}#tiny#{tiny_id}"


def request_item_key(organization_id: str, request_id: str) -> str:
    return f"{organization_id}#request#{request_id}"


@aws.register_model
class OpsgenieAlertRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "opsgenie"

    item_key = UnicodeAttribute(hash_key=True)
    alert_id = UnicodeAttribute()
    tiny_id = NumberAttribute()
    alias = UnicodeAttribute(null=True)  # as sent (the dedup key may be its hash)
    priority = UnicodeAttribute()  # P1..P5
    tags = ListAttribute(of=UnicodeAttribute, default=list)
    entity = UnicodeAttribute(null=True)
    source = UnicodeAttribute(null=True)
    user = UnicodeAttribute(null=True)
    actions = ListAttribute(of=UnicodeAttribute, default=list)
    responders = JSONAttribute(default=list)  # [{"type", "id" | "name" | "username"}]
    visible_to = JSONAttribute(default=list)
    created_at = UTCDateTimeAttribute()
    expires_at = TTLAttribute()


@aws.register_model
class OpsgenieTinyRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "opsgenie"
        provisioned_by = "OpsgenieAlertRecord"

    item_key = UnicodeAttribute(hash_key=True)
    alert_id = UnicodeAttribute()
    expires_at = TTLAttribute()


@aws.register_model
class OpsgenieRequestRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "opsgenie"
        provisioned_by = "OpsgenieAlertRecord"

    item_key = UnicodeAttribute(hash_key=True)
    request_id = UnicodeAttribute()
    integration_id = UnicodeAttribute()
    action = UnicodeAttribute()  # Create, Acknowledge, Close, AddNote
    success = BooleanAttribute()
    status = UnicodeAttribute()  # what it became, in words ("Created alert", "Alert does not exist")
    alert_id = UnicodeAttribute(null=True)
    alias = UnicodeAttribute(null=True)
    processed_at = UTCDateTimeAttribute()
    expires_at = TTLAttribute()
