"""Create every table and queue from the same definitions AWS uses. Safe to run again."""

from __future__ import annotations

from typing import Any

from chalicelib import aws
from chalicelib.local.outbox_table import create_outbox_table
from chalicelib.queue.messages import DLQ_SUFFIX, MAX_RECEIVE_COUNT, QUEUES
from chalicelib.settings import get_settings
from chalicelib.table_registry import all_models


def create_tables() -> list[str]:
    aws.bind_tables()
    created = []
    for model in all_models():
        aws.reset_model_binding(model)
        if getattr(model.Meta, "provisioned_by", None):
            continue  # another model describes this shared table
        if not model.exists():
            model.create_table(wait=False)  # only ever run against moto, where a new table is ACTIVE at once
            created.append(model.Meta.table_name)
        else:
            _add_missing_indexes(model)
        _enable_ttl(model)
    return created


def _add_missing_indexes(model: Any) -> None:
    """A table kept from an older run (docs/LOCAL.md, "Local data survives restarts") gets the global
    indexes added since,
    e.g. the users' slack-user-index: a query on a missing index would fail every request."""
    client = aws.client("dynamodb")
    table = client.describe_table(TableName=model.Meta.table_name)["Table"]
    present = {index["IndexName"] for index in table.get("GlobalSecondaryIndexes", [])}
    for index in model._get_schema()["global_secondary_indexes"]:
        if index["index_name"] in present:
            continue
        client.update_table(
            TableName=model.Meta.table_name,
            AttributeDefinitions=index["attribute_definitions"],
            GlobalSecondaryIndexUpdates=[
                {
                    "Create": {
                        "IndexName": index["index_name"],
                        "KeySchema": index["key_schema"],
                        "Projection": index["projection"],
                    }
                }
            ],
        )


def _enable_ttl(model: Any) -> None:
    ttl_attribute = next(
        (name for name, attr in model.get_attributes().items() if type(attr).__name__ == "TTLAttribute"), None
    )
    if ttl_attribute is None:
        return
    client = aws.client("dynamodb")
    description = client.describe_time_to_live(TableName=model.Meta.table_name)["TimeToLiveDescription"]
    if description.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
        return
    client.update_time_to_live(
        TableName=model.Meta.table_name,
        TimeToLiveSpecification={"Enabled": True, "AttributeName": model.get_attributes()[ttl_attribute].attr_name},
    )


def create_queues() -> dict[str, str]:
    """Each queue gets a dead-letter queue after MAX_RECEIVE_COUNT failed receives."""
    import json

    settings = get_settings()
    sqs = aws.client("sqs")
    urls = {}
    for short_name in QUEUES:
        dlq_url = sqs.create_queue(QueueName=settings.queue_name(short_name + DLQ_SUFFIX))["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        url = sqs.create_queue(
            QueueName=settings.queue_name(short_name),
            Attributes={
                "VisibilityTimeout": "60",
                "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": MAX_RECEIVE_COUNT}),
            },
        )["QueueUrl"]
        urls[short_name] = url
    return urls


def verify_local_sender() -> None:
    """SES refuses to send from an unverified address; on the emulator, verify the configured one."""
    settings = get_settings()
    if settings.is_local:
        aws.client("ses").verify_email_identity(EmailAddress=settings.ses_sender)


SMS_INBOUND_TOPIC = "tocsin-local-sms-inbound"
SMS_INBOUND_PATH = "/integrations/sms/inbound"


def create_sms_inbound_topic(base_url: str) -> str:
    """The emulator's stand-in for AWS two-way SMS: a topic subscribed (http) to the SMS reply
    endpoint, so publishing an inbound SMS JSON to it delivers a signed SNS message, as on AWS.
    The emulator keeps no topics across runs: made again at every start (create_topic is
    idempotent). Returns the topic ARN."""
    sns = aws.client("sns")
    topic_arn = str(sns.create_topic(Name=SMS_INBOUND_TOPIC)["TopicArn"])
    endpoint = base_url.rstrip("/") + SMS_INBOUND_PATH
    subscribed = sns.list_subscriptions_by_topic(TopicArn=topic_arn).get("Subscriptions", [])
    if not any(s.get("Endpoint") == endpoint for s in subscribed):
        sns.subscribe(TopicArn=topic_arn, Protocol="http", Endpoint=endpoint)
    return topic_arn


def provision() -> None:
    create_tables()
    create_queues()
    if get_settings().is_local:
        verify_local_sender()
        create_outbox_table()  # the local sinks' table: never on AWS
