"""Uniqueness guards and a labelled TransactWrite, shared by users, teams and services.

A guard is a UniqueNameRecord claimed in the same transaction as the item it
guards; its `does_not_exist` condition makes two racing creates end with one winner.
`Transaction` remembers which of its items failed their condition, so callers can
tell "that name is taken" from "someone else changed this item first".
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

from pynamodb.exceptions import DoesNotExist, TransactWriteError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from chalicelib import aws
from chalicelib.directory.tables import UniqueNameRecord
from chalicelib.errors import Conflict

T = TypeVar("T")

# DynamoDB applies a transaction's items grouped in this order (as PynamoDB sends them).
_CHECK, _DELETE, _PUT, _UPDATE = range(4)


class TransactionCancelled(Exception):
    """The transaction wrote nothing. `failed` holds the labels whose condition was false."""

    def __init__(self, failed: frozenset[str], contention: bool) -> None:
        super().__init__(f"transaction cancelled (failed: {sorted(failed)}, contention: {contention})")
        self.failed = failed
        self.contention = contention

    @property
    def retryable(self) -> bool:
        """A condition failed or another transaction was in the way: re-read and try again."""
        return bool(self.failed) or self.contention


class RetryableConflict(Exception):
    """Another writer got there first; re-read and try again."""


class Transaction:
    def __init__(self) -> None:
        self._ops: list[tuple[int, str, Callable[[TransactWrite], None]]] = []

    def put(self, label: str, model: Model, condition: Condition | None = None) -> None:
        self._ops.append((_PUT, label, lambda tx: tx.save(model, condition=condition)))

    def delete(self, label: str, model: Model, condition: Condition | None = None) -> None:
        self._ops.append((_DELETE, label, lambda tx: tx.delete(model, condition=condition)))

    def update(self, label: str, model: Model, actions: list[Action], condition: Condition | None = None) -> None:
        self._ops.append((_UPDATE, label, lambda tx: tx.update(model, actions=actions, condition=condition)))

    def check(self, label: str, model_cls: type[Model], hash_key: Any, range_key: Any, condition: Condition) -> None:
        self._ops.append(
            (_CHECK, label, lambda tx: tx.condition_check(model_cls, hash_key, range_key, condition=condition))
        )

    def commit(self) -> None:
        ordered = sorted(self._ops, key=lambda op: op[0])  # stable: keeps insertion order within a group
        try:
            with TransactWrite(connection=aws.transaction_connection()) as tx:
                for _, _, apply in ordered:
                    apply(tx)
        except TransactWriteError as error:
            if error.cause_response_code != "TransactionCanceledException":
                raise
            reasons = error.cancellation_reasons
            failed = frozenset(
                label
                for (_, label, _), reason in zip(ordered, reasons, strict=False)
                if reason is not None and reason.code == "ConditionalCheckFailed"
            )
            contention = any(reason is not None and reason.code == "TransactionConflict" for reason in reasons)
            raise TransactionCancelled(failed, contention) from error


def assign(attribute: Any, value: Any) -> Action:
    """SET the attribute, or REMOVE it when the value is None (typed loosely for PynamoDB's generics)."""
    action: Action = attribute.remove() if value is None else attribute.set(value)
    return action


def claim(tx: Transaction, label: str, organization_id: str, unique_key: str, owner_id: str) -> None:
    record = UniqueNameRecord(organization_id, unique_key, owner_id=owner_id)
    tx.put(label, record, condition=UniqueNameRecord.unique_key.does_not_exist())


def release(tx: Transaction, label: str, organization_id: str, unique_key: str, owner_id: str) -> None:
    record = UniqueNameRecord(organization_id, unique_key, owner_id=owner_id)
    tx.delete(label, record, condition=UniqueNameRecord.owner_id == owner_id)


def owner_of(*, organization_id: str, unique_key: str) -> str | None:
    aws.bind_tables()
    try:
        return str(UniqueNameRecord.get(organization_id, unique_key, consistent_read=True).owner_id)
    except DoesNotExist:
        return None


def retrying(operation: Callable[[], T], *, what: str, attempts: int = 25) -> T:
    """Run `operation`, re-running it while it raises RetryableConflict (with jittered backoff)."""
    for attempt in range(attempts):
        try:
            return operation()
        except RetryableConflict:
            time.sleep(random.uniform(0, 0.005 * 2 ** min(attempt, 6)))
    raise Conflict(f"The {what} was changed concurrently too many times; retry the request.")
