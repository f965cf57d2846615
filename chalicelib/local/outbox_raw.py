"""The local outbox's reading of a SendRawEmail message (chalicelib/local/outbox.py): moto keeps
the raw MIME, the outbox shows what a mail client would (subject, parts, chosen headers, Date)."""

from __future__ import annotations

from email.utils import parsedate_to_datetime
from typing import Any

from chalicelib import clock

_SHOWN_HEADERS = ("From", "List-Unsubscribe", "List-Unsubscribe-Post", "Auto-Submitted")


def from_raw(message_id: str, source: str, raw_data: str) -> dict[str, Any]:
    """A SendRawEmail message in the shape of a SendEmail one: subject, HTML part (else text), To."""
    import email
    from email.policy import default

    parsed = email.message_from_string(raw_data, policy=default)
    part = parsed.get_body(preferencelist=("html", "plain"))
    body = part.get_content() if part is not None else ""
    plain = parsed.get_body(preferencelist=("plain",))
    to = [str(address) for address in parsed.get_all("To", [])]
    return {
        "id": message_id,
        "source": source,
        "subject": str(parsed.get("Subject", "")),
        "body": str(body),
        "destinations": {"ToAddresses": to},
        # A raw email keeps its own text part and headers: show what a mail client would.
        "text": str(plain.get_content()).strip() if plain is not None else None,
        "headers": {name: str(parsed[name]) for name in _SHOWN_HEADERS if parsed[name] is not None},
        "sent_at": _date_header(parsed["Date"]),
    }


def _date_header(value: Any) -> str | None:
    """A raw email's own Date header, as the outbox writes times; None when absent or unreadable."""
    try:
        return clock.isoformat(parsedate_to_datetime(str(value))) if value else None
    except (TypeError, ValueError):
        return None
