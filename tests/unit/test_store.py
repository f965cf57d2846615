"""The storage kernel's pure parts: the condition-failed test, the retry helper, the cancellation."""

from __future__ import annotations

from typing import Any

import pytest
from pynamodb.exceptions import (
    CancellationReason,
    DeleteError,
    GetError,
    PutError,
    TransactWriteError,
    UpdateError,
    VerboseClientError,
)

from chalicelib import store
from chalicelib.errors import Conflict
from chalicelib.store import retry


def client_error(code: str, reasons: list[CancellationReason | None] | None = None) -> VerboseClientError:
    return VerboseClientError(
        {"Error": {"Code": code, "Message": code}}, "Operation", cancellation_reasons=reasons or []
    )


def cancelled(*codes: str | None) -> TransactWriteError:
    reasons = [CancellationReason(code) if code else None for code in codes]
    return TransactWriteError(
        "Failed to write transaction items", cause=client_error("TransactionCanceledException", reasons)
    )


@pytest.mark.parametrize("error_class", [PutError, UpdateError, DeleteError])
def test_a_single_write_failed_its_condition_by_its_code(error_class: type[PutError]) -> None:
    assert store.condition_failed(error_class(cause=client_error("ConditionalCheckFailedException")))
    assert not store.condition_failed(error_class(cause=client_error("ProvisionedThroughputExceededException")))
    assert not store.condition_failed(error_class("no cause at all"))


def test_a_transaction_failed_a_condition_when_any_item_did() -> None:
    assert store.condition_failed(cancelled(None, "ConditionalCheckFailed"))
    assert not store.condition_failed(cancelled("TransactionConflict", None))
    assert not store.condition_failed(TransactWriteError("Failed", cause=client_error("ThrottlingException")))


def test_our_cancellation_failed_a_condition_when_a_label_failed() -> None:
    assert store.condition_failed(store.TransactionCancelled(frozenset({"guard"}), False))
    assert not store.condition_failed(store.TransactionCancelled(frozenset(), True))


def test_other_errors_never_count_as_a_failed_condition() -> None:
    assert not store.condition_failed(GetError(cause=client_error("ConditionalCheckFailedException")))
    assert not store.condition_failed(ValueError("ConditionalCheckFailedException"))


def test_conditional_turns_only_a_failed_condition_into_condition_failed() -> None:
    refused = PutError(cause=client_error("ConditionalCheckFailedException"))
    with pytest.raises(store.ConditionFailed) as caught, store.conditional():
        raise refused
    assert caught.value.cause is refused
    throttled = PutError(cause=client_error("ProvisionedThroughputExceededException"))
    with pytest.raises(PutError), store.conditional():
        raise throttled


def test_best_effort_swallows_any_refused_write_but_nothing_else() -> None:
    with store.best_effort("a stamp"):
        raise UpdateError(cause=client_error("ProvisionedThroughputExceededException"))
    with pytest.raises(ValueError), store.best_effort("a stamp"):
        raise ValueError("a bug is not a refused write")


def test_transaction_cancelled_is_retryable_only_for_conditions_or_contention() -> None:
    assert store.TransactionCancelled(frozenset({"team"}), False).retryable
    assert store.TransactionCancelled(frozenset(), True).retryable
    assert not store.TransactionCancelled(frozenset(), False).retryable


def test_transaction_cancelled_keeps_pynamodb_s_cause() -> None:
    cause = client_error("TransactionCanceledException", [CancellationReason("ConditionalCheckFailed")])
    error = store.TransactionCancelled(frozenset({"incident"}), False, cause)
    assert isinstance(error, TransactWriteError)
    assert error.cause_response_code == "TransactionCanceledException"
    assert [reason.code for reason in error.cancellation_reasons if reason] == ["ConditionalCheckFailed"]


def test_retrying_reruns_on_retryable_conflict_then_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry.time, "sleep", lambda seconds: None)
    attempts = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise store.RetryableConflict()
        return "done"

    assert store.retry_on_conflict(flaky, what="team") == "done"
    assert len(attempts) == 3

    def never() -> None:
        raise store.RetryableConflict()

    with pytest.raises(Conflict, match="team"):
        store.retry_on_conflict(never, what="team", attempts=4)


def test_retry_waits_between_attempts_only_and_keeps_the_callers_message(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []
    monkeypatch.setattr(retry.time, "sleep", waits.append)
    calls = []

    def never() -> None:
        calls.append(1)
        raise store.RetryableConflict()

    with pytest.raises(Conflict) as caught:
        store.retry_on_conflict(never, what="incident", attempts=3, base_delay=0.05, message="Busy; retry.")
    assert len(calls) == 3 and len(waits) == 2
    assert all(0 <= wait <= 0.05 * 2**attempt for attempt, wait in enumerate(waits))
    assert caught.value.message == "Busy; retry."


def test_other_errors_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry.time, "sleep", lambda seconds: None)
    calls = []

    def broken() -> None:
        calls.append(1)
        raise ValueError("not a conflict")

    with pytest.raises(ValueError):
        store.retry_on_conflict(broken, what="team")
    assert calls == [1]


def test_backoff_doubles_up_to_a_cap() -> None:
    def top(low: float, high: float) -> float:
        return high

    assert [retry.backoff_seconds(n, base=1.0, draw=top) for n in range(9)] == [1, 2, 4, 8, 16, 32, 64, 64, 64]
    assert retry.backoff_seconds(3, base=1.0, draw=lambda low, high: low) == 0.0


def test_assign_sets_or_removes() -> None:
    from chalicelib.store.counters import CounterRecord

    values: list[Any] = [store.assign(CounterRecord.current_value, 3), store.assign(CounterRecord.current_value, None)]
    assert [action.format_string for action in values] == ["{0} = {1}", "{0}"]
