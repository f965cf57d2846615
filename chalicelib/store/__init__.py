"""The DynamoDB kernel every domain uses: transactions, conditional claims, one test for
"condition failed", and one retry-on-conflict helper, and one test for "throttled or failing transiently".

It sits below the domains and above the base modules (aws, settings, clock, errors, tables) and
imports no domain package. Outside this package no module reads DynamoDB's condition-failure
codes or catches PynamoDB's write errors (tests/unit/test_store_is_the_one_place.py checks it).
"""

from __future__ import annotations

from chalicelib.store.conditions import (
    absent,
    best_effort,
    conditional,
    delete_if,
    put_if_absent,
    save_if,
    update_if,
    update_unversioned_if,
)
from chalicelib.store.failures import ConditionFailed, TransactionCancelled, condition_failed, throttled
from chalicelib.store.retry import RetryableConflict, retry_on_conflict
from chalicelib.store.transactions import Transaction, assign
from chalicelib.store.unique import UniqueNameRecord, claim_unique, owner_of, release_unique

__all__ = [
    "ConditionFailed",
    "RetryableConflict",
    "Transaction",
    "TransactionCancelled",
    "UniqueNameRecord",
    "absent",
    "assign",
    "best_effort",
    "claim_unique",
    "condition_failed",
    "conditional",
    "delete_if",
    "owner_of",
    "put_if_absent",
    "release_unique",
    "retry_on_conflict",
    "save_if",
    "throttled",
    "update_if",
    "update_unversioned_if",
]
