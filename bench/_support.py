"""Helpers the benchmarks share: an in-process moto account, and DynamoDB calls counted at the client.

Import this module before anything from `chalicelib` or `app`: `configure_environment()` must run
before settings are first read and before any client exists, exactly as tests/conftest.py does.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TABLE_PREFIX = "tocsin-bench-"

# Short table names (without TABLE_PREFIX) that belong to the request pipeline, not to the operation.
AUTH_TABLES = frozenset({"api-keys"})
RATE_LIMIT_TABLES = frozenset({"rate-limits"})


def configure_environment(**extra: str) -> None:
    """The environment tests/conftest.py sets: dummy credentials, a test stage, never a real AWS account."""
    os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
    os.environ["AWS_ACCESS_KEY_ID"] = "testing"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "testing"
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    os.environ.pop("AWS_ENDPOINT_URL", None)
    os.environ.pop("AWS_PROFILE", None)
    os.environ["TOCSIN_STAGE"] = "test"
    os.environ["TABLE_PREFIX"] = TABLE_PREFIX
    os.environ["QUEUE_PREFIX"] = TABLE_PREFIX
    os.environ["API_KEY_HMAC_SECRET"] = "bench-hmac-secret"
    os.environ["JWT_SECRET"] = "bench-jwt-secret"
    os.environ.update(extra)


def short_table(name: str) -> str:
    return name.removeprefix(TABLE_PREFIX)


def _tables_of(operation: str, params: dict[str, Any]) -> tuple[str, ...]:
    """Every table a request touches, from its parameters (single-table, batch and transaction shapes)."""
    found: list[str] = []
    if "TableName" in params:
        found.append(str(params["TableName"]))
    for name in params.get("RequestItems") or {}:  # BatchGetItem, BatchWriteItem
        found.append(str(name))
    for item in params.get("TransactItems") or []:  # TransactWriteItems, TransactGetItems
        for action in item.values():
            if isinstance(action, dict) and "TableName" in action:
                found.append(str(action["TableName"]))
    return tuple(short_table(name) for name in found)


def _value_size(value: dict[str, Any]) -> int:
    (kind, inner), *_ = value.items()
    if kind == "S":
        return len(str(inner).encode())
    if kind == "B":
        return len(inner)
    if kind == "N":
        digits = len(str(inner).lstrip("-").replace(".", "").strip("0")) or 1
        return (digits + 1) // 2 + 1
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("SS", "NS", "BS"):
        return sum(_value_size({kind[0]: element}) for element in inner)
    if kind == "L":
        return 3 + sum(1 + _value_size(element) for element in inner)
    if kind == "M":
        return 3 + sum(1 + len(name.encode()) + _value_size(element) for name, element in inner.items())
    return 0


def item_size(item: dict[str, Any]) -> int:
    """An item's size as DynamoDB bills it: attribute names plus values (the documented approximation)."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def read_units(bytes_read: int, *, consistent: bool = False) -> float:
    """Read capacity of one Query/GetItem response: 4 KB units, halved for eventually consistent reads."""
    units = max(1, -(-bytes_read // 4096))
    return units if consistent else units / 2


@dataclass
class DynamoCall:
    """One DynamoDB API call as the client made it."""

    operation: str  # GetItem, Query, UpdateItem, TransactWriteItems, ...
    tables: tuple[str, ...]  # short names, one per item for batches and transactions
    scanned_count: int | None = None  # Query/Scan: items DynamoDB read before filtering
    count: int | None = None  # Query/Scan: items returned
    capacity_units: float | None = None  # when ReturnConsumedCapacity was asked for
    bytes_read: int = 0  # Query/Scan/GetItem: DynamoDB's size of the items returned (see item_size)
    retry_attempts: int = 0

    @property
    def part(self) -> str:
        """auth, rate limit, or the operation itself, by the tables the call touches."""
        tables = set(self.tables)
        if tables and tables <= AUTH_TABLES:
            return "auth"
        if tables and tables <= RATE_LIMIT_TABLES:
            return "rate_limit"
        return "own"

    def describe(self) -> str:
        counts = Counter(self.tables)
        where = ",".join(f"{t}x{n}" if n > 1 else t for t, n in counts.items()) or "?"
        return f"{self.operation}({where})"


@dataclass
class Measurement:
    calls: list[DynamoCall] = field(default_factory=list)
    wire_requests: int = 0  # DynamoDB requests moto answered, retries included (cross-check)

    def of(self, part: str) -> list[DynamoCall]:
        return [call for call in self.calls if call.part == part]

    @property
    def total(self) -> int:
        return len(self.calls)


class DynamoCounter:
    """Records every DynamoDB call made through the clients it is installed on (botocore events)."""

    def __init__(self) -> None:
        self._calls: list[DynamoCall] = []
        self._installed: set[int] = set()
        self._lock = threading.Lock()
        self.consumed_capacity = False  # ask DynamoDB for ReturnConsumedCapacity=TOTAL on reads
        self.wire_requests = 0

    # -- installation

    def install(self, client: Any) -> None:
        if id(client) in self._installed:
            return
        events = client.meta.events
        events.register("before-parameter-build.dynamodb", self._before_build)
        events.register("before-call.dynamodb", self._before_call)
        events.register("after-call.dynamodb", self._after_call)
        self._installed.add(id(client))

    def install_on_app_clients(self) -> None:
        """The shared PynamoDB client and the plain boto3 one; call again after aws.reset()."""
        from chalicelib import aws

        self.install(aws._dynamodb_client())
        self.install(aws.client("dynamodb"))
        aws.bind_tables()  # models bound now use the (counted) shared client

    def count_wire_requests(self) -> None:
        """Also count DynamoDB requests where moto receives them: a client we did not hook would show here."""
        from moto.core.botocore_stubber import BotocoreStubber

        if getattr(BotocoreStubber, "_bench_counted", False):
            BotocoreStubber._bench_counter = self  # type: ignore[attr-defined]
            return
        original = BotocoreStubber.__call__

        def call(stubber: Any, event_name: str, request: Any, **kwargs: Any) -> Any:
            target = str(request.headers.get("X-Amz-Target", b"") or "")
            if stubber.enabled and "DynamoDB_" in target:
                counter = BotocoreStubber._bench_counter  # type: ignore[attr-defined]
                with counter._lock:
                    counter.wire_requests += 1
            return original(stubber, event_name, request, **kwargs)

        BotocoreStubber.__call__ = call  # type: ignore[method-assign,assignment]
        BotocoreStubber._bench_counted = True  # type: ignore[attr-defined]
        BotocoreStubber._bench_counter = self  # type: ignore[attr-defined]

    # -- event handlers

    def _before_build(self, params: dict[str, Any], model: Any, context: dict[str, Any], **_: Any) -> None:
        # before-call sees the serialized request; the API parameters (and so the tables) are seen here.
        context["bench_tables"] = _tables_of(model.name, params)
        if self.consumed_capacity and model.name in ("Query", "Scan", "GetItem", "BatchGetItem"):
            params.setdefault("ReturnConsumedCapacity", "TOTAL")

    def _before_call(self, model: Any, context: dict[str, Any], **_: Any) -> None:
        call = DynamoCall(model.name, tuple(context.get("bench_tables", ())))
        context["bench_call"] = call
        with self._lock:
            self._calls.append(call)

    def _after_call(self, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        call = context.get("bench_call")
        if not isinstance(call, DynamoCall):
            return
        if "ScannedCount" in parsed:
            call.scanned_count = int(parsed["ScannedCount"])
            call.count = int(parsed.get("Count", 0))
        items = parsed.get("Items")
        if isinstance(items, list):
            call.bytes_read = sum(item_size(item) for item in items)
        elif isinstance(parsed.get("Item"), dict):
            call.bytes_read = item_size(parsed["Item"])
        consumed = parsed.get("ConsumedCapacity")
        if isinstance(consumed, list):
            call.capacity_units = sum(float(c.get("CapacityUnits", 0)) for c in consumed)
        elif isinstance(consumed, dict):
            call.capacity_units = float(consumed.get("CapacityUnits", 0))
        call.retry_attempts = int((parsed.get("ResponseMetadata") or {}).get("RetryAttempts", 0))

    # -- measuring

    @contextmanager
    def measure(self) -> Iterator[Measurement]:
        """Collect the calls made inside the block."""
        with self._lock:
            self._calls = []
            wire_before = self.wire_requests
        measurement = Measurement()
        try:
            yield measurement
        finally:
            with self._lock:
                measurement.calls = list(self._calls)
                measurement.wire_requests = self.wire_requests - wire_before
                self._calls = []


@contextmanager
def moto_account() -> Iterator[None]:
    """mock_aws with every table and queue provisioned, as the `aws_env` test fixture does."""
    from moto import mock_aws

    from chalicelib import aws
    from chalicelib.apikey import service as apikeys
    from chalicelib.incident import workflow_settings as incident_settings
    from chalicelib.local.provision import provision
    from chalicelib.settings import reset_settings

    reset_settings()
    aws.reset()
    apikeys.clear_cache()
    incident_settings.forget()
    with mock_aws():
        provision()
        yield


def table(headers: list[str], rows: list[list[str]], right: frozenset[int] = frozenset()) -> str:
    """A plain-text table; columns in `right` are right-aligned."""
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        parts = [
            str(cell).rjust(width) if index in right else str(cell).ljust(width)
            for index, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * width for width in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])
