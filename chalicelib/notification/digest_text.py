"""What a page digest says: the incidents a person was not paged for one by one, most urgent first. Pure.

A person paged past their burst (chalicelib/notification/page_budget.py) gets one message at the
end of the window instead of one per incident: "Tocsin: 12 more incidents: INC-2026-0042,
INC-2026-0043, ... (SEV1 first)". High urgency first, then by severity (SEV0 first), then the
oldest first. It goes out as a notice on the page's channel (chalicelib/notification/notices.py):
an email or Slack message lists each incident with its severity and title; the SMS (one GSM-7
SMS) and the call give the count and as many numbers as fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from chalicelib.notification.notices import Notice
from chalicelib.notification.sms import SMS_LIMIT, gsm7, septets
from chalicelib.severity import SEVERITIES

MAX_LISTED = 50  # lines of an email or Slack digest; the rest is "and N more"


@dataclass(frozen=True)
class DigestEntry:
    incident_number: str
    title: str
    severity: str
    urgency: str
    opened_at: datetime


def _rank(entry: DigestEntry) -> tuple[int, int, datetime, str]:
    severity = SEVERITIES.index(entry.severity) if entry.severity in SEVERITIES else len(SEVERITIES)
    return (0 if entry.urgency == "high" else 1, severity, entry.opened_at, entry.incident_number)


def ordered(entries: Sequence[DigestEntry]) -> list[DigestEntry]:
    """High urgency first, then the most severe, then the oldest."""
    return sorted(entries, key=_rank)


def count_words(count: int) -> str:
    return f"{count} more incident{'s' if count != 1 else ''}"


def first_note(entries: Sequence[DigestEntry]) -> str:
    """`(SEV1 first)`, or `(SEV1)` for one incident."""
    top = ordered(entries)[0].severity
    return f"({top} first)" if len(entries) > 1 else f"({top})"


def headline(entries: Sequence[DigestEntry], *, listed: int | None = None) -> str:
    """`12 more incidents: INC-1, INC-2 and 10 others (SEV1 first)`: every number unless `listed` cuts it."""
    items = ordered(entries)
    shown = items if listed is None else items[:listed]
    numbers = ", ".join(entry.incident_number for entry in shown)
    rest = len(items) - len(shown)
    others = f" and {rest} other{'s' if rest != 1 else ''}" if rest else ""
    return f"{count_words(len(items))}: {numbers}{others} {first_note(items)}"


def short_text(entries: Sequence[DigestEntry]) -> str:
    """`Tocsin: <headline>` in one GSM-7 SMS: as many numbers as fit (at least one), the rest counted."""
    for listed in range(len(entries), 0, -1):
        text = gsm7(f"Tocsin: {headline(entries, listed=listed)}")
        if septets(text) <= SMS_LIMIT:
            return text
    return gsm7(f"Tocsin: {count_words(len(entries))} {first_note(entries)}")[:SMS_LIMIT]


def lines(entries: Sequence[DigestEntry]) -> list[str]:
    """`[SEV1][high] INC-2026-0042: Checkout down`, one per incident, MAX_LISTED at most."""
    items = ordered(entries)
    shown = [
        f"[{entry.severity}][{entry.urgency}] {entry.incident_number}: {' '.join(entry.title.split())}"
        for entry in items[:MAX_LISTED]
    ]
    if len(items) > MAX_LISTED:
        shown.append(f"... and {len(items) - MAX_LISTED} more.")
    return shown


def notice(entries: Sequence[DigestEntry], *, recipient_name: str | None, url: str, now: datetime) -> Notice:
    """The digest as a notice: subject, the list, the SMS-sized text, a link to the incident list."""
    count = len(entries)
    text = (
        f"You were paged for the incidents before these; to keep your phone usable, these {count} came "
        f"together:\n\n" + "\n".join(lines(entries))
        if count > 1
        else "You were paged for the incidents before this one; it came after the burst:\n\n" + lines(entries)[0]
    )
    return Notice(
        subject=f"[Tocsin] {headline(entries, listed=3)}",
        text=text,
        short_text=short_text(entries),
        recipient_name=recipient_name,
        url=url,
        link_label="Open the incidents",
        sent_at=now,
    )
