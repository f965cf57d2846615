"""Round trips of one inbound webhook on a warm instance, on the template's stack (moto, in-process).

    .venv/bin/python -m tests.infra.webhook_round_trips

docs/DEPLOY.md prices these; tests/infra/test_costs.py keeps the two in step. Each line is one
request to DynamoDB or SQS made by the application (the API function for the delivery, the SQS
function for the message it queued), e.g. `GetItem integrations (consistent)` or
`TransactWriteItems [Put alert-dedup, Put incidents, Put incidents]`.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

PREFIX = "tocsin-test-"


def _describe(operation: str, params: dict[str, Any]) -> str:
    def short(table: str) -> str:
        return table.removeprefix(PREFIX)

    if operation == "TransactWriteItems":
        parts = [
            f"{kind} {short(body['TableName'])}" for item in params["TransactItems"] for kind, body in item.items()
        ]
        return f"TransactWriteItems [{', '.join(parts)}]"
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return f"{operation} {', '.join(short(t) for t in params['RequestItems'])}"
    if "TableName" in params:
        consistent = " (consistent)" if params.get("ConsistentRead") else ""
        index = f" index {params['IndexName']}" if params.get("IndexName") else ""
        return f"{operation} {short(params['TableName'])}{index}{consistent}"
    return f"{operation} {str(params.get('QueueUrl', '')).rsplit('/', 1)[-1].removeprefix(PREFIX)}"


@contextmanager
def _recording() -> Iterator[list[str]]:
    from botocore.client import BaseClient

    from tests.infra.recorder import _caller

    seen: list[str] = []
    original = BaseClient._make_api_call

    def recording(self: Any, operation: str, params: dict[str, Any]) -> Any:
        if self.meta.service_model.service_name in ("dynamodb", "sqs") and _caller() is not None:
            seen.append(_describe(operation, params))
        return original(self, operation, params)

    BaseClient._make_api_call = recording  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        BaseClient._make_api_call = original  # type: ignore[method-assign]


def measure() -> dict[str, list[str]]:
    """{"new incident": [...], "new incident, queued work": [...], "dedup hit": [...], ...}"""
    from chalice.test import Client
    from moto import mock_aws

    from app import app
    from chalicelib import aws, cli
    from chalicelib.settings import reset_settings
    from tests.infra.stack import deploy_stack
    from tests.infra.test_stack import _alertmanager_firing, _api, _drain

    assert os.environ.get("TABLE_PREFIX") == os.environ.get("QUEUE_PREFIX") == PREFIX
    reset_settings()
    aws.reset()
    results: dict[str, list[str]] = {}
    with mock_aws():
        outputs = deploy_stack(stage="dev", table_prefix=PREFIX, queue_prefix=PREFIX)
        out = io.StringIO()
        assert (
            cli.main(["create-org", "--name", "Acme", "--owner-email", "ops@acme.example"], out=out, err=io.StringIO())
            == 0
        )
        key = json.loads(out.getvalue())["key"]
        with Client(app, stage_name="test") as client:
            service = _api(client, "post", "/api/v1/services", key, {"name": "Checkout"}).json["data"]["service_key"]
            hook = _api(
                client,
                "post",
                "/api/v1/integrations",
                key,
                {"type": "alertmanager", "name": "prom", "default_service": service},
            )
            path = f"/webhooks/{hook.json['data']['routing_key']}"
            headers = {"Content-Type": "application/json", "X-Forwarded-Proto": "https"}

            def deliver(group: str) -> int:
                body = json.dumps(_alertmanager_firing() | {"groupKey": group})
                return int(client.http.post(path, headers=headers, body=body).status_code)

            assert deliver("warm-up") == 201  # a warm instance: settings, queue URL, key caches filled
            _drain(outputs["EventsQueueUrl"])
            for label, expected in (("new incident", 201), ("dedup hit", 200)):
                with _recording() as calls:
                    assert deliver("group-1") == expected
                results[label] = calls
                with _recording() as calls:
                    _drain(outputs["EventsQueueUrl"])
                results[f"{label}, queued work"] = calls
    reset_settings()
    aws.reset()
    return results


if __name__ == "__main__":
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_EC2_METADATA_DISABLED="true",
        TOCSIN_STAGE="test",
        TABLE_PREFIX=PREFIX,
        QUEUE_PREFIX=PREFIX,
        API_KEY_HMAC_SECRET="measure",
    )
    for name, requests in measure().items():
        print(f"{name}: {len(requests)} requests")
        for request in requests:
            print(f"  {request}")
