"""Event rule lists: one item per ordered list (an organization's, or one integration's).

The whole list is one item, so the alert pipeline reads both lists that apply to an event with
one BatchGetItem of two keys (never a Query), and the order is simply the order of the JSON array.
Every change rewrites the item conditioned on its version (VersionAttribute): two racing edits
of one list cannot lose either one's rule; the loser re-reads and re-applies.
"""

from __future__ import annotations

from pynamodb.attributes import UnicodeAttribute, UTCDateTimeAttribute, VersionAttribute

from chalicelib import aws
from chalicelib.store.model import TocsinModel

ORGANIZATION_LIST = "organization"
INTEGRATION_LIST_PREFIX = "integration#"


def list_key(integration_id: str | None) -> str:
    """The range key of the organization's list (None) or of one integration's."""
    return ORGANIZATION_LIST if integration_id is None else INTEGRATION_LIST_PREFIX + integration_id


@aws.register_model
class EventRuleSetRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "event-rule-sets"

    organization_id = UnicodeAttribute(hash_key=True)
    rule_set = UnicodeAttribute(range_key=True)  # "organization" or "integration#<integration id>"
    # JSON array of rules in evaluation order (eventrule.rules.rule_to_item); kept under
    # DynamoDB's 400 KB item limit by eventrule.service.MAX_STORED_BYTES.
    rules_json = UnicodeAttribute(default="[]")
    updated_at = UTCDateTimeAttribute(null=True)
    version = VersionAttribute()
