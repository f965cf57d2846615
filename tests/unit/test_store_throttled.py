"""`store.throttled`: which DynamoDB failures are load or transient (503, retry) and which are not;
and every AWS client retries them in botocore's standard mode."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError
from pynamodb.exceptions import DeleteError, GetError, PutError, QueryError, TransactWriteError, UpdateError

from chalicelib import aws
from chalicelib.errors import InternalError
from chalicelib.store import TransactionCancelled, condition_failed, throttled


def client_error(code: str, operation: str = "PutItem", reasons: list[str] | None = None) -> ClientError:
    response: dict[str, Any] = {"Error": {"Code": code, "Message": code}}
    if reasons is not None:
        response["CancellationReasons"] = [{"Code": reason} for reason in reasons]
    return ClientError(response, operation)  # type: ignore[arg-type]


def cancelled(*reasons: str | None) -> TransactWriteError:
    from pynamodb.exceptions import CancellationReason, VerboseClientError

    cause = VerboseClientError(
        {"Error": {"Code": "TransactionCanceledException", "Message": "cancelled"}},  # type: ignore[arg-type]
        "TransactWriteItems",
        cancellation_reasons=[CancellationReason(code=r) if r else None for r in reasons],
    )
    return TransactWriteError("Failed to write transaction items", cause)


@pytest.mark.parametrize(
    "code",
    [
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "TransactionInProgressException",
    ],
)
@pytest.mark.parametrize("wrapper", [PutError, UpdateError, DeleteError, GetError, QueryError])
def test_throttling_and_server_errors_are_throttled(code: str, wrapper: type[Exception]) -> None:
    error = wrapper("failed", client_error(code))  # type: ignore[call-arg]
    assert throttled(error)
    assert not condition_failed(error)


@pytest.mark.parametrize(
    "code", ["ConditionalCheckFailedException", "ValidationException", "ResourceNotFoundException"]
)
def test_refusals_are_not_throttled(code: str) -> None:
    assert not throttled(PutError("failed", client_error(code)))
    assert not throttled(client_error(code))


def test_transactions_cancelled_for_load_or_contention_are_throttled() -> None:
    assert throttled(cancelled(None, "ThrottlingError"))
    assert throttled(cancelled("ProvisionedThroughputExceeded", None))
    assert throttled(cancelled("TransactionConflict"))
    assert throttled(TransactionCancelled(frozenset(), contention=True))
    # A false condition is the caller's business (409 and the like), even beside load.
    assert not throttled(cancelled("ConditionalCheckFailed", "ThrottlingError"))
    assert not throttled(TransactionCancelled(frozenset({"incident"}), contention=True))
    assert not throttled(cancelled("ValidationError"))


def test_connection_failures_are_throttled_and_the_cause_chain_is_followed() -> None:
    assert throttled(EndpointConnectionError(endpoint_url="https://dynamodb"))
    assert throttled(ReadTimeoutError(endpoint_url="https://dynamodb"))
    assert throttled(PutError("failed", EndpointConnectionError(endpoint_url="https://dynamodb")))
    wrapped = InternalError()
    wrapped.__cause__ = PutError("failed", client_error("ThrottlingException"))
    assert throttled(wrapped)
    assert not throttled(ValueError("no"))


@pytest.mark.parametrize("service", ["sqs", "ses", "sns", "dynamodb"])
def test_every_client_retries_in_standard_mode(service: str) -> None:
    aws.reset()
    try:
        retries = aws.client(service).meta.config.retries
        assert retries == {"mode": "standard", "total_max_attempts": aws.RETRIES["total_max_attempts"]}
        assert aws._dynamodb_client().meta.config.retries == retries
    finally:
        aws.reset()
