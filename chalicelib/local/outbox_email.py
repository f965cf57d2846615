"""An email as the local outbox lists it, built from what was handed to SES (SendEmail or
SendRawEmail), the moment it was sent (chalicelib/local/outbox_recording.py).

It shows what SES on the emulator keeps and what a reader would see: the HTML part (else the
text) as `html`, the text read from it (a raw email's own text part when it has one), the time
from the email's `<time datetime>` footer (else a raw email's Date header), the incident number
from its subject (else its body), and a page email's one-click links by label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import unescape
from typing import Any

from chalicelib.local.outbox_item import OutboxItem, incident_number_in
from chalicelib.local.outbox_raw import from_raw

_TIME_ATTRIBUTE = re.compile(r'<time datetime="([^"]+)"')
_TAG = re.compile(r"<[^>]+>")
_LINK = re.compile(r'<a\s[^>]*href="([^"]*)"[^>]*>(.*?)</a>', re.IGNORECASE | re.DOTALL)
# A page email's one-click links (notification/email_links.py): <a href="…/email-actions/…">Label</a>.
_ACTION_LINK = re.compile(r'<a href="([^"]*/email-actions/[^"]+)"[^>]*>([^<]+)</a>')
_BLOCK_END = re.compile(r"</(p|h[1-6]|div|li|tr)>|<br\s*/?>", re.IGNORECASE)


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


def email_item(message: Mapping[str, Any]) -> OutboxItem:
    """`message`: id, subject, body (the HTML part, else the text), destinations (ToAddresses,
    CcAddresses) and, for a raw email, text, headers and sent_at."""
    destinations = message.get("destinations") or {}
    to = [*destinations.get("ToAddresses", []), *destinations.get("CcAddresses", [])]
    body = str(message.get("body") or "")
    subject = str(message.get("subject") or "")
    at = _TIME_ATTRIBUTE.search(body)
    return OutboxItem(
        channel="email",
        to=", ".join(str(address) for address in to),
        subject=subject,
        text=message.get("text") or html_to_text(body),
        sent_at=unescape(at.group(1)) if at else message.get("sent_at"),
        incident_number=incident_number_in(subject, body),
        id=str(message.get("id") or ""),
        html=body,
        action_links={unescape(label): unescape(url) for url, label in _ACTION_LINK.findall(body)},
        headers=message.get("headers"),
    )


def from_send_email(params: Mapping[str, Any], message_id: str) -> OutboxItem:
    """SendEmail's parameters: SES keeps the HTML part when there is one, else the text."""
    content = params.get("Message") or {}
    parts = content.get("Body") or {}
    part = parts.get("Html") or parts.get("Text") or {}
    return email_item(
        {
            "id": message_id,
            "subject": (content.get("Subject") or {}).get("Data"),
            "body": part.get("Data"),
            "destinations": params.get("Destination") or {},
        }
    )


def from_send_raw_email(params: Mapping[str, Any], message_id: str) -> OutboxItem:
    """SendRawEmail's parameters: the MIME message, read as a mail client would (outbox_raw.py)."""
    data = (params.get("RawMessage") or {}).get("Data") or b""
    raw = data.decode("utf-8", errors="replace") if isinstance(data, bytes | bytearray) else str(data)
    return email_item(from_raw(message_id, str(params.get("Source") or ""), raw))
