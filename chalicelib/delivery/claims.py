"""Claims: a unit of work taken once with a conditional write, run, then settled or released.

A `Claim` is the item that says "this is being done" (a notification's delivery id, an
Idempotency-Key, a status-page notice to one subscriber, an inbound SMS), written only when no
such item exists, or when the one stored may be taken over (`takeover`: its lease ran out, so
the worker that wrote it died; or the item outlived its TTL, which moto and DynamoDB apply
lazily). Of any number of workers racing for it, exactly one takes it; a redelivered message
finds it taken.

`run_once` is the whole dance: take the claim, run the work, then let `settle` record the
outcome on the claim and say whether it stays (done: never again) or goes (released: the next
delivery of the message may take it). Work that raises releases the claim and re-raises, so SQS
retries the message. Release deletes the item only while it is still a claim in progress
(`in_progress`), never a finished one.

A claim may carry a `Guard`: a condition on another item (a page's incident: not resolved, not
acknowledged, the same escalation) written as a ConditionCheck in the same transaction as the
claim, so the work is claimed only while what the caller read still holds. A guard found false
raises `GuardFailed`: the caller reads again and decides (skip, or claim again).

Scheduled deliveries (webhooks) claim each attempt on their delivery record instead:
chalicelib/delivery/attempts.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pynamodb.expressions.condition import Condition
from pynamodb.models import Model

from chalicelib.store import Transaction, TransactionCancelled, absent, best_effort, delete_if, save_if

T = TypeVar("T")


@dataclass(frozen=True)
class Guard:
    """What must still hold of another item for the claim to be taken: `condition` on the item
    of `model` with these keys, checked in the claim's own transaction."""

    model: type[Model]
    hash_key: Any
    range_key: Any
    condition: Condition


class GuardFailed(Exception):
    """The claim was not taken because its guard was false (or the guarded item was being written
    at that moment): the caller reads the item again and decides."""


@dataclass(frozen=True)
class Claim:
    """The item written as the claim, the condition that it is still one in progress (what a
    release may delete), when a stored item may be overwritten anyway (None: never), and what
    must hold elsewhere for it to be taken (None: nothing)."""

    record: Model
    in_progress: Condition
    takeover: Condition | None = None
    what: str = "a claim"  # for the log line of a release that could not be written
    guard: Guard | None = None


@dataclass(frozen=True)
class Done(Generic[T]):
    """The work ran under the claim; `result` is what it returned."""

    result: T


def take(claim: Claim) -> bool:
    """True for exactly one of any number of racing takers; False when it is held or finished.
    A guarded claim raises GuardFailed when its guard was false (and it was not held already)."""
    condition = absent(type(claim.record))
    if claim.takeover is not None:
        condition = condition | claim.takeover
    if claim.guard is None:
        return save_if(claim.record, condition)
    guard = claim.guard
    transaction = Transaction()
    transaction.put("claim", claim.record, condition)
    transaction.check("guard", guard.model, guard.hash_key, guard.range_key, guard.condition)
    try:
        transaction.commit()
    except TransactionCancelled as cancelled:
        if "claim" in cancelled.failed:
            return False
        raise GuardFailed(f"{claim.what}: its guard no longer holds") from cancelled
    return True


def release(claim: Claim) -> None:
    """Delete the claim so a retry may take it again: only while it is in progress, and best
    effort (a release that fails leaves a claim whose lease, if any, runs out)."""
    with best_effort(f"release {claim.what}"):
        delete_if(claim.record, claim.in_progress)


def run_once(claim: Claim, work: Callable[[], T], settle: Callable[[T], bool]) -> Done[T] | None:
    """Take the claim and run `work` under it; None when it was not taken (done already, or
    another worker holds it). `settle(result)` records the outcome and answers True to keep the
    claim (done) or False to release it. `work` raising releases the claim and re-raises."""
    if not take(claim):
        return None
    try:
        result = work()
    except Exception:
        release(claim)
        raise
    if not settle(result):
        release(claim)
    return Done(result)
