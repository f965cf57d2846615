"""The emulator's plain JSON item answers (chalicelib/local/moto_responses.py) equal moto's own
model walk, for every kind of attribute value and every item operation the code uses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.responses import ActionResult
from moto.dynamodb.responses import DynamoResult

from chalicelib.local import moto_responses

TABLE = "plain-answers"
EVERY_KIND = {
    "pk": {"S": "org#1"},
    "sk": {"S": "incident#7"},
    "title": {"S": "Checkout p99 over 2s — ünïcode"},
    "count": {"N": "42"},
    "ratio": {"N": "-0.125"},
    "payload": {"B": b"\x00\xffsecret"},
    "tags": {"SS": ["a", "b"]},
    "numbers": {"NS": ["1", "2.5"]},
    "blobs": {"BS": [b"\x01", b"\x02\x03"]},
    "labels": {"M": {"team": {"S": "payments"}, "nested": {"L": [{"N": "1"}, {"NULL": True}, {"BOOL": False}]}}},
    "history": {"L": [{"S": "opened"}, {"M": {"at": {"N": "1"}}}]},
    "missing": {"NULL": True},
    "urgent": {"BOOL": True},
    "empty_map": {"M": {}},
    "empty_list": {"L": []},
}


@pytest.fixture
def compared() -> Iterator[list[tuple[str, Any, Any]]]:
    """Every item answer during the test, as (operation, moto's walk, the plain writer's)."""
    seen: list[tuple[str, Any, Any]] = []
    installed = DynamoResult.execute_result

    def both(self: DynamoResult, context: Any) -> Any:
        walked = ActionResult.execute_result(self, context)
        name = context.operation_model.name
        if name in moto_responses.ITEM_OPERATIONS:
            body = moto_responses.plain_body(self.result, context.operation_model.output_shape.members)
            seen.append((name, (walked[0], walked[1].get("Content-Type"), json.loads(walked[2])), body))
        return walked

    DynamoResult.execute_result = both  # type: ignore[method-assign]
    try:
        with mock_aws():
            yield seen
    finally:
        DynamoResult.execute_result = installed  # type: ignore[method-assign]


def _table() -> Any:
    client = boto3.client("dynamodb", region_name="us-east-1")
    client.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    return client


def test_every_value_kind_and_operation_is_written_as_the_walk_writes_it(compared: list[Any]) -> None:
    client = _table()
    key = {"pk": EVERY_KIND["pk"], "sk": EVERY_KIND["sk"]}
    client.put_item(TableName=TABLE, Item=EVERY_KIND)
    client.put_item(TableName=TABLE, Item=EVERY_KIND, ReturnValues="ALL_OLD", ReturnConsumedCapacity="TOTAL")
    client.get_item(TableName=TABLE, Key=key)
    client.get_item(TableName=TABLE, Key={"pk": {"S": "none"}, "sk": {"S": "none"}})
    client.get_item(
        TableName=TABLE, Key=key, ProjectionExpression="payload, labels.nested", ReturnConsumedCapacity="TOTAL"
    )
    client.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": EVERY_KIND["pk"]},
        Limit=1,
        ReturnConsumedCapacity="INDEXES",
    )
    client.query(TableName=TABLE, KeyConditionExpression="pk = :pk", ExpressionAttributeValues={":pk": {"S": "x"}})
    client.scan(TableName=TABLE, Select="COUNT")
    client.scan(TableName=TABLE)
    for returns in ("ALL_NEW", "ALL_OLD", "UPDATED_NEW", "UPDATED_OLD", "NONE"):
        client.update_item(
            TableName=TABLE,
            Key=key,
            UpdateExpression="SET #c = #c + :one, payload = :blob REMOVE #gone",
            ExpressionAttributeNames={"#c": "count", "#gone": "missing"},
            ExpressionAttributeValues={":one": {"N": "1"}, ":blob": {"B": b"\x10"}},
            ReturnValues=returns,
        )
    client.batch_get_item(RequestItems={TABLE: {"Keys": [key, {"pk": {"S": "none"}, "sk": {"S": "none"}}]}})
    client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key}}])
    client.execute_statement(Statement=f'SELECT * FROM "{TABLE}" WHERE pk = ?', Parameters=[EVERY_KIND["pk"]])
    client.delete_item(TableName=TABLE, Key=key, ReturnValues="ALL_OLD")
    client.delete_item(TableName=TABLE, Key=key)

    operations = {name for name, _, _ in compared}
    assert operations >= {
        "PutItem",
        "GetItem",
        "Query",
        "Scan",
        "UpdateItem",
        "BatchGetItem",
        "TransactGetItems",
        "ExecuteStatement",
        "DeleteItem",
    }
    for name, (status, content_type, walked), body in compared:
        assert body is not None, name
        assert (status, content_type, json.loads(body)) == (200, "application/x-amz-json-1.0", walked), name


def test_a_result_with_something_else_than_wire_values_takes_motos_path() -> None:
    from datetime import UTC, datetime

    assert moto_responses.plain_body({"Item": {"at": datetime(2026, 1, 1, tzinfo=UTC)}}, {"Item"}) is None
    assert moto_responses.plain_body(["not", "a", "result"], {"Item"}) is None


def test_only_the_output_shapes_members_are_written() -> None:
    body = moto_responses.plain_body(
        {"ConsumedCapacityUnits": 0.5, "Attributes": None, "Count": 1}, {"Attributes", "Count"}
    )
    assert body is not None and json.loads(body) == {"Count": 1}


def test_the_emulator_writes_item_answers_plainly_and_clients_read_them(emulator: object) -> None:
    import moto.core.responses

    assert getattr(DynamoResult.execute_result, "tocsin_plain", False)
    assert hasattr(vars(moto.core.responses)["method_names_from_class"], "cache_info")
    with mock_aws():
        _read_back()


def _read_back() -> None:
    client = _table()
    client.put_item(TableName=TABLE, Item=EVERY_KIND)
    item = client.get_item(TableName=TABLE, Key={"pk": EVERY_KIND["pk"], "sk": EVERY_KIND["sk"]})["Item"]
    assert item == {**EVERY_KIND, "tags": {"SS": ["a", "b"]}}
    assert item["payload"] == {"B": b"\x00\xffsecret"} and item["blobs"] == {"BS": [b"\x01", b"\x02\x03"]}
