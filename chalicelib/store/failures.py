"""How a DynamoDB write fails: the one place that reads PynamoDB's error codes.

DynamoDB reports a false condition as `ConditionalCheckFailedException` on a single write and as
a `ConditionalCheckFailed` cancellation reason on an item of a transaction; PynamoDB wraps both
in its own error classes (PutError, UpdateError, DeleteError, TransactWriteError). Domains never
look at those codes or catch those classes: they use `condition_failed`, the helpers of
`chalicelib.store.conditions`, or `TransactionCancelled`.
"""

from __future__ import annotations

from pynamodb.exceptions import DeleteError, PutError, TransactWriteError, UpdateError

# Every error PynamoDB raises for a write that DynamoDB refused.
WRITE_ERRORS: tuple[type[Exception], ...] = (PutError, UpdateError, DeleteError, TransactWriteError)
# The error code of a single write, and the cancellation reason of one item of a transaction.
CONDITION_FAILED_CODE = "ConditionalCheckFailedException"
CONDITION_FAILED_REASON = "ConditionalCheckFailed"
# A transaction cancelled as a whole, and the reason of an item another transaction was writing.
CANCELLED_CODE = "TransactionCanceledException"
CONTENTION_REASON = "TransactionConflict"


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
