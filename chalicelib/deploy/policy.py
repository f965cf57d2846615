"""The Lambda functions' IAM policy for one stage (Chalice's autogeneration reads only app.py).

    python -m chalicelib.deploy policy --stage prod > .chalice/policy-prod.json

Least privilege: the actions are the ones the code makes (tests/infra checks them against a scan
of the code and a recording of the calls it makes), on this stage's own tables, indexes and
queues by name. Region and account are wildcards so that the same file serves `chalice deploy`
as well as `chalice package` (no CloudFormation intrinsics); the partition is `aws`.
"""

from __future__ import annotations

import json
from typing import Any

from chalicelib.deploy.definitions import function_definitions, queue_definitions, table_definitions
from chalicelib.deploy.stages import StageConfig

# Item and key-condition actions on the tables themselves.
TABLE_ACTIONS = (
    "dynamodb:BatchGetItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:DeleteItem",
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:UpdateItem",
)
INDEX_ACTIONS = ("dynamodb:Query",)
# The API and the workers publish side effects; GetQueueUrl once per process (aws.queue_url).
SEND_ACTIONS = ("sqs:GetQueueUrl", "sqs:SendMessage")
# Lambda's SQS poller uses the function's role to read and delete what the handler processed.
CONSUME_ACTIONS = ("sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage")
# E-mail through SES from a verified identity (pages, notices; raw MIME when headers are needed).
EMAIL_ACTIONS = ("ses:SendEmail", "ses:SendRawEmail")  # SendRawEmail: subscriber notices set List-Unsubscribe
SMS_ACTIONS = ("sns:Publish",)
SNS_TOPICS = "arn:aws:sns:*:*:*"
# A new directory user is invited to the console's user pool (chalicelib.directory.invitations);
# the organization chosen at sign-in is written to the identity's custom:org (so its ID tokens name
# it). Sign-in itself (InitiateAuth and the password flows) is a public Cognito API: no IAM action.
INVITE_ACTIONS = ("cognito-idp:AdminCreateUser", "cognito-idp:AdminUpdateUserAttributes")
USER_POOLS = "arn:aws:cognito-idp:*:*:userpool/*"
LOG_ACTIONS = ("logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents")

ARN = "arn:aws"


def table_arn(name: str) -> str:
    return f"{ARN}:dynamodb:*:*:table/{name}"


def queue_arn(name: str) -> str:
    return f"{ARN}:sqs:*:*:{name}"


def build_policy(stage: StageConfig) -> dict[str, Any]:
    tables = table_definitions()
    queues = queue_definitions()
    consumed = sorted({f.sqs_queue for f in function_definitions() if f.sqs_queue is not None})
    table_arns = [table_arn(stage.table_prefix + t.short_name) for t in tables]
    index_arns = [
        f"{table_arn(stage.table_prefix + t.short_name)}/index/{index.name}" for t in tables for index in t.indexes
    ]
    statements: list[dict[str, Any]] = [
        {"Sid": "Tables", "Effect": "Allow", "Action": list(TABLE_ACTIONS), "Resource": table_arns},
    ]
    if index_arns:
        statements.append({"Sid": "Indexes", "Effect": "Allow", "Action": list(INDEX_ACTIONS), "Resource": index_arns})
    statements.append(
        {
            "Sid": "SendToQueues",
            "Effect": "Allow",
            "Action": list(SEND_ACTIONS),
            "Resource": [queue_arn(stage.queue_prefix + q.short_name) for q in queues],
        }
    )
    if consumed:
        statements.append(
            {
                "Sid": "ConsumeQueues",
                "Effect": "Allow",
                "Action": list(CONSUME_ACTIONS),
                "Resource": [queue_arn(stage.queue_prefix + q) for q in consumed],
            }
        )
    statements += [
        {"Sid": "SendEmail", "Effect": "Allow", "Action": list(EMAIL_ACTIONS), "Resource": f"{ARN}:ses:*:*:identity/*"},
        # SMS pages: SNS Publish to a phone number has no resource ARN (IAM sees "*"). Allowing
        # Publish on everything that is NOT a topic grants phone numbers and no topic at all.
        {"Sid": "SendSms", "Effect": "Allow", "Action": list(SMS_ACTIONS), "NotResource": SNS_TOPICS},
        {"Sid": "InviteToConsole", "Effect": "Allow", "Action": list(INVITE_ACTIONS), "Resource": USER_POOLS},
        {
            "Sid": "Logs",
            "Effect": "Allow",
            "Action": list(LOG_ACTIONS),
            "Resource": [
                f"{ARN}:logs:*:*:log-group:/aws/lambda/*",
                f"{ARN}:logs:*:*:log-group:/aws/lambda/*:log-stream:*",
            ],
        },
    ]
    return {"Version": "2012-10-17", "Statement": statements}


def render(policy: dict[str, Any]) -> str:
    return json.dumps(policy, indent=2) + "\n"


def allowed(policy: dict[str, Any], action: str, resource: str) -> bool:
    """Does an Allow statement grant `action` on `resource`? (`*` and `?` wildcards, as IAM matches)"""
    import fnmatch

    for statement in policy["Statement"]:
        if statement.get("Effect") != "Allow":
            continue
        actions = statement["Action"] if isinstance(statement["Action"], list) else [statement["Action"]]
        if not any(fnmatch.fnmatchcase(action, a) for a in actions):
            continue
        if "NotResource" in statement:
            excluded = statement["NotResource"]
            excluded = excluded if isinstance(excluded, list) else [excluded]
            if not any(fnmatch.fnmatchcase(resource, pattern) for pattern in excluded):
                return True
            continue
        resources = statement["Resource"] if isinstance(statement["Resource"], list) else [statement["Resource"]]
        if any(fnmatch.fnmatchcase(resource, pattern) for pattern in resources):
            return True
    return False
