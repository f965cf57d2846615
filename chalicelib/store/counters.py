"""Atomic per-organization counters (service ids, incident and postmortem numbers)."""

from __future__ import annotations

from pynamodb.attributes import NumberAttribute, UnicodeAttribute

from chalicelib import aws
from chalicelib.store.model import TocsinModel


@aws.register_model
class CounterRecord(TocsinModel):
    class Meta(TocsinModel.Meta):
        table_name = "counters"

    organization_id = UnicodeAttribute(hash_key=True)
    counter_name = UnicodeAttribute(range_key=True)
    current_value = NumberAttribute(default=0)


def next_value(*, organization_id: str, counter_name: str) -> int:
    """Increment and return the counter in one UpdateItem; unique under concurrency, never reused."""
    record = CounterRecord(organization_id, counter_name)
    record.update(actions=[CounterRecord.current_value.add(1)])
    return int(record.current_value)
