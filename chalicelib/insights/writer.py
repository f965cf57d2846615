"""Adding a happening to the rollups: every item's counters and the happening's marker in one
TransactWriteItems, so a happening counts once, all or nothing, however often it is delivered."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from pynamodb.expressions.update import Action

from chalicelib.insights import rollups
from chalicelib.insights.rollups import Addition, Happening
from chalicelib.insights.tables import MARKER_DAYS, MARKER_SLOT, RollupRecord, marker_partition
from chalicelib.store import Transaction, TransactionCancelled, absent

logger = logging.getLogger("tocsin.insights")

MARKER_LABEL = "marker"
# DynamoDB's limit on the items of one transaction (a marker and the rest).
MAX_ITEMS = 100


def item_of(organization_id: str, addition: Addition) -> RollupRecord:
    target = addition.target
    if target.at is None:
        return RollupRecord(rollups.total_partition(organization_id), rollups.total_slot(target.kind, target.value))
    return RollupRecord(
        rollups.partition(organization_id, target.kind, target.at), rollups.slot(target.at, target.value)
    )


def apply(happening: Happening, *, now: datetime) -> bool:
    """Add the happening once; False when it was counted already (a redelivery)."""
    additions = [addition for addition in happening.additions if any(addition.counters.values())]
    if not additions:
        return False
    marker = RollupRecord(marker_partition(happening.organization_id, happening.happening_id), MARKER_SLOT)
    marker.expires_at = now + timedelta(days=MARKER_DAYS)
    transaction = Transaction()
    transaction.put(MARKER_LABEL, marker, absent(RollupRecord))
    merged: dict[tuple[str, str], tuple[RollupRecord, dict[str, int]]] = {}
    for addition in additions:
        item = item_of(happening.organization_id, addition)
        key = (item.partition, item.slot)
        _, counters = merged.setdefault(key, (item, {}))
        for name, amount in addition.counters.items():
            counters[name] = counters.get(name, 0) + amount
    if len(merged) + 1 > MAX_ITEMS:
        raise ValueError(f"happening {happening.happening_id} touches {len(merged)} items")
    for index, (item, counters) in enumerate(merged.values()):
        actions: list[Action] = [RollupRecord.counter(name).add(amount) for name, amount in counters.items() if amount]
        transaction.update(f"item{index}", item, actions, check_version=False)
    try:
        transaction.commit()
    except TransactionCancelled as cancelled:
        if MARKER_LABEL in cancelled.failed:
            logger.info("happening counted already", extra={"happening_id": happening.happening_id})
            return False
        raise
    return True
