"""Escalation policies: one item per policy in the organization's partition.

Levels are stored as JSON (`Level.to_dict()` forms). Every write checks and bumps `version`.
"""

from __future__ import annotations

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
    VersionAttribute,
)

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class EscalationPolicyRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "escalation-policies"

    organization_id = UnicodeAttribute(hash_key=True)
    policy_id = UnicodeAttribute(range_key=True)
    name = UnicodeAttribute()
    levels = JSONAttribute()  # [Level.to_dict()], level 1 first
    repeat_count = NumberAttribute(default=0)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute(null=True)
    version = VersionAttribute()
