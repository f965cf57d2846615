"""The local stage's outbox: what the notification channels sent, for people and tests to read.

Every message is kept in the local outbox table (chalicelib/local/outbox_table.py) when it leaves,
so listing is one Query per channel on a key (the channel, or its incident number, or its
address), whatever the emulator holds:

- Emails and SMS: the app's SES and SNS clients record what SES and SNS on the emulator accepted
  (chalicelib/local/outbox_recording.py; `make run` installs it): SendEmail and SendRawEmail
  (chalicelib/local/outbox_email.py), Publish to a phone number. An SMS has no time (`sent_at`
  null): SMS come after the messages that have one, newest first.
- Slack messages are the ones the built-in Slack sink (POST /local/slack/api/chat.postMessage,
  and chat.update and chat.postEphemeral for what a button click answers) received.
- Outbound webhook deliveries are the requests the built-in webhook sink
  (POST /local/webhook-sink/{sink_name}, chalicelib/local/webhook_sink.py) received.
- Voice calls are the ones the built-in Twilio sink (chalicelib/local/voice_sink.py) accepted,
  with the words the call says as `text` and the TwiML in `voice`.
Verification codes sent by SMS or voice show here like any other message. Each channel keeps its
newest outbox_table.KEEP_PER_CHANNEL messages.

Production code never writes here: the notification channels send as they would on AWS (SES,
SNS, Slack's Web API, Twilio, HTTP webhooks), and the local stage points them at the emulator
and the sinks. Local-only: the local server mounts the route that reads it (chalicelib/local/routes.py).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from datetime import datetime
from html import unescape
from typing import Any

from chalicelib import clock
from chalicelib.local import outbox_table
from chalicelib.local.outbox_email import html_to_text
from chalicelib.local.outbox_item import CHANNELS, INCIDENT_NUMBER, OutboxItem

__all__ = ["OutboxItem", "html_to_text", "list_outbox", "record_slack_message"]

POST_MESSAGE = "chat.postMessage"
MAX_ITEMS = 500


# ---------------------------------------------------------------- Slack sink storage


def record_slack_message(
    *, channel: str, text: str, blocks: Any, metadata: Any, now: datetime, method: str = POST_MESSAGE
) -> OutboxItem:
    """Keep one message the Slack sink accepted; returns it as sent. `method` is the Web API
    method: a chat.update (a page updated after a button click) or a chat.postEphemeral (a reply
    only the clicker sees) is listed with it as its subject."""
    sent = OutboxItem(
        channel="slack",
        to=channel,
        subject=None if method == POST_MESSAGE else method,
        text=text,
        sent_at=clock.isoformat(now),
        incident_number=_incident_number_of(metadata, text, blocks),
        id=uuid.uuid4().hex,
        blocks=blocks,
    )
    # Listed for reading: Slack's mrkdwn escapes undone, and blocks only as Block Kit's array of objects.
    outbox_table.record(replace(sent, text=unescape(text), blocks=_block_list(blocks)))
    return sent


def _block_list(blocks: Any) -> list[dict[str, Any]] | None:
    if isinstance(blocks, list) and all(isinstance(block, dict) for block in blocks):
        return blocks
    return None


def _incident_number_of(metadata: Any, text: str, blocks: Any) -> str | None:
    if isinstance(metadata, dict) and isinstance(metadata.get("event_payload"), dict):
        number = metadata["event_payload"].get("incident_number")
        if isinstance(number, str) and number:
            return number
    found = INCIDENT_NUMBER.search(text or "") or INCIDENT_NUMBER.search(json.dumps(blocks))
    return found.group(0) if found else None


# ---------------------------------------------------------------- reading


def emails(limit: int = MAX_ITEMS) -> list[OutboxItem]:
    """Newest first."""
    return outbox_table.query("email", limit=limit)


def slack_messages(limit: int = MAX_ITEMS) -> list[OutboxItem]:
    """Newest first."""
    return outbox_table.query("slack", limit=limit)


def sms_messages(limit: int = MAX_ITEMS) -> list[OutboxItem]:
    """Newest first (none has a time)."""
    return outbox_table.query("sms", limit=limit)


def voice_calls(limit: int = MAX_ITEMS) -> list[OutboxItem]:
    """Newest first. `text` is what the call says; `voice` has the caller id and the TwiML."""
    return outbox_table.query("voice", limit=limit)


def webhook_deliveries(limit: int = MAX_ITEMS) -> list[OutboxItem]:
    """Newest first. `text` is the raw body, exactly as signed; the headers are in `webhook`."""
    return outbox_table.query("webhook", limit=limit)


def list_outbox(
    *, channel: str | None = None, incident_number: str | None = None, to: str | None = None, limit: int = 50
) -> list[OutboxItem]:
    """Emails, Slack messages, SMS, voice calls and webhook deliveries merged, newest first (items
    without a known time, SMS among them, last): the newest `limit` of each channel asked for, one
    Query each, then merged."""
    items: list[OutboxItem] = []
    for name in CHANNELS:
        if channel in (None, name):
            items += outbox_table.query(name, incident_number=incident_number, to=to, limit=limit)
    # Stable sort: within one time (or none), each channel's own newest-first order is kept.
    items.sort(key=lambda item: item.sent_at or "", reverse=True)
    return items[:limit]
