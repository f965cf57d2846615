"""Inject DynamoDB failures at the botocore client, as DynamoDB would send them.

`dynamodb_errors` registers a before-send hook, first in line (ahead of moto's), on the one client
every PynamoDB model and transaction shares (chalicelib/aws.py): the chosen calls are answered
with an error response, so botocore's own retry logic and PynamoDB's wrapping run as in production.
`record_backoff_waits` records botocore's backoff waits instead of sleeping them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from chalicelib import aws

THROTTLED = "ProvisionedThroughputExceededException"


class _RawBody:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body


@dataclass
class Injection:
    """What the hook saw: every DynamoDB call (retries included) and the ones it failed."""

    calls: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def error_response(code: str, *, status: int = 400, reasons: list[str | None] | None = None) -> AWSResponse:
    body: dict[str, Any] = {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": f"injected {code}"}
    if reasons is not None:
        body["CancellationReasons"] = [{"Code": reason or "None"} for reason in reasons]
    raw = json.dumps(body).encode()
    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "injected"}
    return AWSResponse("https://dynamodb.injected", status, headers, _RawBody(raw))


@contextmanager
def dynamodb_errors(
    code: str = THROTTLED,
    *,
    operations: frozenset[str] | None = None,
    fail: Callable[[int], bool] = lambda index: True,
    status: int = 400,
    reasons: list[str | None] | None = None,
) -> Iterator[Injection]:
    """Answer DynamoDB calls of `operations` (all when None) with `code` when `fail(index)` holds,
    `index` counting those calls from 0 (attempts and retries alike)."""
    client = aws._dynamodb_client()
    injection = Injection()
    matched = {"count": 0}

    def before_send(request: Any, event_name: str = "", **_: Any) -> AWSResponse | None:
        operation = event_name.rsplit(".", 1)[-1]
        injection.calls.append(operation)
        if operations is not None and operation not in operations:
            return None
        index = matched["count"]
        matched["count"] += 1
        if not fail(index):
            return None
        injection.failed.append(operation)
        # botocore emits before-send to every handler and takes the first response: point the
        # request away from AWS so moto's handler (registered after this one) leaves it alone.
        request.url = "https://faults.invalid/"
        return error_response(code, status=status, reasons=reasons)

    client.meta.events.register_first("before-send.dynamodb", before_send, unique_id="tests-faults")
    try:
        yield injection
    finally:
        client.meta.events.unregister("before-send.dynamodb", unique_id="tests-faults")


def record_backoff_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """botocore's retry waits, recorded and not slept (a persistent fault would cost seconds)."""
    waits: list[float] = []
    monkeypatch.setattr("botocore.endpoint.time.sleep", waits.append)
    return waits
