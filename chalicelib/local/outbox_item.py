"""One message of the local outbox, as GET /local/outbox lists it, and the keys it is found by.

Every channel's recorder (SES and SNS client hooks, the Slack, voice and webhook sinks) builds an
OutboxItem when the message leaves; chalicelib/local/outbox_table.py keeps it as its JSON document.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

CHANNELS = (
    "email",
    "slack",
    "sms",
    "voice",
    "webhook",
    "teams",
    "mattermost",
    "ntfy",
    "discord",
    "google_chat",
    "pushover",
)
# The chat and push channels: the sink keeps each POST's JSON body as `payload` (chalicelib/local/channel_sink.py).
HOOK_CHANNELS = ("teams", "mattermost", "ntfy", "discord", "google_chat", "pushover")
INCIDENT_NUMBER = re.compile(r"\bINC-\d{4}-\d{1,12}\b")


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
    # Raw (MIME) emails: From, List-Unsubscribe...; a Pushover emergency: the receipt the sink answered.
    headers: dict[str, str] | None = field(default=None)
    action_links: dict[str, str] | None = field(default=None)
    # Chat and push items only: the JSON body exactly as posted (the Adaptive Card envelope, the
    # Mattermost attachment, the ntfy publish body, ...). Their action_links too: label -> URL.
    payload: Any = field(default=None)

    def as_json(self) -> dict[str, Any]:
        document = asdict(self)
        hooks = " ".join(HOOK_CHANNELS)
        for name, only_on in (
            ("webhook", "webhook"),
            ("blocks", "slack"),
            ("voice", "voice"),
            ("html", "email"),
            ("action_links", f"email {hooks}"),
            ("payload", hooks),
        ):
            if self.channel not in only_on.split():
                del document[name]
        if self.headers is None:
            del document["headers"]
        return document

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> OutboxItem:
        """The inverse of as_json: the fields it left out are None."""
        known = {f.name for f in fields(cls)}
        return cls(**{name: value for name, value in document.items() if name in known})

    def recipients(self) -> list[str]:
        """The addresses `to` names (an email's To and Cc are one comma-separated string), as compared."""
        return sorted({address_key(part) for part in self.to.split(",") if address_key(part)})


def address_key(address: str) -> str:
    """Addresses compared without case, and phone numbers with or without their `+` (an unencoded
    `+` in a query string arrives as a space)."""
    return address.strip().lower().lstrip("+")


def incident_number_in(*texts: str) -> str | None:
    """The first incident number in the first text that has one."""
    for text in texts:
        found = INCIDENT_NUMBER.search(text or "")
        if found:
            return found.group(0)
    return None
