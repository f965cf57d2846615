"""The CloudFormation merge template for `chalice package`, generated from the code's definitions.

    python -m chalicelib.deploy template > template/resources.json

It is plain CloudFormation (no Serverless resources of its own): tables, queues with their
dead-letter queues, the alarm topic and alarms. It also patches the functions Chalice emits,
by their Chalice logical ids: the stage's names and secrets as environment variables, the SQS
event source pointed at the stage's queue with partial batch failures reported. Without those
patches (see `chalicelib.deploy.plain`) it deploys on its own, e.g. on moto's CloudFormation.
"""

from __future__ import annotations

import json
from typing import Any

from chalicelib.deploy.definitions import (
    FunctionDef,
    QueueDef,
    TableDef,
    function_definitions,
    queue_definitions,
    table_definitions,
)
from chalicelib.deploy.parameters import CONDITIONS, PARAMETERS, ref
from chalicelib.deploy.plain import references
from chalicelib.deploy.stages import DEPLOY_STAGES, stage_config

ALARM_TOPIC = "AlarmTopic"
USER_POOL = "ConsoleUserPool"
USER_POOL_CLIENT = "ConsoleUserPoolClient"
ALARM_SUBSCRIPTION = "AlarmEmailSubscription"
CUSTOM_DOMAIN = "ApiCustomDomain"
REST_API = "RestAPI"  # the AWS::Serverless::Api `chalice package` emits
SECRET_NAME = "tocsin/${Stage}"  # Secrets Manager secret (JSON) holding the stage's secrets
# AWS: set the source queue's visibility timeout to at least six times the function timeout.
VISIBILITY_TIMEOUT_FACTOR = 6
QUEUE_RETENTION_SECONDS = 4 * 24 * 3600
DEAD_LETTER_RETENTION_SECONDS = 14 * 24 * 3600  # the SQS maximum: time to look at what failed
DEAD_LETTER_ALARM_PERIOD = 300
ERRORS_ALARM_PERIOD = 60


def _sub(text: str) -> dict[str, Any]:
    return {"Fn::Sub": text}


def _if(condition: str, value: Any) -> dict[str, Any]:
    return {"Fn::If": [condition, value, ref("AWS::NoValue")]}


def _secret(key: str) -> dict[str, Any]:
    return _sub("{{resolve:secretsmanager:" + SECRET_NAME + ":SecretString:" + key + "}}")


def _tags() -> list[dict[str, Any]]:
    return [{"Key": "tocsin:stage", "Value": ref("Stage")}]


def table_resource(table: TableDef) -> dict[str, Any]:
    if table.billing_mode != "PAY_PER_REQUEST":
        raise ValueError(f"{table.model_name}: tables are on-demand (PAY_PER_REQUEST), not {table.billing_mode}")
    properties: dict[str, Any] = {
        "TableName": _sub("${TablePrefix}" + table.short_name),
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": name, "AttributeType": kind} for name, kind in table.attribute_types.items()
        ],
        "KeySchema": _key_schema(table.key_schema),
    }
    if table.global_indexes:
        properties["GlobalSecondaryIndexes"] = [
            {"IndexName": i.name, "KeySchema": _key_schema(i.key_schema), "Projection": i.projection}
            for i in table.global_indexes
        ]
    if table.local_indexes:
        properties["LocalSecondaryIndexes"] = [
            {"IndexName": i.name, "KeySchema": _key_schema(i.key_schema), "Projection": i.projection}
            for i in table.local_indexes
        ]
    if table.ttl_attribute:
        properties["TimeToLiveSpecification"] = {"AttributeName": table.ttl_attribute, "Enabled": True}
    properties["PointInTimeRecoverySpecification"] = {"PointInTimeRecoveryEnabled": True}
    properties["DeletionProtectionEnabled"] = {"Fn::If": ["IsProd", True, False]}
    properties["Tags"] = _tags()
    return {"Type": "AWS::DynamoDB::Table", "Properties": properties}


def _key_schema(keys: tuple[tuple[str, str], ...]) -> list[dict[str, str]]:
    return [{"AttributeName": name, "KeyType": kind} for name, kind in keys]


def queue_resources(queue: QueueDef, visibility_timeout: int) -> dict[str, Any]:
    return {
        queue.dead_letter_logical_id: {
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "QueueName": _sub("${QueuePrefix}" + queue.dead_letter_short_name),
                "MessageRetentionPeriod": DEAD_LETTER_RETENTION_SECONDS,
                "SqsManagedSseEnabled": True,
                "Tags": _tags(),
            },
        },
        queue.logical_id: {
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "QueueName": _sub("${QueuePrefix}" + queue.short_name),
                "VisibilityTimeout": visibility_timeout,
                "MessageRetentionPeriod": QUEUE_RETENTION_SECONDS,
                "RedrivePolicy": {
                    "deadLetterTargetArn": {"Fn::GetAtt": [queue.dead_letter_logical_id, "Arn"]},
                    "maxReceiveCount": queue.max_receive_count,
                },
                "SqsManagedSseEnabled": True,
                "Tags": _tags(),
            },
        },
        queue.dead_letter_logical_id + "Alarm": _alarm(
            name="${AWS::StackName}-" + queue.dead_letter_short_name + "-not-empty",
            description=f"Messages on {queue.short_name} failed {queue.max_receive_count} times and wait in "
            f"{queue.dead_letter_short_name}: inspect them, fix, then redrive",
            namespace="AWS/SQS",
            metric="ApproximateNumberOfMessagesVisible",
            dimension=("QueueName", {"Fn::GetAtt": [queue.dead_letter_logical_id, "QueueName"]}),
            statistic="Maximum",
            period=DEAD_LETTER_ALARM_PERIOD,
        ),
    }


def _alarm(
    *, name: str, description: str, namespace: str, metric: str, dimension: tuple[str, Any], statistic: str, period: int
) -> dict[str, Any]:
    return {
        "Type": "AWS::CloudWatch::Alarm",
        "Properties": {
            "AlarmName": _sub(name),
            "AlarmDescription": description,
            "Namespace": namespace,
            "MetricName": metric,
            "Dimensions": [{"Name": dimension[0], "Value": dimension[1]}],
            "Statistic": statistic,
            "Period": period,
            "EvaluationPeriods": 1,
            "Threshold": 0,
            "ComparisonOperator": "GreaterThanThreshold",
            "TreatMissingData": "notBreaching",
            "AlarmActions": [ref(ALARM_TOPIC)],
            "OKActions": [ref(ALARM_TOPIC)],
        },
    }


def function_environment() -> dict[str, Any]:
    """What every function reads: names from the same parameters that name the resources, secrets
    from Secrets Manager (resolved by CloudFormation at deploy time; the role needs no access)."""
    return {
        "TOCSIN_STAGE": ref("Stage"),
        "TABLE_PREFIX": ref("TablePrefix"),
        "QUEUE_PREFIX": ref("QueuePrefix"),
        "API_KEY_HMAC_SECRET": _secret("API_KEY_HMAC_SECRET"),
        "SECRETS_ENCRYPTION_KEY": _secret("SECRETS_ENCRYPTION_KEY"),
        "JWT_SECRET": _if("UseJwtSecret", _secret("JWT_SECRET")),
        "JWT_JWKS_URL": _if("HasJwtJwksUrl", ref("JwtJwksUrl")),
        "JWT_ISSUER": _if("HasJwtIssuer", ref("JwtIssuer")),
        "JWT_AUDIENCE": _if("HasJwtAudience", ref("JwtAudience")),
        # The explicit URL, else the custom domain, else unset (the EndpointURL output is known
        # only after the first deploy: the API refers to the function, so the reverse would cycle).
        "PUBLIC_BASE_URL": {
            "Fn::If": ["HasPublicBaseUrl", ref("PublicBaseUrl"), _if("HasCustomDomain", _sub("https://${DomainName}"))]
        },
        "PUBLIC_APP_URL": _if("HasPublicAppUrl", ref("PublicAppUrl")),
        "SES_SENDER": _if("HasSesSender", ref("SesSender")),
        "SLACK_BOT_TOKEN": _if("UseSlack", _secret("SLACK_BOT_TOKEN")),
        "SLACK_SIGNING_SECRET": _if("UseSlack", _secret("SLACK_SIGNING_SECRET")),
        "SLACK_TEAM_ID": _if("HasSlackTeamId", ref("SlackTeamId")),
        "VOICE_AUTH_TOKEN": _if("UseVoice", _secret("VOICE_AUTH_TOKEN")),
        "PUSHOVER_APP_TOKEN": _if("UsePushover", _secret("PUSHOVER_APP_TOKEN")),
        "VOICE_ACCOUNT_SID": _if("HasVoiceAccountSid", ref("VoiceAccountSid")),
        "VOICE_FROM_NUMBER": _if("HasVoiceFromNumber", ref("VoiceFromNumber")),
        "SMS_SENDER_ID": _if("HasSmsSenderId", ref("SmsSenderId")),
        "SMS_ORIGINATION_NUMBER": _if("HasSmsOriginationNumber", ref("SmsOriginationNumber")),
        "SMS_INBOUND_TOPIC_ARN": _if("HasSmsInboundTopicArn", ref("SmsInboundTopicArn")),
        # The console signs people in with the stack's user pool; the API accepts its ID tokens.
        "COGNITO_USER_POOL_ID": ref(USER_POOL),
        "COGNITO_CLIENT_ID": ref(USER_POOL_CLIENT),
        "TOCSIN_SECRETS_REVISION": ref("SecretsRevision"),
    }


def user_pool_resources() -> dict[str, Any]:
    """The console's Cognito user pool and app client, in the shape the local stack creates
    (chalicelib.identity.pool). People are invited by admins, never sign themselves up. Retained
    when the stack is deleted: it holds people's passwords."""
    from chalicelib.identity import pool

    return {
        USER_POOL: {
            "Type": "AWS::Cognito::UserPool",
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
            "Properties": {
                "UserPoolName": _sub("${TablePrefix}" + pool.POOL_NAME),
                "UsernameAttributes": ["email"],
                "AutoVerifiedAttributes": ["email"],
                "Policies": {"PasswordPolicy": pool.PASSWORD_POLICY},
                "Schema": [pool.ORG_ATTRIBUTE_SCHEMA],
                "AccountRecoverySetting": {"RecoveryMechanisms": [{"Priority": 1, "Name": "verified_email"}]},
                "AdminCreateUserConfig": {
                    "AllowAdminCreateUserOnly": True,
                    "InviteMessageTemplate": {"EmailSubject": pool.INVITE_SUBJECT, "EmailMessage": pool.INVITE_MESSAGE},
                },
                "UserPoolTags": {"tocsin:stage": ref("Stage")},
            },
        },
        USER_POOL_CLIENT: {
            "Type": "AWS::Cognito::UserPoolClient",
            "Properties": {
                "UserPoolId": ref(USER_POOL),
                "ClientName": pool.CLIENT_NAME,
                "GenerateSecret": False,
                "ExplicitAuthFlows": pool.AUTH_FLOWS,
                "ReadAttributes": pool.READ_ATTRIBUTES,
                "WriteAttributes": pool.WRITE_ATTRIBUTES,
                "PreventUserExistenceErrors": "ENABLED",
            },
        },
    }


def function_patch(function: FunctionDef, queues: dict[str, QueueDef], depends_on: list[str]) -> dict[str, Any]:
    """Merged by Chalice into its AWS::Serverless::Function of the same logical id (no Type here)."""
    properties: dict[str, Any] = {"Environment": {"Variables": function_environment()}}
    if function.sqs_queue is not None and function.event_logical_id is not None:
        queue = queues[function.sqs_queue]
        properties["Events"] = {
            function.event_logical_id: {
                "Properties": {
                    # Same intrinsic as Chalice's own value, so the merge replaces it cleanly.
                    "Queue": _sub("${" + queue.logical_id + ".Arn}"),
                    "FunctionResponseTypes": ["ReportBatchItemFailures"],
                }
            }
        }
    already = references(properties)  # a dependency the patch itself creates needs no DependsOn
    return {"DependsOn": [d for d in depends_on if d not in already], "Properties": properties}


def lambda_errors_alarm(function: FunctionDef) -> dict[str, Any]:
    return _alarm(
        name="${AWS::StackName}-" + function.logical_id + "-errors",
        description=f"{function.logical_id} ({function.handler}) failed: an unhandled error or a timeout",
        namespace="AWS/Lambda",
        metric="Errors",
        dimension=("FunctionName", ref(function.logical_id)),
        statistic="Sum",
        period=ERRORS_ALARM_PERIOD,
    )


def custom_domain_resources() -> dict[str, Any]:
    """A regional custom domain mapped to Chalice's RestAPI, and its DNS record when asked.

    Chalice's own `api_gateway_custom_domain` emits a base path mapping that can be created
    before the API stage exists ("Invalid stage identifier specified", aws/chalice#1735);
    `Ref: RestAPI.Stage` (resolved by the SAM transform) orders it after the stage.
    """
    return {
        CUSTOM_DOMAIN: {
            "Type": "AWS::ApiGateway::DomainName",
            "Condition": "HasCustomDomain",
            "Properties": {
                "DomainName": ref("DomainName"),
                "RegionalCertificateArn": ref("CertificateArn"),
                "EndpointConfiguration": {"Types": ["REGIONAL"]},
                "SecurityPolicy": "TLS_1_2",
            },
        },
        CUSTOM_DOMAIN + "Mapping": {
            "Type": "AWS::ApiGateway::BasePathMapping",
            "Condition": "HasCustomDomain",
            "Properties": {
                "DomainName": ref(CUSTOM_DOMAIN),
                "RestApiId": ref(REST_API),
                "Stage": ref(REST_API + ".Stage"),
            },
        },
        CUSTOM_DOMAIN + "Record": {
            "Type": "AWS::Route53::RecordSet",
            "Condition": "HasDnsRecord",
            "Properties": {
                "HostedZoneId": ref("HostedZoneId"),
                "Name": ref("DomainName"),
                "Type": "A",
                "AliasTarget": {
                    "DNSName": {"Fn::GetAtt": [CUSTOM_DOMAIN, "RegionalDomainName"]},
                    "HostedZoneId": {"Fn::GetAtt": [CUSTOM_DOMAIN, "RegionalHostedZoneId"]},
                },
            },
        },
    }


def visibility_timeout() -> int:
    return VISIBILITY_TIMEOUT_FACTOR * max(stage_config(stage).lambda_timeout for stage in DEPLOY_STAGES)


def build_template() -> dict[str, Any]:
    tables = table_definitions()
    queues = queue_definitions()
    functions = function_definitions()
    resources: dict[str, Any] = {}
    outputs: dict[str, Any] = {
        "TablePrefix": {"Description": "TABLE_PREFIX of this stack's tables", "Value": ref("TablePrefix")},
        "QueuePrefix": {"Description": "QUEUE_PREFIX of this stack's queues", "Value": ref("QueuePrefix")},
    }
    for table in tables:
        resources[table.logical_id] = table_resource(table)
        outputs[table.logical_id + "Name"] = {"Value": ref(table.logical_id)}
    timeout = visibility_timeout()
    for queue in queues:
        resources.update(queue_resources(queue, timeout))
        outputs[queue.logical_id + "Url"] = {"Value": ref(queue.logical_id)}
        outputs[queue.dead_letter_logical_id + "Url"] = {"Value": ref(queue.dead_letter_logical_id)}
    resources[ALARM_TOPIC] = {
        "Type": "AWS::SNS::Topic",
        "Properties": {"TopicName": _sub("${QueuePrefix}alarms"), "Tags": _tags()},
    }
    resources[ALARM_SUBSCRIPTION] = {
        "Type": "AWS::SNS::Subscription",
        "Condition": "HasAlarmEmail",
        "Properties": {"TopicArn": ref(ALARM_TOPIC), "Protocol": "email", "Endpoint": ref("AlarmEmail")},
    }
    outputs["AlarmTopicArn"] = {"Description": "Alarms publish here", "Value": ref(ALARM_TOPIC)}
    resources.update(custom_domain_resources())
    resources.update(user_pool_resources())
    outputs["ConsoleUserPoolId"] = {"Description": "The console's Cognito user pool", "Value": ref(USER_POOL)}
    outputs["ConsoleUserPoolClientId"] = {"Description": "The console's app client", "Value": ref(USER_POOL_CLIENT)}
    outputs["CustomDomainTarget"] = {
        "Condition": "HasCustomDomain",
        "Description": "Point DomainName here (alias or CNAME) when the stack does not manage the DNS record",
        "Value": {"Fn::GetAtt": [CUSTOM_DOMAIN, "RegionalDomainName"]},
    }
    by_name = {q.short_name: q for q in queues}
    depends_on = [t.logical_id for t in tables] + [q.logical_id for q in queues]
    for function in functions:
        resources[function.logical_id] = function_patch(function, by_name, depends_on)
        resources[function.logical_id + "ErrorsAlarm"] = lambda_errors_alarm(function)
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Description": "Tocsin: tables, queues, alarms (merged into `chalice package` output)",
        "Metadata": {
            "GeneratedBy": "python -m chalicelib.deploy template > template/resources.json (do not edit by hand)"
        },
        "Parameters": PARAMETERS,
        "Conditions": CONDITIONS,
        "Resources": resources,
        "Outputs": outputs,
    }


def render(template: dict[str, Any]) -> str:
    return json.dumps(template, indent=2) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render(build_template()))
