"""Replies to SMS pages: POST /integrations/sms/inbound, the HTTPS subscription of the SNS topic
AWS two-way SMS delivers inbound messages to. The SNS signature is verified exactly as for
CloudWatch alarms (chalicelib/integration/parsers/sns.py), and only messages of the configured
topic (SMS_INBOUND_TOPIC_ARN) are read: any AWS account can sign an SNS message, so the topic is
what proves the message came from our two-way number. What a reply does is
chalicelib/paging/sms_reply.py."""

from __future__ import annotations

import json
from typing import Any

from chalice.app import Response
from pydantic import ConfigDict, Field

from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import NO_BUCKET, Call, OperationGroup
from chalicelib.api.provider_signatures import SNS_SMS_TOPIC_SIGNATURE
from chalicelib.model_base import ApiModel

api = OperationGroup(__name__, tag="webhooks")


class SnsEnvelopeV1(ApiModel):
    """An SNS HTTP(S) delivery (Notification or SubscriptionConfirmation); a Notification's
    `Message` is AWS's two-way SMS JSON (`originationNumber`, `destinationNumber`, `messageBody`,
    `inboundMessageId`, ...). Documents the body only: the route verifies and reads it itself."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class SmsReplyAcceptedV1(ApiModel):
    success: bool = True
    message: str = Field(description="What was done with the delivery.")
    reply: str | None = Field(default=None, description="The SMS sent back to the sender, if any.")


def _json(status: int, body: dict[str, Any]) -> Response:
    return Response(body=json.dumps(body), status_code=status, headers={"Content-Type": "application/json"})


def _accepted(message: str, reply: str | None = None) -> Response:
    return _json(200, SmsReplyAcceptedV1(message=message, reply=reply).model_dump())


@api.raw(
    "POST",
    "/integrations/sms/inbound",
    operation_id="receiveSmsReply",
    credential=SNS_SMS_TOPIC_SIGNATURE,
    bucket=NO_BUCKET,
    family=ErrorFamily.WEBHOOK,
    unexpected="The SMS could not be processed; retry it.",
    body=SnsEnvelopeV1,
    summary="Inbound SMS (AWS two-way SMS through SNS): replies to SMS pages",
    description=(
        "The SNS topic that receives two-way SMS is subscribed to this URL. `4`, `ack`, `ack 42` "
        "acknowledge; `6`, `resolve`, `resolve 42` resolve (42: the end of the incident number the SMS "
        "carried; without it, the latest incident paged to that phone). The sender must be a verified "
        "SMS contact method and gets an SMS back saying what happened or why not, except: a number that is no "
        "verified contact gets at most one reply a day (and all of them together 20 an hour), and no reply goes "
        "to a short code or to a message that repeats Tocsin's words or the sender's last text (an auto-responder "
        "loop); the answer's message then says `no reply sent` and why. A SubscriptionConfirmation "
        "is confirmed. Errors: INVALID_PAYLOAD 400, INVALID_SIGNATURE 401 (signature, or a topic other "
        "than the configured one), NOT_FOUND 404 (SMS replies are not configured), PAYLOAD_TOO_LARGE 413, "
        "SERVICE_UNAVAILABLE 503 (the signing certificate could not be fetched; SNS retries)."
    ),
    response=SmsReplyAcceptedV1,
    errors=(400, 401, 404, 413, 503),
)
def receive_sms_reply(call: Call) -> Response:
    from chalicelib.integration import fetch
    from chalicelib.integration.parsers.sns import NOTIFICATION, SUBSCRIPTION_CONFIRMATION, SnsMessage
    from chalicelib.paging import sms_reply

    message: SnsMessage = call.credential
    if message.type == SUBSCRIPTION_CONFIRMATION and message.subscribe_url:
        fetch.confirm_subscription(message.subscribe_url, settings=call.settings)
        return _accepted("subscription confirmed")
    if message.type != NOTIFICATION:
        return _accepted("nothing to do for this delivery")
    handled = sms_reply.handle(sms_reply.read_inbound(message.message), call.now, settings=call.settings)
    if handled is None:
        return _accepted("already handled (an SNS retry); nothing was done again")
    if not handled.replied:
        # Still a 200: a 429 would only make SNS deliver the message again.
        return _accepted(f"no reply sent: {handled.withheld}")
    return _accepted("reply sent", handled.text)
