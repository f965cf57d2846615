"""Conditional single-item writes and claims.

Each helper answers False when the write's condition (or the version PynamoDB checks) was false
and lets every other error through, so a caller states what a lost race means without knowing
how DynamoDB reports one. `conditional()` does the same for writes the helpers do not cover.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from pynamodb.expressions.condition import Condition
from pynamodb.expressions.update import Action
from pynamodb.models import Model

from chalicelib.store.failures import WRITE_ERRORS, ConditionFailed, condition_failed

logger = logging.getLogger("tocsin.store")


@contextmanager
def conditional() -> Iterator[None]:
    """Raise ConditionFailed for a write inside whose condition was false; other errors pass unchanged."""
    try:
        yield
    except WRITE_ERRORS as error:
        if condition_failed(error):
            raise ConditionFailed(error) from error
        raise


@contextmanager
def best_effort(what: str) -> Iterator[None]:
    """Swallow any refused write inside, whatever the reason: for writes whose failure must not
    fail the caller (a usage stamp, releasing a claim on an error path). Other exceptions pass."""
    try:
        yield
    except WRITE_ERRORS as error:
        logger.debug("best-effort write skipped", extra={"what": what, "error": str(error)})


def absent(model_cls: type[Model]) -> Condition:
    """The condition "no item with this key exists yet" (the hash key decides, for either key shape)."""
    hash_key = next(attribute for attribute in model_cls.get_attributes().values() if attribute.is_hash_key)
    return hash_key.does_not_exist()


def save_if(record: Model, condition: Condition | None = None) -> bool:
    """PutItem; False when `condition` (or the version PynamoDB checks) was false."""
    try:
        with conditional():
            record.save(condition=condition)
    except ConditionFailed:
        return False
    return True


def put_if_absent(record: Model) -> bool:
    """Claim the record's key: True for exactly one of any number of racing writers."""
    return save_if(record, absent(type(record)))


def update_if(record: Model, actions: Sequence[Action], condition: Condition | None = None) -> bool:
    """UpdateItem (the record takes the stored result); False when a condition was false."""
    try:
        with conditional():
            record.update(actions=list(actions), condition=condition)
    except ConditionFailed:
        return False
    return True


def update_unversioned_if(record: Model, actions: Sequence[Action], condition: Condition) -> bool:
    """UpdateItem that leaves the version attribute as it is (PynamoDB's `update` always bumps
    it): for bookkeeping a background job keeps on an item whose version belongs to the people who
    edit it, so their next conditional write does not fail over it. The record takes the stored
    result; False when `condition` was false."""
    hash_key, range_key = record._get_hash_range_key_serialized_values()
    try:
        with conditional():
            stored = record._get_connection().update_item(
                hash_key, range_key=range_key, actions=list(actions), condition=condition, return_values="ALL_NEW"
            )
    except ConditionFailed:
        return False
    record.deserialize(stored["Attributes"])
    return True


def delete_if(record: Model, condition: Condition | None = None, *, add_version_condition: bool = True) -> bool:
    """DeleteItem; False when `condition` (or the version, unless turned off) was false."""
    try:
        with conditional():
            record.delete(condition=condition, add_version_condition=add_version_condition)
    except ConditionFailed:
        return False
    return True
