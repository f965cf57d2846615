"""Plain notices to one person on one channel: words that are not about an incident (a handoff
notice telling someone they go on call or come off call).

A notice is a subject, a few plain-text lines and an SMS-sized short text, plus an optional link
to a page of the responder console. `send_notice` sends it to one address on one channel and,
like the channels, never raises for a delivery problem: it reports a DeliveryResult (missing
contact: the address cannot be used on that channel; provider failure: worth retrying later).

- email: SES SendEmail with a text and an HTML part (templates email/notice.txt and .html);
- slack: chat.postMessage to the Slack user id, the subject and text as one mrkdwn section
  (escaped) and the subject as the fallback text (`slack.post_message` makes the call);
- sms: the short text as one GSM-7 SMS through SNS;
- voice: a call that says the short text twice.
"""

from __future__ import annotations

import logging
import re
import urllib.parse
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import aws, clock, templates, zones
from chalicelib.budget.rules import Purpose
from chalicelib.notification import hooks, slack
from chalicelib.notification.channels import HOOK_CHANNELS, PROVIDER_ERROR, ChannelName, DeliveryResult, one_line
from chalicelib.notification.gate import send_within_budget
from chalicelib.notification.sms import SMS_LIMIT, SnsSmsChannel, gsm7, is_phone_number, shorten
from chalicelib.notification.voice import TwilioVoiceChannel, say_twiml
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.notification")

MAX_SUBJECT = 200
# A Slack section's text holds 3000 characters as sent (escapes included): the subject (at most
# 1000 escaped), the text (at most MAX_SLACK_TEXT escaped) and the link fit.
MAX_SLACK_TEXT = 1800
_PARTIAL_ENTITY = re.compile(r"&[a-z]*$")
VOICE_REPEATS = 2
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_NAMES = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_DAYS = {name[:3]: name for name in _DAY_NAMES}
_MONTHS = {name[:3]: name for name in _MONTH_NAMES}
# A date as the short texts write it: "Mon 23 Nov".
_SHORT_DATE = re.compile(rf"\b({'|'.join(_DAYS)}) (\d{{1,2}}) ({'|'.join(_MONTHS)})\b")


@dataclass(frozen=True)
class Notice:
    subject: str
    text: str
    short_text: str  # at most 160 GSM-7 characters (it is cut to fit anyway)
    recipient_name: str | None = None
    url: str | None = None  # a page of the responder console, never the JSON API
    link_label: str = "Open in Tocsin"
    sent_at: datetime | None = None
    time_zone: str | None = None  # the recipient's, for `sent_at` (None: UTC, named)


@dataclass(frozen=True)
class RenderedEmail:
    subject: str
    text: str
    html: str


def schedule_url(schedule_id: str, *, settings: Settings) -> str:
    """The schedule's page in the responder console."""
    return f"{settings.app_url()}/schedules/{urllib.parse.quote(schedule_id, safe='')}"


def subject_of(notice: Notice) -> str:
    return one_line(notice.subject, MAX_SUBJECT)


def render_email(notice: Notice) -> RenderedEmail:
    values = {
        "recipient_name": notice.recipient_name,
        "subject": subject_of(notice),
        "text": notice.text.strip(),
        "url": notice.url,
        "link_label": notice.link_label,
        "sent_at": zones.message_time(notice.sent_at, notice.time_zone) if notice.sent_at is not None else None,
        "sent_at_iso": clock.isoformat(notice.sent_at) if notice.sent_at is not None else None,
    }
    return RenderedEmail(
        subject=subject_of(notice),
        text=templates.render("email/notice.txt", **values),
        html=templates.render("email/notice.html", **values),
    )


def render_slack(notice: Notice, slack_user_id: str) -> dict[str, Any]:
    """The chat.postMessage arguments: the subject (bold) and the text in one mrkdwn section,
    then the link; every value escaped, so a name cannot mention @channel or forge a link."""
    e = slack.escape
    subject = e(subject_of(notice))
    body = f"*{subject}*\n{_escaped_within(notice.text.strip(), MAX_SLACK_TEXT)}"
    if notice.url:
        body += f"\n<{e(notice.url)}|{e(notice.link_label)}>"
    return {
        "channel": slack_user_id,
        "text": subject,
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": body}}],
        "unfurl_links": False,
    }


def _escaped_within(text: str, limit: int) -> str:
    """`text` mrkdwn-escaped in at most `limit` characters, cut (never inside an escape) with "…"."""
    escaped = slack.escape(text)
    if len(escaped) <= limit:
        return escaped
    return _PARTIAL_ENTITY.sub("", escaped[: limit - 1]) + "…"


def sms_text(notice: Notice) -> str:
    """The short text as one SMS: on one line, in the GSM-7 alphabet, at most 160 characters."""
    return shorten(gsm7(notice.short_text), SMS_LIMIT)


def voice_speech(notice: Notice) -> str:
    """`Tocsin: you are on call for X from Mon 23 Nov 09:00 (Europe/Berlin).` said as `This is
    Tocsin. You are on call for X from Monday 23 November 09:00 (Europe Berlin).`"""
    words = " ".join(notice.short_text.split()).removeprefix("Tocsin:").strip()
    words = _SHORT_DATE.sub(lambda m: f"{_DAYS[m.group(1)]} {int(m.group(2))} {_MONTHS[m.group(3)]}", words)
    words = words.replace("/", " ").replace("_", " ")
    return f"This is Tocsin. {words[:1].upper()}{words[1:]}"


def send_notice(
    channel: ChannelName,
    address: str,
    notice: Notice,
    *,
    organization_id: str | None = None,
    user_id: str | None = None,
    now: datetime | None = None,
    purpose: Purpose = "notice",
    ses_client: Any | None = None,
    settings: Settings,
) -> DeliveryResult:
    """Send `notice` to `address` (an email, a Slack user id, an E.164 number, or a webhook-style
    method's id) on `channel`, within the outbound budget of the organization and person it is for
    (chalicelib/notification/gate.py)."""
    if not address or (channel in ("sms", "voice") and not is_phone_number(address)):
        return _unsendable(channel)
    if channel in HOOK_CHANNELS:
        text = notice.text + (f"\n{notice.link_label}: {notice.url}" if notice.url else "")
        return send_within_budget(
            channel=channel,
            destination=address,
            purpose=purpose,
            organization_id=organization_id,
            user_id=user_id,
            now=now or clock.now(),
            deliver=lambda: hooks.send_to_method(
                channel, organization_id, user_id, address, notice.subject, text, settings=settings
            ),
            settings=settings,
        )
    return send_within_budget(
        channel=channel,
        destination=address,
        purpose=purpose,
        organization_id=organization_id,
        user_id=user_id,
        now=now or clock.now(),
        deliver=lambda: _send(channel, address, notice, ses_client, settings=settings),
        settings=settings,
    )


def _unsendable(channel: ChannelName) -> DeliveryResult:
    what = {"email": "email address", "slack": "Slack user id"}.get(channel, "phone number")
    return DeliveryResult.contact_missing(channel, what)


def _send(
    channel: ChannelName, address: str, notice: Notice, ses_client: Any | None, *, settings: Settings
) -> DeliveryResult:
    if channel == "email":
        return _email(address, notice, ses_client, settings=settings)
    if channel == "slack":
        return slack.post_message(render_slack(notice, address), settings=settings)
    if channel == "sms":
        return SnsSmsChannel(settings=settings).send_text(address, sms_text(notice))
    return TwilioVoiceChannel(settings=settings).call(address, say_twiml(voice_speech(notice), times=VOICE_REPEATS))


def _email(address: str, notice: Notice, client: Any | None, *, settings: Settings) -> DeliveryResult:
    from botocore.exceptions import BotoCoreError, ClientError

    rendered = render_email(notice)
    try:
        response = (client or aws.client("ses")).send_email(
            Source=settings.ses_sender,
            Destination={"ToAddresses": [address]},
            Message={
                "Subject": {"Data": rendered.subject, "Charset": "UTF-8"},
                "Body": {
                    "Text": {"Data": rendered.text, "Charset": "UTF-8"},
                    "Html": {"Data": rendered.html, "Charset": "UTF-8"},
                },
            },
        )
    except ClientError as error:
        code = str(error.response.get("Error", {}).get("Code") or "Unknown")
        logger.warning("SES refused a notice", extra={"error_code": code})
        return DeliveryResult.provider_failed("email", f"SES_{code}", f"SES refused the email: {code}")
    except BotoCoreError as error:
        logger.warning("SES unreachable", extra={"error": type(error).__name__})
        return DeliveryResult.provider_failed("email", PROVIDER_ERROR, f"SES could not be reached: {error}")
    return DeliveryResult.delivered("email", str(response.get("MessageId") or "") or None)
