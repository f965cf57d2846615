"""The emulator process keeps a client's connection open across requests (chalicelib/local/
moto_server.py `KeepAliveRequestHandler`): answers, errors included, carry their length, the next
request on the same connection is answered, and a chunked request body closes the connection."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import ROOT

SIGNED = "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"


@pytest.fixture(scope="module")
def emulator_port() -> Iterator[int]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "chalicelib.local.moto_server", "--port", str(port)], cwd=ROOT)
    deadline = time.monotonic() + 120  # a guard against an emulator that never listens, not a speed check
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    yield port
    process.terminate()
    process.wait(timeout=30)


def _call(
    connection: http.client.HTTPConnection, target: str, body: dict[str, object]
) -> tuple[int, dict[str, str], bytes]:
    payload = json.dumps(body).encode()
    headers = {
        "X-Amz-Target": f"DynamoDB_20120810.{target}",
        "Content-Type": "application/x-amz-json-1.0",
        "Authorization": SIGNED,
    }
    connection.request("POST", "/", body=payload, headers=headers)
    answer = connection.getresponse()
    return answer.status, {name.lower(): value for name, value in answer.getheaders()}, answer.read()


def test_one_connection_serves_answers_and_errors_in_turn(emulator_port: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", emulator_port, timeout=30)
    created = _call(
        connection,
        "CreateTable",
        {
            "TableName": "keepalive",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        },
    )
    assert created[0] == 200
    first_socket = connection.sock
    item = {"TableName": "keepalive", "Item": {"pk": {"S": "one"}}}
    assert _call(connection, "PutItem", item)[0] == 200
    refused = _call(connection, "PutItem", {**item, "ConditionExpression": "attribute_not_exists(pk)"})
    assert refused[0] == 400 and b"ConditionalCheckFailedException" in refused[2]
    assert refused[1]["content-length"] == str(len(refused[2])) and "connection" not in refused[1]
    status, _, body = _call(connection, "GetItem", {"TableName": "keepalive", "Key": {"pk": {"S": "one"}}})
    assert (status, json.loads(body)) == (200, {"Item": {"pk": {"S": "one"}}})
    assert connection.sock is first_socket  # never reconnected: every answer came on one connection
    connection.close()


def test_a_chunked_body_is_answered_and_the_connection_closed(emulator_port: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", emulator_port, timeout=30)
    payload = json.dumps({"TableName": "keepalive", "Key": {"pk": {"S": "none"}}}).encode()
    connection.request(
        "POST",
        "/",
        body=iter([payload]),
        headers={
            "X-Amz-Target": "DynamoDB_20120810.GetItem",
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": SIGNED,
        },
        encode_chunked=True,
    )
    answer = connection.getresponse()
    assert answer.status in (200, 400)
    assert answer.getheader("Connection") == "close"
    answer.read()
    connection.close()
