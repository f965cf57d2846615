"""The plain CloudFormation part deployed on moto's CloudFormation, and the service working on it.

- The stack's tables equal the ones the local stack provisions from the PynamoDB models (keys,
  attribute types, indexes, projections, TTL), its queues redrive as the local ones do, and prod
  turns deletion protection on.
- On the stack's own resources, the admin CLI bootstraps an organization and owner key, the API
  (through chalice.test.Client) creates, reads, lists and acknowledges incidents and takes
  webhooks, and the SQS handler consumes the queue; every AWS call the code made is allowed by
  the IAM policy for those resources, and the static scan had found it.
- The service-layer suite runs with `provision()` replaced by the stack (tests/infra/cfn_provision).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chalicelib import aws
from chalicelib.deploy import awscalls
from chalicelib.deploy.policy import allowed, build_policy
from chalicelib.deploy.stages import ROOT, StageConfig
from chalicelib.settings import reset_settings
from tests.infra import recorder
from tests.infra.stack import deploy_stack

STACK_PREFIX = "tocsin-test-"  # the chalice `test` stage's prefixes, so chalice.test.Client agrees
SUITE_ON_STACK = [
    "tests/service/test_incident_service.py",
    "tests/service/test_ingest_service.py",
    "tests/service/test_worker_loop.py",
]


def use_prefixes(monkeypatch: pytest.MonkeyPatch, table_prefix: str, queue_prefix: str) -> None:
    from chalicelib.apikey import service as apikeys
    from chalicelib.incident import workflow_settings as incident_settings

    monkeypatch.setenv("TABLE_PREFIX", table_prefix)
    monkeypatch.setenv("QUEUE_PREFIX", queue_prefix)
    reset_settings()
    aws.reset()
    apikeys.clear_cache()
    incident_settings.forget()


@pytest.fixture
def moto(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from moto import mock_aws

    with mock_aws():
        yield
    reset_settings()
    aws.reset()


def describe(table: str) -> dict[str, Any]:
    description = aws.client("dynamodb").describe_table(TableName=table)["Table"]

    def keys(schema: list[dict[str, str]]) -> list[tuple[str, str]]:
        return sorted(((k["KeyType"], k["AttributeName"]) for k in schema), key=lambda k: k[0] != "HASH")

    def indexes(entries: list[dict[str, Any]] | None) -> dict[str, Any]:
        return {i["IndexName"]: (keys(i["KeySchema"]), i["Projection"]) for i in entries or []}

    ttl = aws.client("dynamodb").describe_time_to_live(TableName=table)["TimeToLiveDescription"]
    return {
        "keys": keys(description["KeySchema"]),
        "attributes": sorted((a["AttributeName"], a["AttributeType"]) for a in description["AttributeDefinitions"]),
        "global": indexes(description.get("GlobalSecondaryIndexes")),
        "local": indexes(description.get("LocalSecondaryIndexes")),
        "billing": description["BillingModeSummary"]["BillingMode"],
        "ttl": (ttl.get("TimeToLiveStatus"), ttl.get("AttributeName")),
    }


def queue_attributes(name: str) -> dict[str, str]:
    sqs = aws.client("sqs")
    url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    attributes: dict[str, str] = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    return attributes


def test_stack_resources_equal_the_locally_provisioned_ones(moto: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.local.provision import provision
    from chalicelib.queue.messages import QUEUES

    use_prefixes(monkeypatch, "local-", "local-")
    provision()
    # The local Slack sink's outbox exists only in the local and test stages, never on AWS.
    local_tables = sorted(t for t in aws.client("dynamodb").list_tables()["TableNames"] if t != "local-local-outbox")
    outputs = deploy_stack(stage="prod", table_prefix="cfn-", queue_prefix="cfnq-")
    assert outputs["TablePrefix"] == "cfn-"
    stack_tables = sorted(t for t in aws.client("dynamodb").list_tables()["TableNames"] if t.startswith("cfn-"))
    assert [t.removeprefix("cfn-") for t in stack_tables] == [t.removeprefix("local-") for t in local_tables]
    for table in local_tables:
        short = table.removeprefix("local-")
        assert describe("cfn-" + short) == describe(table), short
        assert aws.client("dynamodb").describe_table(TableName="cfn-" + short)["Table"]["DeletionProtectionEnabled"]
    for queue in QUEUES:
        local, stacked = queue_attributes("local-" + queue), queue_attributes("cfnq-" + queue)
        local_redrive, stack_redrive = json.loads(local["RedrivePolicy"]), json.loads(stacked["RedrivePolicy"])
        assert stack_redrive["maxReceiveCount"] == local_redrive["maxReceiveCount"]
        assert stack_redrive["deadLetterTargetArn"].endswith(":cfnq-" + queue + "-dlq")
        assert queue_attributes("cfnq-" + queue + "-dlq")["MessageRetentionPeriod"] == str(14 * 24 * 3600)
    topics = [t["TopicArn"] for t in aws.client("sns").list_topics()["Topics"]]
    assert outputs["AlarmTopicArn"] in topics and outputs["AlarmTopicArn"].endswith(":cfnq-alarms")


def test_dev_stack_leaves_deletion_protection_off(moto: None) -> None:
    deploy_stack(stage="dev", table_prefix="dev-", queue_prefix="dev-")
    for table in aws.client("dynamodb").list_tables()["TableNames"]:
        assert aws.client("dynamodb").describe_table(TableName=table)["Table"]["DeletionProtectionEnabled"] is False


def _api(client: Any, method: str, path: str, key: str | None, body: Any = None, **headers: str) -> Any:
    all_headers = {"Content-Type": "application/json", **headers}
    if key:
        all_headers["Authorization"] = f"Bearer {key}"
    raw = json.dumps(body) if body is not None else None
    response = getattr(client.http, method)(path, headers=all_headers, body=raw)
    response.json = json.loads(response.body) if response.body else None
    return response


def _alertmanager_firing() -> dict[str, Any]:
    path = ROOT / "tests" / "unit" / "fixtures" / "integration" / "alertmanager_firing.json"
    body: dict[str, Any] = json.loads(path.read_text())
    for labels in (body["commonLabels"], *(alert["labels"] for alert in body["alerts"])):
        labels.pop("service_id", None)
    return body


def _drain(queue_url: str) -> int:
    """Hand what is on the stack's queue to the Lambda handler, as Lambda's SQS poller would."""
    from app import handle_events
    from chalicelib.local.worker_loop import lambda_record

    sqs, handled = aws.client("sqs"), 0
    arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    for _ in range(20):
        messages = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            break
        event = {"Records": [lambda_record(m, arn, "us-east-1") for m in messages]}
        assert handle_events(event, None) == {"batchItemFailures": []}
        for message in messages:
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
        handled += len(messages)
    return handled


def assert_policy_allows(calls: list[recorder.RecordedCall], table_prefix: str, queue_prefix: str) -> None:
    stage = StageConfig("test", table_prefix, queue_prefix, 60, None)
    policy = build_policy(stage)
    denied = sorted(
        {f"{c.action} on {c.resource} (at {c.where})" for c in calls if not allowed(policy, c.action, c.resource)}
    )
    assert not denied, "the IAM policy would deny:\n" + "\n".join(denied)
    scanned = {a for call in awscalls.find_calls() for a in awscalls.iam_actions(call.service, call.operation)}
    unseen = sorted({f"{c.action} (at {c.where})" for c in calls if c.action not in scanned})
    assert not unseen, "calls the static scan missed:\n" + "\n".join(unseen)


def test_service_works_on_the_stack_within_its_policy(moto: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from chalice.test import Client

    from app import app
    from chalicelib import cli

    outputs = deploy_stack(stage="prod", table_prefix=STACK_PREFIX, queue_prefix=STACK_PREFIX)
    use_prefixes(monkeypatch, outputs["TablePrefix"], outputs["QueuePrefix"])
    with recorder.record_aws_calls() as calls:
        # The documented bootstrap: the admin CLI against the stack's tables.
        out = io.StringIO()
        code = cli.main(
            [
                "--table-prefix",
                outputs["TablePrefix"],
                "create-org",
                "--name",
                "Acme",
                "--owner-email",
                "ops@acme.example",
            ],
            out=out,
            err=io.StringIO(),
        )
        assert code == 0
        created = json.loads(out.getvalue())
        key, org_id = created["key"], created["organization_id"]

        with Client(app, stage_name="test") as client:
            verified = _api(client, "get", "/api/v1/auth/verify", key)
            assert verified.status_code == 200, verified.body
            team = _api(client, "post", "/api/v1/teams", key, {"name": "Payments"})
            assert team.status_code == 201, team.body
            service = _api(
                client, "post", "/api/v1/services", key, {"name": "Checkout", "team_id": team.json["data"]["id"]}
            )
            assert service.status_code == 201, service.body
            service_key = service.json["data"]["service_key"]
            body = {"title": "Checkout down", "service_ids": [service_key], "severity": "SEV1"}
            first = _api(client, "post", "/api/v1/incidents", key, body, **{"Idempotency-Key": "deploy-1"})
            assert first.status_code == 201, first.body
            again = _api(client, "post", "/api/v1/incidents", key, body, **{"Idempotency-Key": "deploy-1"})
            assert again.json["data"] == first.json["data"]
            number = first.json["data"]["incident_number"]
            listed = _api(client, "get", "/api/v1/incidents", key)
            assert [i["incident_number"] for i in listed.json["data"]["items"]] == [number]
            acknowledged = _api(client, "post", f"/api/v1/incidents/{number}/acknowledge", key, {})
            assert acknowledged.status_code == 200, acknowledged.body

            hook = _api(
                client,
                "post",
                "/api/v1/integrations",
                key,
                {"type": "alertmanager", "name": "prom", "default_service": service_key},
            )
            assert hook.status_code == 201, hook.body
            path = f"/webhooks/{hook.json['data']['routing_key']}"
            headers = {"Content-Type": "application/json", "X-Forwarded-Proto": "https"}
            opened = client.http.post(path, headers=headers, body=json.dumps(_alertmanager_firing()))
            assert opened.status_code == 201, opened.body
            deduplicated = client.http.post(path, headers=headers, body=json.dumps(_alertmanager_firing()))
            assert deduplicated.status_code == 200, deduplicated.body
            alerted = json.loads(opened.body)["incident"]["id"]
            assert json.loads(deduplicated.body)["incident"]["id"] == alerted

            assert _drain(outputs["EventsQueueUrl"]) >= 1
            detail = _api(client, "get", f"/api/v1/incidents/{alerted}", key)
            assert "alert_received" in [entry["event_type"] for entry in detail.json["data"]["timeline"]]
            assert _api(client, "get", f"/api/v1/incidents/{number}", key).json["data"]["acknowledged_at"]

    touched = {c.resource.rsplit("/", 1)[-1] for c in calls if ":table/" in c.resource and "/index/" not in c.resource}
    assert {
        "tocsin-test-" + t for t in ("organizations", "api-keys", "incidents", "alert-dedup", "rate-limits")
    } <= touched
    assert org_id
    assert_policy_allows(calls, outputs["TablePrefix"], outputs["QueuePrefix"])


def test_service_suite_runs_on_the_stack(tmp_path: Path) -> None:
    """Service-layer tests with provision() replaced by the stack; their AWS calls within the policy.
    (The whole suite: python -m pytest -p tests.infra.cfn_provision tests/service)"""
    calls_file = tmp_path / "calls.json"
    environment = {**os.environ, "TOCSIN_AWS_CALLS_FILE": str(calls_file)}
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.infra.cfn_provision",
            "-W",
            "ignore:Tried to parse",
            *SUITE_ON_STACK,
        ],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    calls = recorder.load(calls_file)
    assert {c.action for c in calls} >= {"dynamodb:PutItem", "dynamodb:UpdateItem", "sqs:SendMessage"}
    assert_policy_allows(calls, STACK_PREFIX, STACK_PREFIX)
