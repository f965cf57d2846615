"""A notice email to one subscriber: the words (templates email/status_notice.{txt,html}) and the
raw MIME message SES sends (SendRawEmail, because SendEmail cannot set headers).

Every notice carries the subscriber's own signed unsubscribe link in its footer and in the
headers mail clients read for their own unsubscribe button (RFC 2369 `List-Unsubscribe`, and RFC
8058 `List-Unsubscribe-Post: List-Unsubscribe=One-Click`: the client POSTs that body to the URL,
which the unsubscribe route accepts without a page in between).

SES answers are sorted into two kinds: `retry` (throttled, unreachable, a 5xx: the same email may
go later) and `refused` (the address or message is rejected: sending it again would not help).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, formataddr, parseaddr
from typing import Any, Literal

from chalicelib import aws, clock, templates
from chalicelib.budget import service as budget
from chalicelib.budget.rules import Send
from chalicelib.settings import Settings
from chalicelib.subscriber.notice_content import (
    INCIDENT_STATUS_LABELS,
    Notice,
    format_moment,
    format_window,
    latest_update,
    subject_line,
)

logger = logging.getLogger("tocsin.subscriber")
ONE_CLICK = "List-Unsubscribe=One-Click"
# Badge colours behind dark text (contrast over 7:1); the word itself always says the status.
_BADGES = {
    "investigating": ("#ffebe9", "#cf222e"),
    "identified": ("#fff1e5", "#bc4c00"),
    "monitoring": ("#ddf4ff", "#0969da"),
    "resolved": ("#dafbe1", "#1a7f37"),
    "scheduled": ("#ddf4ff", "#0969da"),
    "started": ("#fff8c5", "#9a6700"),
    "completed": ("#dafbe1", "#1a7f37"),
    "cancelled": ("#eaeef2", "#57606a"),
    "rescheduled": ("#ddf4ff", "#0969da"),
}
# Throttling and the like: SES may take the same email later.
_RETRYABLE_SES_CODES = frozenset({"Throttling", "ThrottlingException", "ServiceUnavailable", "InternalFailure"})


@dataclass(frozen=True)
class RenderedNotice:
    subject: str
    text: str
    html: str


@dataclass(frozen=True)
class SendOutcome:
    result: Literal["sent", "retry", "refused"]
    detail: str | None = None  # the SES message id when sent, the error otherwise


def _status(notice: Notice) -> tuple[str, str | None, str]:
    """(the status word, a sentence saying what it means when the notice has no text of its own,
    the badge key)."""
    if notice.kind == "incident":
        status = str(notice.subject.get("status") or "")
        return INCIDENT_STATUS_LABELS.get(status, status.capitalize()), None, status
    labels = {
        "scheduled": "Scheduled",
        "rescheduled": "Rescheduled",
        "started": "In progress",
        "completed": "Completed",
        "cancelled": "Cancelled",
    }
    notes = {
        "scheduled": "This maintenance is planned. We will email you again when it starts and when it ends.",
        "rescheduled": "This maintenance has new times, shown above. We will email you again when it "
        "starts and when it ends.",
        "started": "This maintenance has started. We will email you again when it ends.",
        "completed": "This maintenance is over.",
        "cancelled": "This maintenance has been cancelled: it will not take place.",
    }
    if notice.change == "rescheduled" and notice.subject.get("status") == "in_progress":
        notes["rescheduled"] = (
            "This maintenance is under way and has a new end, shown above. We will email you again when it ends."
        )
    return labels[notice.change], notes[notice.change], notice.change


def words_list(names: Sequence[str]) -> str:
    """`A`, `A and B`, `A, B and C`; empty for none."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def render(notice: Notice, *, unsubscribe_url: str, subscribed_to: Sequence[str] = ()) -> RenderedNotice:
    """Subject, text and HTML of one subscriber's notice; `subscribed_to` names the components the
    subscriber chose (empty: the whole page)."""
    label, note, badge = _status(notice)
    background, border = _BADGES.get(badge, ("#eaeef2", "#57606a"))
    update = latest_update(notice)
    window = None
    if notice.kind == "maintenance":
        window = format_window(str(notice.subject["scheduled_start"]), str(notice.subject["scheduled_end"]))
    subject = subject_line(notice)
    values: dict[str, Any] = {
        "subject": subject,
        "page_name": notice.page_name,
        "page_url": notice.page_url,
        "title": notice.title,
        "status_label": label,
        "status_note": note,
        "badge_background": background,
        "badge_border": border,
        "window": window,
        "components": notice.component_names,
        "update_body": str(update["body"]) if update else None,
        "update_at": format_moment(str(update["published_at"])) if update else None,
        "update_at_iso": str(update["published_at"]) if update else None,
        "subscribed_to": words_list(subscribed_to),
        "unsubscribe_url": unsubscribe_url,
    }
    return RenderedNotice(
        subject=subject,
        text=templates.render("email/status_notice.txt", **values),
        html=templates.render("email/status_notice.html", **values),
    )


def mime_message(rendered: RenderedNotice, *, sender: str, to: str, page_name: str, unsubscribe_url: str) -> bytes:
    """multipart/alternative (text, then HTML) with the unsubscribe headers; From shows the page's
    name in front of the service's sender address."""
    message = EmailMessage(policy=SMTP)
    _, address = parseaddr(sender)
    message["From"] = formataddr((" ".join(f"{page_name} status".split()), address or sender))
    message["To"] = Address(addr_spec=to)
    message["Subject"] = rendered.subject
    message["List-Unsubscribe"] = f"<{unsubscribe_url}>"
    message["List-Unsubscribe-Post"] = ONE_CLICK
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation auto-replies, please
    message["Date"] = format_datetime(clock.now())  # RFC 5322 asks for one; mail clients sort by it
    message.set_content(rendered.text)
    message.add_alternative(rendered.html, subtype="html")
    return message.as_bytes()


def send(raw: bytes, *, sender: str, to: str, client: Any | None = None) -> SendOutcome:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        answer = (client or aws.client("ses")).send_raw_email(
            Source=sender, Destinations=[to], RawMessage={"Data": raw}
        )
    except ClientError as error:
        code = str(error.response.get("Error", {}).get("Code") or "Unknown")
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 400)
        retry = code in _RETRYABLE_SES_CODES or status >= 500
        logger.warning("SES refused a subscriber notice", extra={"error_code": code, "retry": retry})
        return SendOutcome("retry" if retry else "refused", f"SES_{code}")
    except BotoCoreError as error:
        logger.warning("SES unreachable", extra={"error": type(error).__name__})
        return SendOutcome("retry", f"SES unreachable: {type(error).__name__}")
    return SendOutcome("sent", str(answer.get("MessageId") or "") or None)


def send_notice(
    notice: Notice,
    *,
    to: str,
    unsubscribe_url: str,
    subscribed_to: Sequence[str] = (),
    organization_id: str | None = None,
    client: Any | None = None,
    settings: Settings,
) -> SendOutcome:
    """The notice within the outbound budget (per subscriber mailbox, per organization): a refusal
    is `refused` (logged, never retried); an SES failure worth retrying gives its charge back."""
    rendered = render(notice, unsubscribe_url=unsubscribe_url, subscribed_to=subscribed_to)
    sender = settings.ses_sender
    try:
        raw = mime_message(rendered, sender=sender, to=to, page_name=notice.page_name, unsubscribe_url=unsubscribe_url)
    except (ValueError, TypeError) as error:  # an address the email package will not write
        return SendOutcome("refused", f"unwritable message: {error}"[:300])
    decision = budget.spend(Send("email", to, "subscriber_notice", organization_id), clock.now(), settings=settings)
    if decision.refusal is not None:
        logger.warning("subscriber notice not sent: over the outbound budget", extra={"limit": decision.refusal.limit})
        return SendOutcome("refused", f"OVER_BUDGET: {decision.refusal.message}")
    outcome = send(raw, sender=sender, to=to, client=client)
    if outcome.result == "retry":
        decision.refund()
    return outcome
