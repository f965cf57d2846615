"""The emulator writes DynamoDB item answers as plain JSON instead of walking botocore's model.

moto 5.2 turns every DynamoDB answer into JSON with its generic model-driven serializer: for each
member of each output shape it asks a chain of alias providers where the value lives, and an
item's every attribute is a structure of ten members (S, N, B, ..., BOOL). Profiled on the test
suite and on the local stack, that walk was the largest single cost of a request: about 29% of
the API and service tests' CPU and 13% of the emulator process's.

The item operations' results (`DynamoResult`, already in DynamoDB's wire form: attribute values
as `{"S": ...}` maps, counts as numbers) need no walk: JSON of the same dict, with binary values
base64-encoded and absent (None) members left out, is what the walk produces, and
tests/service/test_moto_responses.py holds the two equal on every kind of value and operation we
use. Results carrying anything else (a datetime: backups, table descriptions) take moto's path.

Two smaller per-request costs go the same way: the server's listing of moto's own package
(`cached_backend_names`) and the listing of a response class's methods (`cached_action_names`).

Applied by the emulator process (chalicelib/local/moto_server.py) and the test suite's in-process
moto (tests/emulator.py), like chalicelib/local/moto_partitions.py.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Collection
from typing import Any

# Operations whose results are items, keys, counts and capacity only (no timestamps).
ITEM_OPERATIONS = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "TransactGetItems",
        "ExecuteStatement",
        "ExecuteTransaction",
        "BatchExecuteStatement",
    }
)
_CONTENT_TYPE = "application/x-amz-json-1.0"


class _NotPlain(Exception):
    """A value the plain writer does not know: moto's serializer handles the result."""


def plain(value: Any) -> Any:
    """The result as the model walk would write it: None members dropped, bytes in base64."""
    if isinstance(value, dict):
        return {key: plain(member) for key, member in value.items() if member is not None}
    if isinstance(value, list):
        return [plain(member) for member in value]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if value is None or isinstance(value, str | bool | int | float):
        return value
    raise _NotPlain(type(value).__name__)


def plain_body(result: Any, members: Collection[str]) -> str | None:
    """JSON of an item operation's result, or None when it holds something only moto's walk knows.

    `members`: the output shape's member names; the walk writes only those (moto's DeleteItem
    result also carries a legacy `ConsumedCapacityUnits`, which DynamoDB no longer sends)."""
    if not isinstance(result, dict):
        return None
    try:
        return json.dumps(plain({key: value for key, value in result.items() if key in members}))
    except _NotPlain:
        return None


def plain_item_results() -> None:
    """Idempotent."""
    from moto.dynamodb.responses import DynamoResult

    if getattr(DynamoResult.execute_result, "tocsin_plain", False):
        return
    original = DynamoResult.execute_result

    def execute_result(self: Any, context: Any) -> Any:
        if context.operation_model.name in ITEM_OPERATIONS:
            body = plain_body(self.result, context.operation_model.output_shape.members)
            if body is not None:
                return 200, {"Content-Type": _CONTENT_TYPE}, body
        return original(self, context)

    execute_result.tocsin_plain = True  # type: ignore[attr-defined]
    DynamoResult.execute_result = execute_result  # type: ignore[method-assign]


def cached_backend_names() -> None:
    """moto's server lists its own package directory (a listdir and ~150 isdir calls) on every
    request to find the backend a host names; the list never changes while it runs."""
    import moto.backends

    if getattr(moto.backends.list_of_moto_modules, "tocsin_cached", False):
        return
    names = tuple(moto.backends.list_of_moto_modules())

    def list_of_moto_modules() -> tuple[str, ...]:
        return names

    list_of_moto_modules.tocsin_cached = True  # type: ignore[attr-defined]
    moto.backends.list_of_moto_modules = list_of_moto_modules


def cached_action_names() -> None:
    """moto lists its response class's methods with inspect.getmembers on every request to check
    that the action exists (~2% of the suite's CPU); a class's methods do not change after import."""
    import functools

    import moto.core.responses as responses_module

    listed = vars(responses_module)["method_names_from_class"]
    if hasattr(listed, "cache_info"):
        return
    responses_module.method_names_from_class = functools.cache(listed)  # type: ignore[attr-defined]
