"""Users, teams and services. The guard items that keep their names unique per organization are
chalicelib.store.unique's UniqueNameRecord."""

from __future__ import annotations

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    ListAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex, LocalSecondaryIndex

from chalicelib import aws
from chalicelib.store.indexes import global_index, local_index
from chalicelib.store.model import TocsinModel


@aws.register_model
class UserRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "users"

    organization_id = UnicodeAttribute(hash_key=True)
    user_id = UnicodeAttribute(range_key=True)
    name = UnicodeAttribute(null=True)
    email = UnicodeAttribute(null=True)
    email_key = UnicodeAttribute(null=True)
    slack_user_id = UnicodeAttribute(null=True)
    role = UnicodeAttribute(default="responder")
    is_active = BooleanAttribute(default=True)
    # An IANA zone name the person chose; null: the organization's zone.
    time_zone = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)

    # email_key: <organization_id>#<lower-cased email>
    by_email: GlobalSecondaryIndex[UserRecord] = global_index("email-index", "email_key")
    # Sparse: only users with a Slack user id are in it. A Slack click names the Slack user;
    # this finds the Tocsin user(s) linked to it, in every organization, without a Scan.
    by_slack_user_id: GlobalSecondaryIndex[UserRecord] = global_index("slack-user-index", "slack_user_id")


@aws.register_model
class TeamRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "teams"

    organization_id = UnicodeAttribute(hash_key=True)
    team_id = UnicodeAttribute(range_key=True)
    name = UnicodeAttribute()
    description = UnicodeAttribute(null=True)
    member_ids = ListAttribute(of=UnicodeAttribute, default=list)
    is_active = BooleanAttribute(default=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)
    # Optimistic locking: every write checks and bumps it, so concurrent membership changes never lose one.
    version = VersionAttribute()


@aws.register_model
class ServiceRecord(TocsinModel):
    """Keyed by the public service key so an incident's services are one BatchGetItem."""

    class Meta(TocsinModel.Meta):
        table_name = "services"

    organization_id = UnicodeAttribute(hash_key=True)
    service_key = UnicodeAttribute(range_key=True)
    service_id = UnicodeAttribute()  # SER-<5 digits>
    name = UnicodeAttribute()
    description = UnicodeAttribute(null=True)
    team_id = UnicodeAttribute(null=True)
    default_severity = UnicodeAttribute(null=True)
    escalation_policy_id = UnicodeAttribute(null=True)
    # chalicelib.catalog.urgency.UrgencyRule.to_dict(); absent on services created before it: the default rule.
    urgency_rule = JSONAttribute(null=True)
    # chalicelib.catalog.grouping.AlertGrouping.to_dict(); absent: no grouping.
    alert_grouping = JSONAttribute(null=True)
    is_active = BooleanAttribute(default=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)

    by_service_id: LocalSecondaryIndex[ServiceRecord] = local_index("service-id-index", "organization_id", "service_id")
