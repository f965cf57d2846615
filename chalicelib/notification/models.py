"""Models of the local stage's routes (they document them in the OpenAPI document)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from chalicelib.model_base import ApiModel


class LocalOutboxItemV1(ApiModel):
    channel: Literal["email", "slack"]
    to: str = Field(description="Email address(es), or the Slack user id the message went to.")
    subject: str | None = Field(description="Email subject; null for Slack messages.")
    text: str = Field(description="The message as plain text (an email's HTML part, tags removed).")
    sent_at: str | None = Field(description="When it was sent (RFC 3339), when known.")
    incident_number: str | None
    id: str = Field(description="SES message id, or the sink's id of a Slack message.")


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
    text: str | None = None
    blocks: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] | None = None


class SlackAnswerV1(ApiModel):
    ok: bool
    channel: str | None = None
    ts: str | None = None
    error: str | None = None
