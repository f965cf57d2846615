"""The local stage's outbox: what the notification channels sent, for people and tests to read.

- Emails are read back from SES on the emulator, so the outbox shows what SES accepted: moto
  server's `GET /moto-api/data.json` when AWS_ENDPOINT_URL points at one (`make run`), else
  the in-process moto SES backend (tests under `mock_aws`). moto keeps only the HTML part of
  an email that has both; the time sent comes from the email's own `<time datetime>` footer
  and the incident number from its subject. Raw MIME emails (SendRawEmail: subscriber notices)
  are read the same way, from their HTML part; moto server lists them apart from the others,
  so there they come after them in the order sent.
- Slack messages are the ones the built-in Slack sink (POST /local/slack/api/chat.postMessage,
  and chat.update and chat.postEphemeral for what a button click answers) received. They are
  kept in a DynamoDB table on the emulator (chalicelib/local/outbox_table.py), so every
  process of the local stack sees the same messages.
- Outbound webhook deliveries are the requests the built-in webhook sink
  (POST /local/webhook-sink/{sink_name}, chalicelib/local/webhook_sink.py) received, kept in the
  same table under their own partition.
- SMS are read back from SNS on the emulator (Publish to a phone number): moto server's
  `/moto-api/data.json` (its `sns.SMS` records) or the in-process SNS backend's `sms_messages`.
  moto keeps no time for them: `sent_at` is null, and they come in the order sent, newest first.
- Voice calls are the ones the built-in Twilio sink (chalicelib/local/voice_sink.py) accepted,
  with the words the call says as `text` and the TwiML in `voice`.
Verification codes sent by SMS or voice show here like any other message.

Production code never writes here: the notification channels send as they would on AWS (SES,
SNS, Slack's Web API, Twilio, HTTP webhooks), and the local stage points them at the emulator
and the sinks.
Local-only: the local server mounts the route that reads it (chalicelib/local/routes.py); it
imports moto lazily.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime
from html import unescape
from typing import Any

from chalicelib import aws, clock
from chalicelib.local.outbox_raw import from_raw
from chalicelib.local.outbox_table import outbox_table_name
from chalicelib.local.voice_sink import recorded_calls
from chalicelib.local.webhook_sink import received_webhooks
from chalicelib.settings import get_settings

SLACK_PARTITION = "slack"
POST_MESSAGE = "chat.postMessage"
MAX_ITEMS = 500
_INCIDENT_NUMBER = re.compile(r"\bINC-\d{4}-\d{1,12}\b")
_TIME_ATTRIBUTE = re.compile(r'<time datetime="([^"]+)"')
_TAG = re.compile(r"<[^>]+>")
_LINK = re.compile(r'<a\s[^>]*href="([^"]*)"[^>]*>(.*?)</a>', re.IGNORECASE | re.DOTALL)
# A page email's one-click links (notification/email_links.py): <a href="…/email-actions/…">Label</a>.
_ACTION_LINK = re.compile(r'<a href="([^"]*/email-actions/[^"]+)"[^>]*>([^<]+)</a>')
_BLOCK_END = re.compile(r"</(p|h[1-6]|div|li|tr)>|<br\s*/?>", re.IGNORECASE)


@dataclass(frozen=True)
class OutboxItem:
    channel: str  # email | slack | webhook | sms | voice
    to: str
    subject: str | None
    text: str
    sent_at: str | None
    incident_number: str | None
    id: str
    webhook: dict[str, Any] | None = field(default=None)  # webhook items only: how the sink saw it
    blocks: Any = field(default=None)  # Slack items only: the Block Kit blocks as sent
    voice: dict[str, Any] | None = field(default=None)  # voice items only: caller id and TwiML
    # Email items only: the HTML part as sent, and its one-click links by label
    # ({"Acknowledge": url, "Resolve": url}; empty when the email has none).
    html: str | None = field(default=None)
    headers: dict[str, str] | None = field(default=None)  # raw (MIME) emails only: From, List-Unsubscribe...
    action_links: dict[str, str] | None = field(default=None)

    def as_json(self) -> dict[str, Any]:
        document = asdict(self)
        for name, only_on in (
            ("webhook", "webhook"),
            ("blocks", "slack"),
            ("voice", "voice"),
            ("html", "email"),
            ("action_links", "email"),
        ):
            if self.channel != only_on:
                del document[name]
        if self.headers is None:
            del document["headers"]
        return document


# ---------------------------------------------------------------- Slack sink storage


def record_slack_message(
    *, channel: str, text: str, blocks: Any, metadata: Any, now: datetime, method: str = POST_MESSAGE
) -> OutboxItem:
    """Keep one message the Slack sink accepted; returns it as the outbox lists it. `method` is
    the Web API method: a chat.update (a page updated after a button click) or a
    chat.postEphemeral (a reply only the clicker sees) is listed with it as its subject."""
    subject = None if method == POST_MESSAGE else method
    incident_number = _incident_number_of(metadata, text, blocks)
    sent_at = clock.isoformat(now)
    item_id = uuid.uuid4().hex
    item = {
        "pk": {"S": SLACK_PARTITION},
        "sk": {"S": f"{sent_at}#{item_id}"},
        "to": {"S": channel},
        "text": {"S": text},
        "sent_at": {"S": sent_at},
        "blocks": {"S": json.dumps(blocks)},
    }
    if incident_number:
        item["incident_number"] = {"S": incident_number}
    if subject:
        item["subject"] = {"S": subject}
    aws.client("dynamodb").put_item(TableName=outbox_table_name(), Item=item)
    return OutboxItem("slack", channel, subject, text, sent_at, incident_number, item_id, blocks=blocks)


def _block_list(stored: str | None) -> list[dict[str, Any]] | None:
    """The blocks as sent, when they are Block Kit's array of objects (the sink refuses others)."""
    blocks = json.loads(stored) if stored else None
    if isinstance(blocks, list) and all(isinstance(block, dict) for block in blocks):
        return blocks
    return None


def _incident_number_of(metadata: Any, text: str, blocks: Any) -> str | None:
    if isinstance(metadata, dict) and isinstance(metadata.get("event_payload"), dict):
        number = metadata["event_payload"].get("incident_number")
        if isinstance(number, str) and number:
            return number
    found = _INCIDENT_NUMBER.search(text or "") or _INCIDENT_NUMBER.search(json.dumps(blocks))
    return found.group(0) if found else None


def slack_messages(limit: int = MAX_ITEMS) -> list[OutboxItem]:
    """Newest first."""
    client = aws.client("dynamodb")
    try:
        answer = client.query(
            TableName=outbox_table_name(),
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": SLACK_PARTITION}},
            ScanIndexForward=False,
            Limit=limit,
        )
    except client.exceptions.ResourceNotFoundException:
        return []  # nothing was ever sent to the sink
    items = []
    for raw in answer.get("Items", []):
        items.append(
            OutboxItem(
                channel="slack",
                to=raw["to"]["S"],
                subject=raw.get("subject", {}).get("S"),
                text=unescape(raw["text"]["S"]),  # Slack's mrkdwn escapes, undone for reading
                sent_at=raw["sent_at"]["S"],
                incident_number=raw.get("incident_number", {}).get("S"),
                id=raw["sk"]["S"].rsplit("#", 1)[-1],
                blocks=_block_list(raw.get("blocks", {}).get("S")),
            )
        )
    return items


# ---------------------------------------------------------------- emails, from SES on the emulator


def _emulator_records(endpoint_url: str, service: str, model: str) -> list[dict[str, Any]]:
    """moto server's records of one model (e.g. ses Message, sns SMS), in the order created."""
    import urllib.request

    with urllib.request.urlopen(f"{endpoint_url.rstrip('/')}/moto-api/data.json", timeout=10) as response:
        data = json.loads(response.read())
    records = data.get(service, {}).get(model, [])
    return [record for record in records if isinstance(record, dict)]


def _ses_messages_from_server(endpoint_url: str) -> list[dict[str, Any]]:
    raw = [
        from_raw(str(record.get("id") or ""), str(record.get("source") or ""), str(record.get("raw_data") or ""))
        for record in _emulator_records(endpoint_url, "ses", "RawMessage")
    ]
    return _emulator_records(endpoint_url, "ses", "Message") + raw


def _ses_messages_in_process() -> list[dict[str, Any]]:
    from moto.ses.models import ses_backends

    region = get_settings().aws_region
    messages: list[dict[str, Any]] = []
    for account_id in list(ses_backends.keys()):
        regions = ses_backends[account_id]
        if region not in regions:
            continue
        for message in getattr(regions[region], "sent_messages", []):
            if hasattr(message, "subject") and hasattr(message, "body"):
                messages.append(
                    {
                        "id": message.id,
                        "source": message.source,
                        "subject": message.subject,
                        "body": message.body,
                        "destinations": message.destinations,
                    }
                )
            elif hasattr(message, "raw_data"):
                messages.append(from_raw(message.id, str(message.source), message.raw_data))
    return messages


def ses_messages() -> list[dict[str, Any]]:
    """What SES on the emulator accepted (SendEmail and SendRawEmail), in the order it was sent."""
    endpoint = get_settings().aws_endpoint_url
    return _ses_messages_from_server(endpoint) if endpoint else _ses_messages_in_process()


def _link_text(link: re.Match[str]) -> str:
    """`Label (url)`; just the url when the label is the url itself."""
    url, label = link.group(1), link.group(2)
    return url if unescape(_TAG.sub("", label)).strip() == unescape(url) else f"{label} ({url})"


def html_to_text(body: str) -> str:
    if "<" not in body:
        return body.strip()
    text = _LINK.sub(_link_text, body)
    text = _BLOCK_END.sub("\n", text)
    text = unescape(_TAG.sub("", text))
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def emails() -> list[OutboxItem]:
    """Newest first (SES keeps them in the order sent)."""
    items = []
    for message in reversed(ses_messages()):
        destinations = message.get("destinations") or {}
        to = [*destinations.get("ToAddresses", []), *destinations.get("CcAddresses", [])]
        body = str(message.get("body") or "")
        subject = str(message.get("subject") or "")
        at = _TIME_ATTRIBUTE.search(body)
        number = _INCIDENT_NUMBER.search(subject) or _INCIDENT_NUMBER.search(body)
        items.append(
            OutboxItem(
                channel="email",
                to=", ".join(str(address) for address in to),
                subject=subject,
                text=message.get("text") or html_to_text(body),
                sent_at=unescape(at.group(1)) if at else message.get("sent_at"),
                incident_number=number.group(0) if number else None,
                id=str(message.get("id") or ""),
                html=body,
                action_links={unescape(label): unescape(url) for url, label in _ACTION_LINK.findall(body)},
                headers=message.get("headers"),
            )
        )
    return items


# ---------------------------------------------------------------- SMS, from SNS on the emulator


def _sms_in_process() -> list[dict[str, Any]]:
    from moto.sns.models import sns_backends

    region = get_settings().aws_region
    found: list[dict[str, Any]] = []
    for account_id in list(sns_backends.keys()):
        regions = sns_backends[account_id]
        if region not in regions:
            continue
        for message_id, (phone_number, message) in list(regions[region].sms_messages.items()):
            found.append({"message_id": message_id, "phone_number": phone_number, "message": message})
    return found


def sms_messages() -> list[OutboxItem]:
    """What SNS on the emulator accepted for phone numbers, newest first."""
    endpoint = get_settings().aws_endpoint_url
    records = _emulator_records(endpoint, "sns", "SMS") if endpoint else _sms_in_process()
    items = []
    for record in reversed(records):
        text = str(record.get("message") or "")
        number = _INCIDENT_NUMBER.search(text)
        items.append(
            OutboxItem(
                channel="sms",
                to=str(record.get("phone_number") or ""),
                subject=None,
                text=text,
                sent_at=None,  # moto keeps no time for an SMS
                incident_number=number.group(0) if number else None,
                id=str(record.get("message_id") or ""),
            )
        )
    return items


# ---------------------------------------------------------------- voice calls, from the local sink


def voice_calls(limit: int = MAX_ITEMS) -> list[OutboxItem]:
    """Newest first. `text` is what the call says; `voice` has the caller id and the TwiML."""
    return [
        OutboxItem(
            channel="voice",
            to=call.to,
            subject=None,
            text=call.spoken,
            sent_at=call.sent_at,
            incident_number=call.incident_number,
            id=call.item_id,
            voice={"from": call.from_number, "twiml": call.twiml},
        )
        for call in recorded_calls(limit)
    ]


# ---------------------------------------------------------------- outbound webhooks, from the local sink


def webhook_deliveries(limit: int = MAX_ITEMS) -> list[OutboxItem]:
    """Newest first. `text` is the raw body, exactly as signed; the headers are in `webhook`."""
    return [
        OutboxItem(
            channel="webhook",
            to=received.sink_name,
            subject=received.event_type,
            text=received.body,
            sent_at=received.received_at,
            incident_number=received.incident_number,
            id=received.item_id,
            webhook={
                "answered_status": received.answered_status,
                "event_id": received.event_id,
                "event_type": received.event_type,
                "attempt": received.attempt,
                "signature_verified": received.signature.verified,
                "subscription_id": received.signature.subscription_id,
                "signature_error": received.signature.error,
                "headers": received.headers,
            },
        )
        for received in received_webhooks(limit)
    ]


def list_outbox(
    *, channel: str | None = None, incident_number: str | None = None, to: str | None = None, limit: int = 50
) -> list[OutboxItem]:
    """Emails, Slack messages, SMS, voice calls and webhook deliveries merged, newest first (items
    without a known time, SMS among them, last)."""
    items: list[OutboxItem] = []
    if channel in (None, "email"):
        items += emails()
    if channel in (None, "slack"):
        items += slack_messages()
    if channel in (None, "sms"):
        items += sms_messages()
    if channel in (None, "voice"):
        items += voice_calls()
    if channel in (None, "webhook"):
        items += webhook_deliveries()
    if incident_number:
        items = [item for item in items if item.incident_number == incident_number.upper()]
    if to:
        wanted = _address_key(to)
        items = [item for item in items if wanted in [_address_key(part) for part in item.to.split(",")]]
    # Stable sort: within one time (or none), each source's own newest-first order is kept.
    items.sort(key=lambda item: item.sent_at or "", reverse=True)
    return items[:limit]


def _address_key(address: str) -> str:
    """Addresses compared without case, and phone numbers with or without their `+` (an unencoded
    `+` in a query string arrives as a space)."""
    return address.strip().lower().lstrip("+")
