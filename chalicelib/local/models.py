"""Models of the local server's /local routes (chalicelib/local/routes.py): they document them in the
OpenAPI document while they are mounted."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from chalicelib.model_base import ApiModel


class LocalWebhookReceiptV1(ApiModel):
    """How the local webhook sink saw one outbound webhook delivery."""

    answered_status: int = Field(description="The HTTP status the sink answered (204, or the one ?fail= asked for).")
    event_id: str | None = Field(description="The event's id (body `id`, also the X-Tocsin-Event-Id header).")
    event_type: str | None
    attempt: int | None = Field(description="X-Tocsin-Delivery-Attempt: 1 for the first attempt.")
    signature_verified: bool | None = Field(
        description="Whether X-Service-Signature verified (timestamp fresh) against the secret of a subscription "
        "of the event's organization whose URL points at this sink; null when there is no such subscription."
    )
    subscription_id: str | None = Field(description="The subscription whose secret verified the signature.")
    signature_error: str | None = Field(description="Why the signature did not verify.")
    headers: dict[str, str] = Field(description="The request headers as received, names lower-cased.")


class LocalVoiceCallV1(ApiModel):
    """How the local voice sink saw one call."""

    from_: str = Field(alias="from", description="The caller id (From).")
    twiml: str = Field(description="The call's TwiML, as sent.")


class LocalOutboxItemV1(ApiModel):
    channel: Literal[
        "email", "slack", "sms", "voice", "webhook", "teams", "mattermost", "ntfy", "discord", "google_chat", "pushover"
    ]
    to: str = Field(
        description="Email address(es), the Slack user id, the phone number (SMS, voice), the webhook sink's "
        "name it went to, or for a chat or push message the person's webhook URL it was meant for."
    )
    subject: str | None = Field(
        description="Email subject; the event type of a webhook; for Slack, chat.update (a page updated after a "
        "button click) or chat.postEphemeral (a reply only the clicker saw), null for a message; null for SMS "
        "and calls."
    )
    text: str = Field(
        description="The message as plain text (an email's HTML part, tags removed; what a call says); a "
        "webhook's raw body, exactly the bytes that were signed."
    )
    sent_at: str | None = Field(description="When it was sent (RFC 3339), when known (never for an SMS).")
    incident_number: str | None
    id: str = Field(description="SES or SNS message id, or the sink's id of a Slack message, call or webhook request.")
    webhook: LocalWebhookReceiptV1 | None = Field(default=None, description="Webhook items only.")
    blocks: list[dict[str, Any]] | None = Field(
        default=None, description="Slack items only: the Block Kit blocks as sent (null when none were)."
    )
    voice: LocalVoiceCallV1 | None = Field(default=None, description="Voice items only.")
    payload: dict[str, Any] | None = Field(
        default=None,
        description="Teams, Mattermost, ntfy, Discord, Google Chat and Pushover items only: the body exactly as "
        "posted (Pushover's form as an object of its fields).",
    )


class LocalOutboxV1(ApiModel):
    items: list[LocalOutboxItemV1]
    total: int


class LocalOutboxResponseV1(ApiModel):
    """The success envelope around the outbox."""

    success: bool
    data: LocalOutboxV1
    meta: dict[str, str]


class SlackPostMessageV1(ApiModel):
    """The chat.postMessage arguments the sink reads; others are accepted and ignored, as Slack does."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    channel: str = Field(description="A Slack user id (a direct message) or channel id. U_FAIL always fails.")
    ts: str | None = Field(default=None, description="chat.update only: the message to update.")
    user: str | None = Field(default=None, description="chat.postEphemeral only: who sees the reply.")
    text: str | None = None
    blocks: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] | None = None


class VoiceCallAnswerV1(ApiModel):
    """The local voice sink's answer to a new call: Twilio's call resource (the fields it reads)."""

    model_config = ConfigDict(extra="allow", defer_build=True, populate_by_name=True)

    sid: str = Field(description="The call sid (CA...).")
    account_sid: str
    to: str
    from_: str = Field(alias="from")
    status: Literal["queued"]


class SlackAnswerV1(ApiModel):
    ok: bool
    channel: str | None = None
    ts: str | None = None
    error: str | None = None


class VoicePressV1(ApiModel):
    """A key to press on a call the local voice sink received."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    digits: str = Field(
        min_length=1,
        max_length=4,
        pattern=r"^[0-9*#]+$",
        description="The key(s): 4 acknowledge, 6 resolve, 8 escalate.",
    )


class VoicePressAnswerV1(ApiModel):
    """What the app answered to the signed callback the press posted."""

    call_sid: str
    digits: str
    callback_url: str = Field(description="The call's Gather action, which the callback was posted to and signed over.")
    twiml: str = Field(description="The app's TwiML answer.")
    said: str = Field(description="The words of that answer.")
