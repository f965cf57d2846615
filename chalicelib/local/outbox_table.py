"""The local outbox table, `<prefix>local-outbox`: what the built-in Slack and webhook sinks received.

It lives on the emulator only (local and test stages): it is not a registered model, so no
deployed stage has it. The Slack sink writes under partition "slack" (chalicelib/local/outbox.py),
the webhook sink under "webhook" (chalicelib/local/webhook_sink.py); both read it back newest first.
"""

from __future__ import annotations

from chalicelib import aws
from chalicelib.settings import get_settings

TABLE_SHORT_NAME = "local-outbox"


def outbox_table_name() -> str:
    return get_settings().table_name(TABLE_SHORT_NAME)


def create_outbox_table() -> None:
    """Safe to run again: an existing table is kept."""
    client = aws.client("dynamodb")
    try:
        client.create_table(
            TableName=outbox_table_name(),
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
    except client.exceptions.ResourceInUseException:
        return
