"""The delivery kernel's claims on moto (chalicelib/delivery/claims.py): of racing workers exactly
one takes a claim and runs the work; work that raises, or a settle that says "not done",
releases it; a claim held past its lease is taken over, one within it is not; a finished claim
is never released. Shown on a notification's delivery id (chalicelib/notification/deliveries.py)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from chalicelib.delivery import claims
from chalicelib.notification import deliveries
from chalicelib.notification.deliveries import CLAIM_LEASE, DeliveryRecord
from tests.conftest import NOW

pytestmark = pytest.mark.usefixtures("aws_env")


def stored(delivery_id: str) -> DeliveryRecord | None:
    try:
        return DeliveryRecord.get(delivery_id, consistent_read=True)
    except DeliveryRecord.DoesNotExist:
        return None


def test_of_racing_workers_exactly_one_takes_the_claim_and_runs_the_work() -> None:
    workers = 8
    barrier = threading.Barrier(workers)
    ran: list[int] = []

    def work(number: int) -> bool:
        barrier.wait()
        done = claims.run_once(deliveries.claim_of("race#1", NOW), lambda: ran.append(number), lambda _: True)
        return done is not None

    with ThreadPoolExecutor(max_workers=workers) as pool:
        taken = list(pool.map(work, range(workers)))
    assert taken.count(True) == 1
    assert len(ran) == 1
    record = stored("race#1")
    assert record is not None and record.state == "sending"


def test_a_settled_claim_stays_and_a_second_run_does_nothing() -> None:
    calls: list[str] = []

    def settle(result: str) -> bool:
        deliveries.mark_sent("once#1", NOW)
        return True

    first = claims.run_once(deliveries.claim_of("once#1", NOW), lambda: calls.append("sent") or "sent", settle)
    assert first is not None and first.result == "sent"
    again = claims.run_once(
        deliveries.claim_of("once#1", NOW + timedelta(hours=1)), lambda: calls.append("again"), settle
    )
    assert again is None
    assert calls == ["sent"]
    record = stored("once#1")
    assert record is not None and record.state == "sent"


def test_work_that_raises_releases_the_claim_and_the_error_passes() -> None:
    def explode() -> None:
        raise RuntimeError("provider down")

    with pytest.raises(RuntimeError, match="provider down"):
        claims.run_once(deliveries.claim_of("boom#1", NOW), explode, lambda _: True)
    assert stored("boom#1") is None
    retried = claims.run_once(deliveries.claim_of("boom#1", NOW), lambda: "ok", lambda _: True)
    assert retried is not None and retried.result == "ok"


def test_a_settle_that_says_not_done_releases_the_claim() -> None:
    done = claims.run_once(deliveries.claim_of("retry#1", NOW), lambda: "not yet", lambda _: False)
    assert done is not None and done.result == "not yet"  # the work ran; its claim is gone
    assert stored("retry#1") is None
    assert claims.take(deliveries.claim_of("retry#1", NOW))


def test_a_claim_held_past_its_lease_is_taken_over_one_within_it_is_not() -> None:
    assert claims.take(deliveries.claim_of("lease#1", NOW))
    assert not claims.take(deliveries.claim_of("lease#1", NOW + CLAIM_LEASE))  # the lease still runs
    later = NOW + CLAIM_LEASE + timedelta(seconds=1)
    assert claims.take(deliveries.claim_of("lease#1", later))  # the worker that held it died
    record = stored("lease#1")
    assert record is not None and record.claimed_at == later


def test_a_finished_claim_is_neither_released_nor_taken_over() -> None:
    deliveries.mark_sent("sent#1", NOW)
    claims.release(deliveries.claim_of("sent#1", NOW))
    record = stored("sent#1")
    assert record is not None and record.state == "sent"
    assert not claims.take(deliveries.claim_of("sent#1", NOW + timedelta(days=1)))


def _guard_on(delivery_id: str, state: str) -> claims.Guard:
    """A guard on another delivery record: it must be in `state`."""
    return claims.Guard(DeliveryRecord, delivery_id, None, DeliveryRecord.state == state)


def test_a_guarded_claim_is_taken_only_while_its_guard_holds() -> None:
    deliveries.mark_sent("guarded#item", NOW)
    with pytest.raises(claims.GuardFailed):
        claims.take(deliveries.claim_of("guarded#1", NOW, _guard_on("guarded#item", "sending")))
    assert stored("guarded#1") is None  # nothing written
    assert claims.take(deliveries.claim_of("guarded#1", NOW, _guard_on("guarded#item", "sent")))
    # Held already: not taken, whatever its guard says (a redelivered page is not news).
    assert not claims.take(deliveries.claim_of("guarded#1", NOW, _guard_on("guarded#item", "sending")))
    ran: list[str] = []
    with pytest.raises(claims.GuardFailed):
        claims.run_once(
            deliveries.claim_of("guarded#2", NOW, _guard_on("guarded#item", "skipped")),
            lambda: ran.append("ran"),
            lambda _: True,
        )
    assert ran == [] and stored("guarded#2") is None
