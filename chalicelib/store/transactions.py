"""A labelled TransactWriteItems: callers learn which of their items failed its condition.

DynamoDB reports one cancellation reason per item, in the order PynamoDB sends the items
(condition checks, deletes, puts, updates). `Transaction` keeps that order itself, so it can
map each reason back to the label the caller gave the item and tell "that name is taken" from
"someone else changed this item first" or "another transaction was in the way".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pynamodb.exceptions import TransactWriteError
from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action
from pynamodb.models import Model
from pynamodb.transactions import TransactWrite

from chalicelib import aws
from chalicelib.store.failures import (
    CANCELLED_CODE,
    CONDITION_FAILED_REASON,
    CONTENTION_REASON,
    TransactionCancelled,
)

# DynamoDB applies a transaction's items grouped in this order (as PynamoDB sends them).
_CHECK, _DELETE, _PUT, _UPDATE = range(4)


class Transaction:
    """Items added with a label; `commit` writes all or nothing, raising TransactionCancelled.

    Items that save or update a model with a version attribute get PynamoDB's version condition
    (and bump) as with a single write.
    """

    def __init__(self) -> None:
        self._ops: list[tuple[int, str, Callable[[TransactWrite], None]]] = []

    def put(self, label: str, model: Model, condition: Condition | None = None) -> None:
        self._ops.append((_PUT, label, lambda tx: tx.save(model, condition=condition)))

    def delete(
        self, label: str, model: Model, condition: Condition | None = None, *, check_version: bool = True
    ) -> None:
        """`check_version=False`: delete whatever version is stored (`condition` says which item)."""
        self._ops.append(
            (_DELETE, label, lambda tx: tx.delete(model, condition=condition, add_version_condition=check_version))
        )

    def update(
        self,
        label: str,
        model: Model,
        actions: list[Action],
        condition: Condition | None = None,
        *,
        check_version: bool = True,
    ) -> None:
        """`check_version=False`: an atomic counter-style update that bumps the version (so concurrent
        read-modify-writes of the item retry) without requiring the one `model` holds."""
        self._ops.append(
            (
                _UPDATE,
                label,
                lambda tx: tx.update(model, actions=actions, condition=condition, add_version_condition=check_version),
            )
        )

    def check(self, label: str, model_cls: type[Model], hash_key: Any, range_key: Any, condition: Condition) -> None:
        self._ops.append(
            (_CHECK, label, lambda tx: tx.condition_check(model_cls, hash_key, range_key, condition=condition))
        )

    def commit(self) -> None:
        """Write every item or none. A cancellation raises TransactionCancelled (the labels whose
        condition failed, and whether there was contention); any other error passes unchanged."""
        ordered = sorted(self._ops, key=lambda op: op[0])  # stable: keeps insertion order within a group
        try:
            with TransactWrite(connection=aws.transaction_connection()) as tx:
                for _, _, apply in ordered:
                    apply(tx)
        except TransactWriteError as error:
            if error.cause_response_code != CANCELLED_CODE:
                raise
            reasons = error.cancellation_reasons
            failed = frozenset(
                label
                for (_, label, _), reason in zip(ordered, reasons, strict=False)
                if reason is not None and reason.code == CONDITION_FAILED_REASON
            )
            contention = any(reason is not None and reason.code == CONTENTION_REASON for reason in reasons)
            raise TransactionCancelled(failed, contention, error.cause) from error


def assign(attribute: Any, value: Any) -> Action:
    """SET the attribute, or REMOVE it when the value is None (typed loosely for PynamoDB's generics)."""
    action: Action = attribute.remove() if value is None else attribute.set(value)
    return action
