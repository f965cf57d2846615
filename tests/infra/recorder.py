"""Record the AWS calls the application code makes, as IAM sees them (action + resource ARN).

Every botocore call (boto3 clients and PynamoDB alike go through `BaseClient._make_api_call`) is
attributed to the innermost `chalicelib` frame on the stack. Calls from the local stack's own
modules (the worker loop plays Lambda's SQS poller), this deploy package, or with no chalicelib
frame at all (test code reading the emulator) are not the Lambda role's business and are dropped.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from chalicelib.deploy.stages import ROOT

REGION = "us-east-1"
ACCOUNT = "123456789012"  # moto's default account
SERVICES = {"dynamodb", "sqs", "ses", "sesv2", "sns"}
NOT_THE_ROLE = ("chalicelib/local/", "chalicelib/deploy/", "chalicelib/cli.py")
CHALICELIB = str(ROOT / "chalicelib") + "/"
# SQS batch operations are authorized as their single-message action.
SQS_BATCH = {
    "SendMessageBatch": "SendMessage",
    "DeleteMessageBatch": "DeleteMessage",
    "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}
TRANSACT_PARTS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


@dataclass(frozen=True, order=True)
class RecordedCall:
    service: str
    operation: str
    action: str
    resource: str
    where: str


def table_arn(table: str, index: str | None = None) -> str:
    arn = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{table}"
    return f"{arn}/index/{index}" if index else arn


def queue_arn(name: str) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"


def _dynamodb(operation: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    if operation in ("BatchGetItem", "BatchWriteItem"):
        return [(f"dynamodb:{operation}", table_arn(t)) for t in params.get("RequestItems", {})]
    if operation == "TransactWriteItems":
        parts = []
        for item in params.get("TransactItems", []):
            for kind, body in item.items():
                parts.append((f"dynamodb:{TRANSACT_PARTS[kind]}", table_arn(body["TableName"])))
        return parts
    if operation == "TransactGetItems":
        return [("dynamodb:GetItem", table_arn(i["Get"]["TableName"])) for i in params.get("TransactItems", [])]
    return [(f"dynamodb:{operation}", table_arn(str(params.get("TableName")), params.get("IndexName")))]


def _sqs(operation: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    name = params.get("QueueName") or str(params.get("QueueUrl", "")).rstrip("/").rsplit("/", 1)[-1]
    return [(f"sqs:{SQS_BATCH.get(operation, operation)}", queue_arn(name))]


def _ses(operation: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    source = str(params.get("Source") or params.get("FromEmailAddress") or "")
    identity = source.rsplit("@", 1)[-1].strip(">") if source else "*"
    return [(f"ses:{operation}", f"arn:aws:ses:{REGION}:{ACCOUNT}:identity/{identity}")]


def iam_requests(service: str, operation: str, params: dict[str, Any]) -> list[tuple[str, str]]:
    """(IAM action, resource ARN) pairs one API call needs."""
    if service == "dynamodb":
        return _dynamodb(operation, params)
    if service == "sqs":
        return _sqs(operation, params)
    if service in ("ses", "sesv2"):
        return _ses(operation, params)
    return [(f"{service}:{operation}", "*")]


def _caller() -> str | None:
    """path:line of the innermost chalicelib frame, or None when no chalicelib code is calling."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename.startswith(CHALICELIB):
            relative = filename[len(str(ROOT)) + 1 :]
            if relative.startswith(NOT_THE_ROLE):
                return None
            return f"{relative}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return None


@contextmanager
def record_aws_calls() -> Iterator[list[RecordedCall]]:
    from botocore.client import BaseClient

    calls: list[RecordedCall] = []
    original = BaseClient._make_api_call

    def recording(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        service = self.meta.service_model.service_name
        if service in SERVICES:
            where = _caller()
            if where is not None:
                for action, resource in iam_requests(service, operation_name, api_params):
                    calls.append(RecordedCall(service, operation_name, action, resource, where))
        return original(self, operation_name, api_params)

    BaseClient._make_api_call = recording  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        BaseClient._make_api_call = original  # type: ignore[method-assign]


def save(calls: list[RecordedCall], path: Path) -> None:
    path.write_text(json.dumps([asdict(c) for c in sorted(set(calls))], indent=1))


def load(path: Path) -> list[RecordedCall]:
    return [RecordedCall(**item) for item in json.loads(path.read_text())]
