"""The emulator's Query on a table's key reads that partition only (chalicelib/local/moto_partitions.py,
applied to the test suite's moto as to the local emulator's): the same answers, pages included,
without walking the table; index Queries as before."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import aws

TABLE = "tocsin-test-partitions"


@pytest.fixture
def table(aws_env: None) -> Iterator[Any]:
    client = aws.client("dynamodb")
    client.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "kind", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-kind",
                "KeySchema": [
                    {"AttributeName": "kind", "KeyType": "HASH"},
                    {"AttributeName": "sk", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    for n in range(30):
        item = {"pk": {"S": f"p{n % 3}"}, "sk": {"S": f"{n:03d}"}, "n": {"N": str(n)}, "kind": {"S": f"k{n % 2}"}}
        client.put_item(TableName=TABLE, Item=item)
    yield client
    client.delete_table(TableName=TABLE)  # a structural change: the emulator provisions afresh after


def sort_keys(answer: dict[str, Any]) -> list[str]:
    return [item["sk"]["S"] for item in answer["Items"]]


def no_table_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.dynamodb.models.table import Table

    def walked(self: Any) -> list[Any]:
        raise AssertionError("a Query on the table's key walked the whole table")

    monkeypatch.setattr(Table, "all_items", walked)


def test_a_key_query_pages_sorts_filters_and_projects_one_partition(
    table: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    no_table_walk(monkeypatch)
    arguments = {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": "p1"}},
        "ScanIndexForward": False,
        "Limit": 4,
    }
    first = table.query(**arguments)
    assert sort_keys(first) == ["028", "025", "022", "019"]
    second = table.query(**arguments, ExclusiveStartKey=first["LastEvaluatedKey"])
    assert sort_keys(second) == ["016", "013", "010", "007"]
    rest = table.query(**arguments, ExclusiveStartKey=second["LastEvaluatedKey"])
    assert sort_keys(rest) == ["004", "001"] and "LastEvaluatedKey" not in rest

    ranged = table.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
        FilterExpression="n > :n",
        ProjectionExpression="sk",
        ExpressionAttributeValues={":pk": {"S": "p0"}, ":low": {"S": "003"}, ":high": {"S": "021"}, ":n": {"N": "9"}},
    )
    assert ranged["Items"] == [{"sk": {"S": "012"}}, {"sk": {"S": "015"}}, {"sk": {"S": "018"}}, {"sk": {"S": "021"}}]
    assert ranged["ScannedCount"] == 7 and ranged["Count"] == 4

    empty = table.query(**{**arguments, "ExpressionAttributeValues": {":pk": {"S": "nobody"}}})
    assert empty["Items"] == [] and empty["Count"] == 0
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends["123456789012"]["us-east-1"]
    assert len(backend.tables[TABLE].items) == 3  # asking for a partition made none


def test_an_index_query_is_answered_as_before(table: Any) -> None:
    answer = table.query(
        TableName=TABLE,
        IndexName="by-kind",
        KeyConditionExpression="kind = :kind",
        ExpressionAttributeValues={":kind": {"S": "k1"}},
        Limit=3,
    )
    assert sort_keys(answer) == ["001", "003", "005"]


def test_a_key_query_on_a_table_without_a_sort_key(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    client = aws.client("dynamodb")
    client.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        for n in range(3):
            client.put_item(TableName=TABLE, Item={"pk": {"S": f"p{n}"}})
        no_table_walk(monkeypatch)
        arguments = {"TableName": TABLE, "KeyConditionExpression": "pk = :pk"}
        one = client.query(**arguments, ExpressionAttributeValues={":pk": {"S": "p1"}})
        assert one["Items"] == [{"pk": {"S": "p1"}}]
        assert client.query(**arguments, ExpressionAttributeValues={":pk": {"S": "p9"}})["Items"] == []
    finally:
        client.delete_table(TableName=TABLE)
