"""Replying to an SMS page on the local stack: an inbound SMS published to the emulator's inbound
topic (demo.json `sms_inbound.topic_arn`) reaches POST /integrations/sms/inbound as a signed SNS
message, acknowledges as Ada, and the answer is texted back (the outbox shows it)."""

from __future__ import annotations

import json
from typing import Any

import boto3

from tests.e2e.conftest import LocalStack

# Fixtures of test_paging_rules_e2e, re-exported so pytest finds them here (a stack of this module's own).
from tests.e2e.test_paging_rules_e2e import ada_service as ada_service
from tests.e2e.test_paging_rules_e2e import open_incident, sent, wait_for
from tests.e2e.test_paging_rules_e2e import stack as stack


def _publish_inbound(stack: LocalStack, sender: str, body: str, message_id: str) -> None:
    sns: Any = boto3.client(
        "sns",
        endpoint_url=stack.demo["aws_endpoint_url"],
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    message = {
        "originationNumber": sender,
        "destinationNumber": "+15550009999",
        "messageKeyword": "KEYWORD_123456789012",
        "messageBody": body,
        "inboundMessageId": message_id,
    }
    sns.publish(TopicArn=stack.demo["sms_inbound"]["topic_arn"], Message=json.dumps(message))


def test_replying_4_acknowledges_and_answers(stack: LocalStack, ada_service: str) -> None:
    number = open_incident(stack, ada_service, "SEV1")
    ada_phone = "+15555550100"
    assert wait_for(lambda: sent(stack, "sms", number), 20)  # the page (and what a reply refers to)
    _publish_inbound(stack, ada_phone, "4", "e2e-in-1")

    def acknowledged() -> dict[str, Any] | None:
        detail = stack.get(f"/api/v1/incidents/{number}").json()["data"]
        return detail if detail.get("acknowledged_at") else None

    assert wait_for(acknowledged, 20), "the reply did not acknowledge"
    answers = wait_for(lambda: [t for t in sent(stack, "sms", number) if "acknowledged by" in t["text"]], 10)
    assert [(t["to"], t["text"]) for t in answers] == [(ada_phone, f"{number} acknowledged by ada@demo.tocsin.dev.")]
