"""The emulator's cached update-expression parse (chalicelib/local/moto_expressions.py) gives the
same tree as a fresh parse, and updates sharing one expression text do not share state."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.dynamodb.parsing import validators
from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser, Node
from moto.dynamodb.parsing.expressions import UpdateExpressionParser
from moto.dynamodb.parsing.tokens import ExpressionTokenizer

from chalicelib.local.moto_expressions import cheaper_update_expressions

EXPRESSIONS = (
    "ADD #count :one SET #reset_at = if_not_exists(#reset_at, :reset_at)",
    "SET title = :title, #v = #v + :one REMOVE snoozed_until",
    "SET history = list_append(if_not_exists(history, :empty), :entry) DELETE tags :gone",
    "SET a.b[0].c = :value",
)


def _shape(node: Any) -> Any:
    """A tree as nested tuples of node class and children (leaves as their values)."""
    if isinstance(node, Node):
        return (type(node).__name__, tuple(_shape(child) for child in node.children or ()))
    return repr(node)


@pytest.fixture
def table() -> Iterator[Any]:
    cheaper_update_expressions()
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName="counters",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield client


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_the_cached_tree_is_a_fresh_parse(expression: str) -> None:
    cheaper_update_expressions()
    fresh = UpdateExpressionParser(ExpressionTokenizer.make_list(expression)).parse()
    assert _shape(UpdateExpressionParser.make(expression)) == _shape(fresh)
    assert UpdateExpressionParser.make(expression) is UpdateExpressionParser.make(expression)


def _charge(client: Any, key: str, amount: int) -> dict[str, Any]:
    answer = client.update_item(
        TableName="counters",
        Key={"pk": {"S": key}},
        UpdateExpression="ADD #count :amount SET #seen = if_not_exists(#seen, :now)",
        ExpressionAttributeNames={"#count": "count", "#seen": "first_seen"},
        ExpressionAttributeValues={":amount": {"N": str(amount)}, ":now": {"S": key}},
        ReturnValues="ALL_NEW",
    )
    return dict(answer["Attributes"])


def test_updates_sharing_an_expression_each_use_their_own_values(table: Any) -> None:
    assert _charge(table, "a", 1) == {"pk": {"S": "a"}, "count": {"N": "1"}, "first_seen": {"S": "a"}}
    assert _charge(table, "b", 5) == {"pk": {"S": "b"}, "count": {"N": "5"}, "first_seen": {"S": "b"}}
    assert _charge(table, "a", 2) == {"pk": {"S": "a"}, "count": {"N": "3"}, "first_seen": {"S": "a"}}


def test_a_refused_update_leaves_the_expression_usable(table: Any) -> None:
    table.put_item(TableName="counters", Item={"pk": {"S": "text"}, "count": {"S": "not a number"}})
    with pytest.raises(table.exceptions.ClientError, match="ValidationException"):
        _charge(table, "text", 1)
    assert _charge(table, "fresh", 4)["count"] == {"N": "4"}


def test_each_validator_processes_the_node_classes_its_table_names() -> None:
    cheaper_update_expressions()
    classes = [
        cls
        for cls in vars(validators).values()
        if isinstance(cls, type) and issubclass(cls, DepthFirstTraverser) and cls is not DepthFirstTraverser
    ]
    assert len(classes) >= 9
    for cls in classes:
        traverser = cls.__new__(cls)  # the node classes do not depend on what __init__ stores
        assert traverser.nodes_to_be_processed() == tuple(cls._processing_map(traverser)), cls.__name__


def test_applying_twice_changes_nothing() -> None:
    cheaper_update_expressions()
    installed = (UpdateExpressionParser.make, DepthFirstTraverser.nodes_to_be_processed)
    cheaper_update_expressions()
    assert (UpdateExpressionParser.make, DepthFirstTraverser.nodes_to_be_processed) == installed
