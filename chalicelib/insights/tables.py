"""The insights table: hourly rollup items, all-time totals, and markers of happenings counted.

Keys are in `rollups.py`. A marker (`<org>#seen#<happening id>`, sort key `-`) is written in the
same transaction as the counters it guards, so a redelivered message adds nothing twice; it
expires after MARKER_DAYS, long after SQS has given up redelivering (14 days at most).
"""

from __future__ import annotations

from typing import Any

from pynamodb.attributes import NumberAttribute, TTLAttribute, UnicodeAttribute

from chalicelib import aws
from chalicelib.insights.rollups import counter_names
from chalicelib.store.model import TocsinModel

MARKER_DAYS = 30
MARKER_SLOT = "-"


def marker_partition(organization_id: str, happening_id: str) -> str:
    return f"{organization_id}#seen#{happening_id}"


@aws.register_model
class RollupRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "insights-rollups"

    partition = UnicodeAttribute(hash_key=True)
    slot = UnicodeAttribute(range_key=True)
    expires_at = TTLAttribute(null=True)  # markers only
    # One number attribute per counter (ADD creates it; an item carries only those it was given).
    # Declared in a loop: the histogram buckets alone are a few hundred names.
    for _name in counter_names():
        vars()[_name] = NumberAttribute(null=True)
    del _name

    def counters(self) -> dict[str, int]:
        values: dict[str, Any] = self.attribute_values
        return {name: int(value) for name, value in values.items() if isinstance(value, int | float)}

    @classmethod
    def counter(cls, name: str) -> NumberAttribute:
        attribute = cls.get_attributes()[name]
        assert isinstance(attribute, NumberAttribute)
        return attribute
