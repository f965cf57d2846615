"""How a DynamoDB call fails: the one place that reads PynamoDB's and DynamoDB's error codes.

DynamoDB reports a false condition as `ConditionalCheckFailedException` on a single write and as
a `ConditionalCheckFailed` cancellation reason on an item of a transaction; PynamoDB wraps both
in its own error classes (PutError, UpdateError, DeleteError, TransactWriteError). Domains never
look at those codes or catch those classes: they use `condition_failed`, the helpers of
`chalicelib.store.conditions`, or `TransactionCancelled`.

`throttled` tells the API that DynamoDB was throttling or failing transiently: botocore has
retried the call already (chalicelib/aws.py sets the retry mode and attempts), so the request is
answered 503 with Retry-After instead of 500.
"""

from __future__ import annotations

from typing import Final

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError
from pynamodb.exceptions import DeleteError, PutError, PynamoDBException, TransactWriteError, UpdateError

# Every error PynamoDB raises for a write that DynamoDB refused.
WRITE_ERRORS: tuple[type[Exception], ...] = (PutError, UpdateError, DeleteError, TransactWriteError)
# The error code of a single write, and the cancellation reason of one item of a transaction.
CONDITION_FAILED_CODE = "ConditionalCheckFailedException"
CONDITION_FAILED_REASON = "ConditionalCheckFailed"
# A transaction cancelled as a whole, and the reason of an item another transaction was writing.
CANCELLED_CODE = "TransactionCanceledException"
CONTENTION_REASON = "TransactionConflict"
# Error codes of a call DynamoDB refused for load, or failed on its side (retrying may succeed).
THROTTLING_CODES: Final = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "LimitExceededException",
        "TransactionInProgressException",
        "InternalServerError",
        "ServiceUnavailable",
    }
)
# Cancellation reasons of a transaction's items that are load or contention, not a false condition.
THROTTLING_REASONS: Final = frozenset({"ProvisionedThroughputExceeded", "ThrottlingError", CONTENTION_REASON})


class ConditionFailed(Exception):
    """A conditional write found its condition false and wrote nothing."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


class TransactionCancelled(TransactWriteError):
    """The transaction wrote nothing. `failed` holds the labels whose condition was false;
    `contention` says another transaction was writing one of the items at the same time.

    A TransactWriteError still (with PynamoDB's cause and cancellation reasons), so code that
    expects PynamoDB's error keeps working.
    """

    def __init__(self, failed: frozenset[str], contention: bool, cause: Exception | None = None) -> None:
        super().__init__(f"transaction cancelled (failed: {sorted(failed)}, contention: {contention})", cause)
        self.failed = failed
        self.contention = contention

    @property
    def retryable(self) -> bool:
        """A condition failed or another transaction was in the way: re-read and try again."""
        return bool(self.failed) or self.contention


def condition_failed(error: BaseException) -> bool:
    """True when `error` is a PynamoDB write error caused by a false condition.

    PutError, UpdateError and DeleteError: by their error code. TransactWriteError: when any item
    was cancelled by its condition. Anything else, throttling and contention included, is False.
    """
    if isinstance(error, TransactionCancelled):
        return bool(error.failed)
    if isinstance(error, TransactWriteError):
        return any(
            reason is not None and reason.code == CONDITION_FAILED_REASON for reason in error.cancellation_reasons
        )
    if isinstance(error, PutError | UpdateError | DeleteError):
        return error.cause_response_code == CONDITION_FAILED_CODE
    return False


def throttled(error: BaseException) -> bool:
    """True when `error` (or what it wraps) is DynamoDB throttling or a transient failure: a
    throttling or server error code, a transaction cancelled only for load or contention, or a
    connection that failed. A false condition or a bad request is False."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if _throttled_here(current):
            return True
        wrapped = current.cause if isinstance(current, PynamoDBException) else None
        current = wrapped or current.__cause__
    return False


def _throttled_here(error: BaseException) -> bool:
    if isinstance(error, TransactionCancelled) and error.contention and not error.failed:
        return True
    if isinstance(error, TransactWriteError) and error.cause_response_code == CANCELLED_CODE:
        codes = {reason.code for reason in error.cancellation_reasons if reason is not None}
        return bool(codes & THROTTLING_REASONS) and CONDITION_FAILED_REASON not in codes
    if isinstance(error, PynamoDBException):
        return error.cause_response_code in THROTTLING_CODES
    if isinstance(error, ClientError):
        return error.response.get("Error", {}).get("Code") in THROTTLING_CODES
    return isinstance(error, BotocoreConnectionError | HTTPClientError)
