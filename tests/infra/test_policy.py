"""The per-stage IAM policies against the AWS calls the code makes (a static scan of every module
the Lambda handler can import), least privilege both ways, and no wildcard resources."""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from chalicelib.deploy import awscalls
from chalicelib.deploy.definitions import function_definitions, queue_definitions, table_definitions
from chalicelib.deploy.policy import (
    CONSUME_ACTIONS,
    EMAIL_ACTIONS,
    LOG_ACTIONS,
    SMS_ACTIONS,
    allowed,
    build_policy,
    queue_arn,
    render,
    table_arn,
)
from chalicelib.deploy.stages import CONFIG_FILE, DEPLOY_STAGES, StageConfig, stage_config


@functools.cache
def calls() -> list[awscalls.AwsCall]:
    """The static scan, made on first use: at import it cost every xdist worker a second or more
    of collection, though one worker runs these tests."""
    return awscalls.find_calls()


@functools.cache
def required() -> dict[str, list[str]]:
    return awscalls.required_actions(calls())


# Granted though no code calls them, each for a stated reason.
NOT_CALLED_BY_CODE = {
    **{action: "Lambda's SQS poller uses the function's role" for action in CONSUME_ACTIONS},
    **{action: "the notification issue sends e-mail through SES" for action in EMAIL_ACTIONS},
    # The scan does not follow the injectable client of chalicelib/notification/sms.py.
    **{action: "SMS pages publish to phone numbers through SNS" for action in SMS_ACTIONS},
    **{action: "Lambda writes the function's logs with its role" for action in LOG_ACTIONS},
}


def stage_policy(name: str) -> dict[str, Any]:
    stage = stage_config(name)
    assert stage.policy_file is not None, f"stage {name} has no iam_policy_file"
    document: dict[str, Any] = json.loads(stage.policy_file.read_text())
    return document


def test_chalice_uses_the_hand_kept_policies() -> None:
    config = json.loads(CONFIG_FILE.read_text())
    assert config["autogen_policy"] is False
    for name in DEPLOY_STAGES:
        assert config["stages"][name]["iam_policy_file"] == f"policy-{name}.json"


@pytest.mark.parametrize("name", DEPLOY_STAGES)
def test_committed_policy_is_the_generated_one(name: str) -> None:
    stage = stage_config(name)
    assert stage.policy_file is not None
    assert stage.policy_file.read_text() == render(build_policy(stage)), (
        f"regenerate: python -m chalicelib.deploy policy --stage {name} > .chalice/policy-{name}.json"
    )


def test_the_scan_sees_the_calls_we_know_about() -> None:
    """A guard on the scanner itself: these calls exist in the code today."""
    found = awscalls.operations(calls())
    assert {
        ("dynamodb", "GetItem"),
        ("dynamodb", "PutItem"),
        ("dynamodb", "UpdateItem"),
        ("dynamodb", "Query"),
        ("dynamodb", "BatchGetItem"),
        ("dynamodb", "ConditionCheckItem"),
        ("dynamodb", "DeleteItem"),
        ("sqs", "SendMessage"),
        ("sqs", "GetQueueUrl"),
    } <= found
    modules = awscalls.reachable_modules()
    assert "chalicelib.queue.messages" in modules
    assert not [m for m in modules if m.startswith(("chalicelib.local", "chalicelib.deploy", "chalicelib.cli"))]


def test_no_scan_in_the_request_path() -> None:
    """docs/ARCHITECTURE.md: a Scan in a request path is a bug."""
    assert [c.where for c in calls() if c.operation == "Scan"] == []


def _resources_for(action: str, stage: StageConfig) -> list[str]:
    """Every resource of the stage the action may touch: tables and indexes, or queues."""
    if action.startswith("dynamodb:"):
        arns = [table_arn(stage.table_prefix + t.short_name) for t in table_definitions()]
        if action in ("dynamodb:Query", "dynamodb:Scan"):
            arns += [
                table_arn(stage.table_prefix + t.short_name) + f"/index/{i.name}"
                for t in table_definitions()
                for i in t.indexes
            ]
        return [arn.replace(":*:*:", ":us-east-1:123456789012:") for arn in arns]
    if action.startswith("sqs:"):
        return [
            queue_arn(stage.queue_prefix + q.short_name).replace(":*:*:", ":us-east-1:123456789012:")
            for q in queue_definitions()
        ]
    if action.startswith("ses:"):  # the verified sender identity, whatever its address
        return ["arn:aws:ses:us-east-1:123456789012:identity/tocsin@example.com"]
    if action.startswith("cognito-idp:"):  # the stack's user pool, whatever its generated id
        return ["arn:aws:cognito-idp:us-east-1:123456789012:userpool/us-east-1_AbCdEf123"]
    return []


@pytest.mark.parametrize("name", DEPLOY_STAGES)
def test_every_action_the_code_needs_is_allowed(name: str) -> None:
    policy, stage = stage_policy(name), stage_config(name)
    for action, where in required().items():
        resources = _resources_for(action, stage)
        assert resources, f"{action} (at {where[0]}): no resources known for this service"
        denied = [r for r in resources if not allowed(policy, action, r)]
        assert not denied, f"{action} needed at {', '.join(where)} is not allowed on {denied}"


@pytest.mark.parametrize("name", DEPLOY_STAGES)
def test_every_allowed_action_is_needed(name: str) -> None:
    granted = {a for s in stage_policy(name)["Statement"] for a in s["Action"]}
    unused = granted - set(required()) - set(NOT_CALLED_BY_CODE)
    assert not unused, f"granted but never called (least privilege): {sorted(unused)}"


@pytest.mark.parametrize("name", DEPLOY_STAGES)
def test_sqs_consumers_can_receive_from_their_queue(name: str) -> None:
    policy, stage = stage_policy(name), stage_config(name)
    for function in function_definitions():
        if function.sqs_queue:
            arn = f"arn:aws:sqs:us-east-1:123456789012:{stage.queue_prefix}{function.sqs_queue}"
            for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"):
                assert allowed(policy, action, arn), (function.logical_id, action)


@pytest.mark.parametrize("name", DEPLOY_STAGES)
def test_resources_are_this_stage_s_own_never_wildcards(name: str) -> None:
    stage = stage_config(name)
    other = [s for s in DEPLOY_STAGES if s != name]
    for statement in stage_policy(name)["Statement"]:
        assert statement["Effect"] == "Allow"
        assert "NotAction" not in statement
        if statement["Sid"] == "SendSms":  # the one NotResource: Publish to anything but a topic
            assert statement["Action"] == ["sns:Publish"] and statement["NotResource"] == "arn:aws:sns:*:*:*"
            continue
        assert "NotResource" not in statement
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        assert "*" not in resources
        services = {a.split(":")[0] for a in statement["Action"]}
        for action in statement["Action"]:
            assert "*" not in action, action
        if services & {"dynamodb", "sqs"}:
            for resource in resources:
                name_part = resource.split(":", 5)[5]  # table/<name>[/index/<index>] or <queue name>
                assert "*" not in name_part, resource
                assert name_part.removeprefix("table/").startswith((stage.table_prefix, stage.queue_prefix)), resource
                for other_stage in other:
                    assert f"tocsin-{other_stage}-" not in resource


@pytest.mark.parametrize("name", DEPLOY_STAGES)
def test_policy_does_not_reach_another_stage(name: str) -> None:
    policy = stage_policy(name)
    for other in DEPLOY_STAGES:
        if other == name:
            continue
        for table in table_definitions():
            arn = f"arn:aws:dynamodb:us-east-1:123456789012:table/tocsin-{other}-{table.short_name}"
            assert not allowed(policy, "dynamodb:GetItem", arn)


def test_the_scanner_finds_each_kind_of_call() -> None:
    """Unit check of the scanner's rules on a made-up module."""
    import ast

    source = """
from chalicelib import aws
class ThingRecord(TocsinModel):
    by_owner = Index()
def f(record, tx, settings):
    ThingRecord.get("a")
    ThingRecord.by_owner.query("o")
    ThingRecord.batch_get([("a", "b")])
    ThingRecord.name.exists()          # a condition, not DescribeTable
    record.save(condition=None)
    record.update(actions=[])
    tx.update(record, [1])
    settings.update({"a": 1})          # dict.update: not DynamoDB
    record.delete()
    tx.condition_check(ThingRecord, "a")
    aws.client("sqs").send_message(QueueUrl="u", MessageBody="b")
    ses = aws.client("ses")
    ses.send_email()
"""
    scanner = awscalls._Scanner("x.py", {"ThingRecord", "TocsinModel"})
    scanner.visit(ast.parse(source))
    assert sorted((c.service, c.operation) for c in scanner.calls) == sorted(
        [
            ("dynamodb", "GetItem"),
            ("dynamodb", "Query"),
            ("dynamodb", "BatchGetItem"),
            ("dynamodb", "PutItem"),
            ("dynamodb", "UpdateItem"),
            ("dynamodb", "UpdateItem"),
            ("dynamodb", "DeleteItem"),
            ("dynamodb", "ConditionCheckItem"),
            ("sqs", "SendMessage"),
            ("ses", "SendEmail"),
        ]
    )


@pytest.mark.parametrize("name", DEPLOY_STAGES)
def test_sms_may_reach_phone_numbers_and_no_topic(name: str) -> None:
    policy = stage_policy(name)
    assert allowed(policy, "sns:Publish", "*")  # how IAM sees a Publish to a phone number
    assert not allowed(policy, "sns:Publish", "arn:aws:sns:us-east-1:123456789012:any-topic")
    assert not allowed(policy, "sns:CreateTopic", "*")
