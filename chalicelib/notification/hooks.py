"""The webhook-style channels: Teams, Mattermost, ntfy, Discord and Google Chat.

Each is a renderer (chalicelib/notification/payload_push.py, payload_chat.py) and this one sender:
the payload POSTed to the person's own URL through the delivery kernel's one POST to a customer's
URL (chalicelib/delivery/http_post.py: the target checked again right before sending, pinned to
the address the check accepted, 10 s, no redirects). ntfy takes the JSON body at the server's
root URL, with the access token as `Authorization: Bearer` when the method has one.

The answer: any 2xx is delivered; 408, 429, 5xx, a timeout or a failed connection are a provider
failure (`<TYPE>_UNAVAILABLE`: nothing delivered, so the page's queue message is retried, with
SQS's backoff, and its budget charge given back); any other answer is final (`<TYPE>_REJECTED`, a
wrong or deleted webhook URL: `notification_failed` at once with the provider's answer). Neither
the URL nor a token is ever logged or put in a result.

The local stage posts to its built-in sink instead of the person's URL (settings.channel_sink_url),
naming the real URL in `X-Tocsin-Sent-To`; the sink keeps the payload, exactly as sent, in the
local outbox.
"""

from __future__ import annotations

import json
import logging
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from chalicelib import clock
from chalicelib.delivery import http_post
from chalicelib.delivery.http_post import Answer
from chalicelib.notification import payload_chat, payload_push, pushover
from chalicelib.notification.channels import (
    CHANNEL_LABELS,
    HOOK_CHANNELS,
    ChannelName,
    DeliveryResult,
    Notification,
    Recipient,
)
from chalicelib.notification.email_links import EmailLink
from chalicelib.notification.hook_links import PageLinks, page_links
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.notification")

LABELS: dict[str, str] = {name: CHANNEL_LABELS[name] for name in HOOK_CHANNELS}
SENT_TO_HEADER = "X-Tocsin-Sent-To"


@dataclass(frozen=True)
class HookRequest:
    url: str = field(repr=False)
    body: dict[str, Any] = field(repr=False)
    headers: dict[str, str] = field(default_factory=dict, repr=False)
    form: bool = False  # Pushover takes a form; the others JSON
    sent_to: str | None = field(default=None, repr=False)  # what the local outbox names (default: the URL)
    receipt_link: EmailLink | None = None  # an emergency Pushover page: its receipt is kept for this link


def _page_body(
    channel: str, notification: Notification, links: PageLinks, topic: str, *, settings: Settings
) -> dict[str, Any]:
    if channel == "ntfy":
        return payload_push.ntfy_page(notification, topic, links)
    if channel == "teams":
        return payload_push.teams_page(notification, links)
    if channel == "discord":
        return payload_chat.discord_page(notification, links)
    if channel == "google_chat":
        return payload_chat.google_chat_page(notification, links)
    return payload_chat.mattermost_page(notification, links, settings=settings)


def _text_body(channel: str, title: str, text: str, topic: str) -> dict[str, Any]:
    if channel == "ntfy":
        return payload_push.ntfy_text(topic, title, text)
    if channel == "teams":
        return payload_push.teams_text(title, text)
    if channel == "discord":
        return payload_chat.discord_text(f"**{title}**\n{text}")
    if channel == "google_chat":
        return payload_chat.google_chat_text(f"*{title}*\n{text}")
    return payload_chat.mattermost_text(f"**{title}**\n{text}")


def _url_and_headers(channel: str, url: str, token: str | None) -> tuple[str, dict[str, str], str]:
    """(where to POST, extra headers, ntfy's topic): ntfy publishes JSON at the server's root."""
    if channel != "ntfy":
        return url, {}, ""
    server, _, topic = url.rpartition("/")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return server, headers, topic


def _pushover_page(
    notification: Notification, recipient: Recipient, token: str, now: datetime, *, settings: Settings
) -> HookRequest:
    user = recipient.hook_url or ""
    link = None
    if notification.organization_id and notification.urgency == "high":
        link = pushover.new_acknowledge_link(
            notification.organization_id, recipient.user_id, notification.incident_number, now
        )
    callback = pushover.callback_url(link, settings=settings) if link is not None else None
    form = payload_push.pushover_page(notification, token=token, user=user, callback=callback)
    api = settings.pushover_api_url
    return HookRequest(api, form, form=True, sent_to=user, receipt_link=link)


def page_request(
    channel: str, notification: Notification, recipient: Recipient, now: datetime, *, settings: Settings
) -> HookRequest:
    """The POST a page makes to the recipient's URL, with fresh single-use action links."""
    assert recipient.hook_url is not None
    if channel == "pushover":
        return _pushover_page(notification, recipient, settings.pushover_token() or "", now, settings=settings)
    url, headers, topic = _url_and_headers(channel, recipient.hook_url, recipient.hook_token)
    actions = ("acknowledge", "resolve") if channel == "ntfy" else ("acknowledge", "resolve", "escalate")
    links = page_links(notification, recipient, via=channel, actions=actions, now=now, settings=settings)
    return HookRequest(url, _page_body(channel, notification, links, topic, settings=settings), headers)


def text_request(
    channel: str, url: str, token: str | None, title: str, text: str, *, settings: Settings
) -> HookRequest:
    """A plain notice on the channel (a verification code, a handoff notice)."""
    if channel == "pushover":
        token = settings.pushover_token() or ""
        form = payload_push.pushover_text(token=token, user=url, title=title, text=text)
        return HookRequest(settings.pushover_api_url, form, form=True, sent_to=url)
    target, headers, topic = _url_and_headers(channel, url, token)
    return HookRequest(target, _text_body(channel, title, text, topic), headers)


# The settings are the caller's (read once by its entry point), passed along to the real POST.
Poster = Callable[[str, bytes, dict[str, str], bool, Settings], Answer]


def _post(url: str, body: bytes, headers: dict[str, str], allow_local: bool, settings: Settings) -> Answer:
    if allow_local:  # the local stage's own sink: a URL of its configuration, not a customer's
        return http_post.post_checked(url, body, headers, allow_local=True, settings=settings)
    return http_post.post(url, body, secret=None, headers=headers, settings=settings)


# Replaced in tests (no network): what actually POSTs.
poster: Poster = _post


def post(channel: str, request: HookRequest, now: datetime | None = None, *, settings: Settings) -> DeliveryResult:
    """POST the request (to the local sink on the local stage); never raises for a delivery problem."""
    headers = dict(request.headers)
    if request.form:
        body = urllib.parse.urlencode(request.body).encode()
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    else:
        body = json.dumps(request.body, ensure_ascii=False).encode()
        headers.setdefault("Content-Type", "application/json")
    url = request.url
    sink = settings.channel_sink_url()
    if sink is not None:
        headers[SENT_TO_HEADER] = request.sent_to or request.url
        url = f"{sink}/{channel}"
    answer = poster(url, body, headers, sink is not None, settings)
    if answer.succeeded and request.receipt_link is not None:
        receipt = pushover.receipt_of(answer.body)
        if receipt is not None:  # what the acknowledgement callback must name
            pushover.remember_receipt(request.receipt_link, receipt, now or clock.now())
    return result_of(channel, answer)


def provider_words(body: bytes) -> str | None:
    """A provider's own reason for a refusal, when its answer gives one (Pushover's `errors`,
    Discord's and Google Chat's `message`), at most 200 characters."""
    try:
        document = json.loads(body or b"null")
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    found = document.get("errors") or document.get("message") or (document.get("error") or {})
    if isinstance(found, dict):
        found = found.get("message")
    if isinstance(found, list):
        found = "; ".join(str(item) for item in found)
    return str(found)[:200] if found else None


def result_of(channel: str, answer: Answer) -> DeliveryResult:
    name = cast(ChannelName, channel)
    if answer.succeeded:
        return DeliveryResult.delivered(name)
    label = LABELS.get(channel, channel)
    code = channel.upper()
    logger.warning(
        "a chat or push provider did not take a message",
        extra={"channel": channel, "status": answer.response_code, "verdict": answer.verdict},
    )
    words = provider_words(answer.body)
    said = f"{answer.error}{f': {words}' if words else ''}"
    if answer.retryable:
        return DeliveryResult.provider_failed(name, f"{code}_UNAVAILABLE", f"{label} did not take it: {said}.")
    return DeliveryResult(name, False, error_code=f"{code}_REJECTED", message=f"{label} refused it: {said}.")


class HookChannel:
    """One webhook-style channel; the recipient carries the method's URL (and ntfy's token)."""

    def __init__(self, name: str, *, settings: Settings) -> None:
        self.name = cast(ChannelName, name)
        self._settings = settings

    def send(self, notification: Notification, recipient: Recipient) -> DeliveryResult:
        if not recipient.hook_url:
            return DeliveryResult.contact_missing(self.name, f"{LABELS.get(self.name, self.name)} webhook")
        if self.name == "pushover" and not self._settings.pushover_token():
            return _pushover_not_configured()
        now = notification.at or clock.now()
        request = page_request(self.name, notification, recipient, now, settings=self._settings)
        return post(self.name, request, now, settings=self._settings)

    def send_text(self, url: str, token: str | None, title: str, text: str) -> DeliveryResult:
        if self.name == "pushover" and not self._settings.pushover_token():
            return _pushover_not_configured()
        request = text_request(self.name, url, token, title, text, settings=self._settings)
        return post(self.name, request, settings=self._settings)


def _pushover_not_configured() -> DeliveryResult:
    return DeliveryResult(
        "pushover", False, error_code="PUSHOVER_NOT_CONFIGURED", message="No Pushover application token is configured."
    )


def hook_channels(*, settings: Settings) -> dict[str, HookChannel]:
    return {name: HookChannel(name, settings=settings) for name in LABELS}


def destination_of(
    organization_id: str, user_id: str, contact_method_id: str, *, settings: Settings
) -> tuple[str, str | None] | None:
    """The (URL, token) of a person's verified webhook-style method as it is now; None when it is
    gone, unverified, or not such a method."""
    from chalicelib.contact.service import profile
    from chalicelib.directory.users import get_user
    from chalicelib.errors import NotFound

    try:
        user = get_user(organization_id=organization_id, user_id=user_id)
    except NotFound:
        return None
    method = profile(organization_id, user).method(contact_method_id)
    if method is None or not method.verified:
        return None
    destination = method.destination(organization_id, user_id, settings=settings)
    return (destination.url, destination.token) if destination is not None else None


def send_to_method(
    channel: str,
    organization_id: str | None,
    user_id: str | None,
    contact_method_id: str,
    title: str,
    text: str,
    *,
    settings: Settings,
) -> DeliveryResult:
    """A plain notice (a handoff, a page digest) to a person's webhook-style method, named by its id."""
    found = (
        destination_of(organization_id or "", user_id or "", contact_method_id, settings=settings)
        if organization_id
        else None
    )
    if found is None:
        return DeliveryResult.contact_missing(
            cast(ChannelName, channel), f"verified {LABELS.get(channel, channel)} method"
        )
    return HookChannel(channel, settings=settings).send_text(found[0], found[1], title, text)
