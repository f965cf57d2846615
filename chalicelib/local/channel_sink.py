"""The local stage's chat and push provider: Teams, Mattermost, ntfy, Discord and Google Chat pages
land here instead of the person's URL (settings.channel_sink_url), and their buttons can be pressed.

`receive` keeps the POSTed JSON body exactly as sent in the local outbox (channel = the method
type, `to` = the URL it was meant for, `payload` = the body, `action_links` = its buttons' URLs)
and answers as the provider does: ntfy 200 with the message, Teams 202, Discord 204, Google
Chat 200 with the message's name, Mattermost 200 `ok`. A body that is not a JSON object is refused
(400), as the providers refuse it.

`press` plays the provider's side of an action on a kept message: the Mattermost button's POST of
its `integration.context`, the ntfy action button's POST to its URL, Pushover's acknowledgement
callback of an emergency page (with the receipt the sink answered), and for Teams, Discord and
Google Chat the person's press on the confirmation page their link opens. Each goes through the
same checks and action as the public routes (chalicelib/paging/link_actions.py), so a press
proves the signature, the single use and the person's role.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalicelib import clock
from chalicelib.errors import NotFound, ValidationFailed
from chalicelib.local import outbox_table
from chalicelib.local.outbox_item import HOOK_CHANNELS, OutboxItem, incident_number_in
from chalicelib.notification.hook_links import LABELS
from chalicelib.paging import link_actions
from chalicelib.paging.respond import Outcome
from chalicelib.settings import get_settings

PUSHOVER_RECEIPT = "X-Pushover-Receipt"
_MD_LINK = re.compile(r"\[([^\]]+)\]\((\S+?)\)")


def check_channel(channel: str) -> str:
    if channel not in HOOK_CHANNELS:
        raise NotFound(f"No local sink for {channel[:40]!r}; one of {', '.join(HOOK_CHANNELS)}.")
    return channel


def _texts(channel: str, body: dict[str, Any]) -> tuple[str | None, str, dict[str, str]]:
    """(subject, text, action links by label) of a body as each provider shows it."""
    if channel == "ntfy":
        links = {str(a.get("label")): str(a.get("url")) for a in body.get("actions") or [] if isinstance(a, dict)}
        return body.get("title"), str(body.get("message") or ""), links
    if channel == "teams":
        card = ((body.get("attachments") or [{}])[0] or {}).get("content") or {}
        blocks = [b for b in card.get("body") or [] if isinstance(b, dict)]
        lines = [str(b.get("text")) for b in blocks if b.get("type") == "TextBlock"]
        for fact_set in (b for b in blocks if b.get("type") == "FactSet"):
            lines += [f"{f.get('title')}: {f.get('value')}" for f in fact_set.get("facts") or []]
        links = {str(a.get("title")): str(a.get("url")) for a in card.get("actions") or [] if isinstance(a, dict)}
        return (lines[0] if lines else None), "\n".join(lines[1:]), links
    if channel == "discord":
        embed = (body.get("embeds") or [{}])[0] or {}
        description = str(embed.get("description") or "")
        text = "\n".join(part for part in (str(body.get("content") or ""), description) if part)
        return embed.get("title"), text, dict(_MD_LINK.findall(description))
    if channel == "google_chat":
        card = ((body.get("cardsV2") or [{}])[0] or {}).get("card") or {}
        links = {}
        for section in card.get("sections") or []:
            for widget in section.get("widgets") or []:
                for button in (widget.get("buttonList") or {}).get("buttons") or []:
                    links[str(button.get("text"))] = str(
                        ((button.get("onClick") or {}).get("openLink") or {}).get("url")
                    )
        return (card.get("header") or {}).get("title"), str(body.get("text") or ""), links
    if channel == "pushover":
        links = {"Open incident": str(body.get("url") or "")}
        if body.get("callback"):
            links["Acknowledge"] = str(body["callback"])
        return body.get("title"), str(body.get("message") or ""), links
    attachment = (body.get("attachments") or [{}])[0] or {}
    text = "\n".join(part for part in (str(body.get("text") or ""), str(attachment.get("text") or "")) if part)
    return attachment.get("title"), text, {}


@dataclass(frozen=True)
class Received:
    item: OutboxItem
    status: int
    answer: dict[str, Any] | str | None


def receive(*, channel: str, sent_to: str, body: Any, now: datetime) -> Received:
    """Keep one POST the way it was sent; the provider's answer."""
    check_channel(channel)
    if not isinstance(body, dict):
        raise ValidationFailed("The body must be a JSON object, as the provider requires.")
    subject, text, links = _texts(channel, body)
    item_id = uuid.uuid4().hex
    # Pushover answers an emergency (priority 2) with a receipt its acknowledgement callback names.
    receipt = uuid.uuid4().hex[:30] if channel == "pushover" and str(body.get("priority")) == "2" else None
    item = OutboxItem(
        channel=channel,
        to=sent_to,
        subject=str(subject) if subject is not None else None,
        text=text,
        sent_at=clock.isoformat(now),
        incident_number=incident_number_in(str(subject or ""), text),
        id=item_id,
        action_links=links,
        payload=body,
        headers={PUSHOVER_RECEIPT: receipt} if receipt else None,
    )
    outbox_table.record(item)
    if channel == "ntfy":
        answer = {"id": item_id, "time": int(now.timestamp()), "event": "message", "topic": body.get("topic")}
        return Received(item, 200, answer)
    if channel == "teams":
        return Received(item, 202, None)
    if channel == "discord":
        return Received(item, 204, None)
    if channel == "google_chat":
        return Received(item, 200, {"name": f"spaces/LOCAL/messages/{item_id}", "text": body.get("text")})
    if channel == "pushover":
        return Received(item, 200, {"status": 1, "request": item_id, **({"receipt": receipt} if receipt else {})})
    return Received(item, 200, "ok")


@dataclass(frozen=True)
class Pressed:
    channel: str
    message_id: str
    action: str
    outcome: Outcome
    answer: dict[str, Any]  # what the provider got back (Mattermost's update; the tap's JSON)


def _mattermost_context(item: OutboxItem, action: str) -> Any:
    attachments = (item.payload or {}).get("attachments") or []
    for attachment in attachments:
        for button in attachment.get("actions") or []:
            if button.get("id") == action:
                return (button.get("integration") or {}).get("context")
    return None


def press(*, channel: str, message_id: str, action: str, now: datetime) -> Pressed:
    """Press `action` ("acknowledge", "resolve", "escalate") on a kept message, as the provider
    would: NotFound for an unknown message or a button it does not have; whatever the public
    route refuses with (401 forged or expired, 409 used already)."""
    check_channel(channel)
    item = outbox_table.find(channel, message_id)
    if item is None:
        raise NotFound(f"The local {channel} sink has no message {message_id[:40]}.")
    label = LABELS.get(action)
    if channel == "mattermost":
        context = _mattermost_context(item, action)
        if context is None:
            raise NotFound(f"That message has no {action} button.")
        link = link_actions.verify_mattermost(context, now=now, settings=get_settings())
        outcome = link_actions.act(link, now, settings=get_settings())
        return Pressed(channel, message_id, action, outcome, link_actions.mattermost_answer(outcome))
    url = (item.action_links or {}).get(label or "")
    if not url:
        raise NotFound(f"That message has no {action} button.")
    if channel == "pushover":  # the acknowledgement Pushover posts to the page's callback
        form = {
            "receipt": (item.headers or {}).get(PUSHOVER_RECEIPT, ""),
            "acknowledged": "1",
            "acknowledged_at": str(int(now.timestamp())),
            "acknowledged_by": str((item.payload or {}).get("user") or ""),
            "acknowledged_by_device": "local",
        }
        token = url.rstrip("/").rsplit("/", 1)[-1]
        outcome = link_actions.act(
            link_actions.verify_pushover(token, form, now=now, settings=get_settings()), now, settings=get_settings()
        )
        answer = {"done": outcome.done, "message": outcome.message, "incident_number": outcome.incident_number}
        return Pressed(channel, message_id, action, outcome, answer)
    token = url.rstrip("/").rsplit("/", 1)[-1]
    # ntfy's button POSTs the URL; the others' open the confirmation page, whose button acts.
    channels = link_actions.TAP_CHANNELS if channel == "ntfy" else (channel,)
    outcome = link_actions.act(
        link_actions.verify_link(token, channels=channels, now=now, settings=get_settings()),
        now,
        settings=get_settings(),
    )
    answer = {"done": outcome.done, "message": outcome.message, "incident_number": outcome.incident_number}
    return Pressed(channel, message_id, action, outcome, answer)
