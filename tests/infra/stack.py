"""Deploy the plain CloudFormation part of template/resources.json on moto (in-process).

moto's CloudFormation creates the tables, queues (with redrive) and the topic; it skips the
alarms (unsupported there) and ignores TimeToLiveSpecification, which `deploy_stack` then
applies the way CloudFormation does on AWS, so the service layer sees what AWS would give it.
"""

from __future__ import annotations

import json
import re
import warnings
from typing import Any

from chalicelib.deploy.plain import plain_part
from chalicelib.deploy.stages import TEMPLATE_FILE

MOTO_SKIPS = {"AWS::CloudWatch::Alarm"}


def committed_template() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(TEMPLATE_FILE.read_text())
    return document


def plain_template() -> dict[str, Any]:
    return plain_part(committed_template())


def stack_name_for(table_prefix: str, queue_prefix: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]", "-", f"tocsin-{table_prefix}-{queue_prefix}").strip("-")[:128]


def deploy_stack(
    *, stage: str, table_prefix: str, queue_prefix: str, stack_name: str | None = None, region: str = "us-east-1"
) -> dict[str, str]:
    """Create the stack (mock_aws must be active) and return its outputs."""
    import boto3

    template = plain_template()
    name = stack_name or stack_name_for(table_prefix, queue_prefix)
    cloudformation = boto3.client("cloudformation", region_name=region)
    parameters = {"Stage": stage, "TablePrefix": table_prefix, "QueuePrefix": queue_prefix}
    with warnings.catch_warnings():
        # moto warns about each resource type it skips, whenever it walks the stack; the alarms
        # are checked by cfn-lint and tests/infra/test_template.py instead.
        warnings.filterwarnings("ignore", message=".*not supported by moto's CloudFormation.*")
        cloudformation.create_stack(
            StackName=name,
            TemplateBody=json.dumps(template),
            Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()],
        )
        stack = cloudformation.describe_stacks(StackName=name)["Stacks"][0]
        if stack["StackStatus"] != "CREATE_COMPLETE":
            raise AssertionError(f"stack {name}: {stack['StackStatus']} {stack.get('StackStatusReason')}")
        _apply_time_to_live(template, cloudformation, name, region)
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def _apply_time_to_live(template: dict[str, Any], cloudformation: Any, stack_name: str, region: str) -> None:
    import boto3

    dynamodb = boto3.client("dynamodb", region_name=region)
    physical = {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cloudformation.list_stack_resources(StackName=stack_name)["StackResourceSummaries"]
    }
    for logical_id, body in template["Resources"].items():
        specification = body.get("Properties", {}).get("TimeToLiveSpecification")
        if body["Type"] == "AWS::DynamoDB::Table" and specification:
            dynamodb.update_time_to_live(TableName=physical[logical_id], TimeToLiveSpecification=specification)
