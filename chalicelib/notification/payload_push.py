"""What a page posts to ntfy and to a Microsoft Teams Workflows webhook. Pure: no I/O.

ntfy: the JSON publish body (https://docs.ntfy.sh/publish/#publish-as-json), POSTed to the
server's root URL: `topic`, `title`, `message` (the server refuses more than 4096 bytes by
default), `priority` 5 ("urgent": breaks through do-not-disturb on Android) for high urgency and 3
(default) for low, `tags` (an emoji shortcode and the severity), `click` (the incident's console
page) and at most 3 `actions`: `http` buttons that POST to Tocsin's signed single-use action URLs
(acknowledge, resolve) and a `view` button opening the incident.

Teams: the Workflows ("When a Teams webhook request is received") envelope, a `message` whose one
attachment is an Adaptive Card (version 1.4, what Teams renders everywhere): the headline, a
FactSet (severity, urgency, service, assignee, opened), the message and description, and
`Action.OpenUrl` buttons to the signed action pages (a GET shows, a POST acts: a card button
cannot POST with the person's proof) and to the console and runbook. Teams refuses a message
over 28 KB; the card's texts are capped well under it.
"""

from __future__ import annotations

from typing import Any

from chalicelib import zones
from chalicelib.notification import page_facts
from chalicelib.notification.channels import Notification, assignee_label, one_line
from chalicelib.notification.hook_links import LABELS, PageLinks

NTFY_MESSAGE_BYTES = 4096
NTFY_TITLE = 250
NTFY_MAX_ACTIONS = 3
NTFY_HIGH_PRIORITY = 5
NTFY_LOW_PRIORITY = 3

CARD_VERSION = "1.4"
CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
TEAMS_MAX_BYTES = 28 * 1024
CARD_TITLE = 300
CARD_TEXT = 2000
CARD_FACT = 200
CARD_LABELS = 500
CARD_MAX_ACTIONS = 6  # Teams' host config shows at most 6 actions


def _cut_bytes(text: str, limit: int) -> str:
    """`text` within `limit` UTF-8 bytes, cut on a character and marked with an ellipsis."""
    raw = text.encode()
    if len(raw) <= limit:
        return text
    return raw[: limit - 3].decode(errors="ignore") + "\u2026"


def headline(notification: Notification) -> str:
    return f"{notification.incident_number}: {' '.join(notification.title.split())}"


def facts(notification: Notification) -> list[tuple[str, str]]:
    found = [
        ("Severity", notification.severity),
        ("Urgency", notification.urgency.capitalize()),
        ("Service", notification.service_name or "None"),
        ("Assignee", assignee_label(notification)),
    ]
    if notification.opened_at is not None:
        found.append(("Opened", zones.message_time(notification.opened_at, notification.time_zone)))
    return found


def plain_text(notification: Notification, limit: int) -> str:
    """The page as plain lines: facts, message, description, labels, source and runbook."""
    lines = [" \u00b7 ".join(f"{name}: {value}" for name, value in facts(notification))]
    if notification.message:
        lines.append(notification.message)
    if notification.description:
        lines.append(page_facts.shorten(notification.description, 1500))
    if notification.labels:
        lines.append(page_facts.shorten("Labels: " + page_facts.label_text(notification.labels), 500))
    if notification.runbook_url:
        lines.append(f"Runbook: {notification.runbook_url}")
    return _cut_bytes("\n".join(lines), limit)


# ---------------------------------------------------------------------------------------- ntfy


def ntfy_page(notification: Notification, topic: str, links: PageLinks) -> dict[str, Any]:
    high = notification.urgency == "high"
    actions: list[dict[str, Any]] = [
        {"action": "http", "label": LABELS[action], "url": url, "method": "POST", "clear": True}
        for action, url in links.taps.items()
        if action in ("acknowledge", "resolve")
    ]
    actions.append({"action": "view", "label": "Open incident", "url": notification.url})
    return {
        "topic": topic,
        "title": one_line(f"[{notification.severity}] {headline(notification)}", NTFY_TITLE),
        "message": plain_text(notification, NTFY_MESSAGE_BYTES),
        "priority": NTFY_HIGH_PRIORITY if high else NTFY_LOW_PRIORITY,
        "tags": ["rotating_light" if high else "warning", notification.severity.lower()],
        "click": notification.url,
        "actions": actions[:NTFY_MAX_ACTIONS],
    }


def ntfy_text(topic: str, title: str, text: str) -> dict[str, Any]:
    """A plain notice (the verification code)."""
    return {
        "topic": topic,
        "title": one_line(title, NTFY_TITLE),
        "message": _cut_bytes(text, NTFY_MESSAGE_BYTES),
        "tags": ["key"],
    }


# --------------------------------------------------------------------------------------- Teams


def _text_block(text: str, **style: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": text, "wrap": True, **style}


def teams_envelope(card: dict[str, Any]) -> dict[str, Any]:
    """The Workflows webhook's body: a message with the card as its one attachment."""
    return {
        "type": "message",
        "attachments": [{"contentType": CARD_CONTENT_TYPE, "contentUrl": None, "content": card}],
    }


def adaptive_card(body: list[dict[str, Any]], actions: list[dict[str, Any]]) -> dict[str, Any]:
    card: dict[str, Any] = {"$schema": CARD_SCHEMA, "type": "AdaptiveCard", "version": CARD_VERSION, "body": body}
    if actions:
        card["actions"] = actions[:CARD_MAX_ACTIONS]
    return card


def teams_page(notification: Notification, links: PageLinks) -> dict[str, Any]:
    high = notification.urgency == "high"
    body: list[dict[str, Any]] = [
        _text_block(
            one_line(headline(notification), CARD_TITLE),
            size="Medium",
            weight="Bolder",
            color="Attention" if high else "Warning",
        ),
        {
            "type": "FactSet",
            "facts": [{"title": name, "value": one_line(value, CARD_FACT)} for name, value in facts(notification)],
        },
    ]
    if notification.message:
        body.append(_text_block(page_facts.shorten(notification.message, CARD_TEXT)))
    if notification.description:
        body.append(_text_block(page_facts.shorten(notification.description, CARD_TEXT), isSubtle=True))
    if notification.labels:
        labels = page_facts.shorten("Labels: " + page_facts.label_text(notification.labels), CARD_LABELS)
        body.append(_text_block(labels, isSubtle=True, size="Small"))
    actions = [{"type": "Action.OpenUrl", "title": LABELS[action], "url": url} for action, url in links.pages.items()]
    actions.append({"type": "Action.OpenUrl", "title": "Open incident", "url": notification.url})
    if notification.runbook_url:
        actions.append({"type": "Action.OpenUrl", "title": "Runbook", "url": notification.runbook_url})
    return teams_envelope(adaptive_card(body, actions))


def teams_text(title: str, text: str) -> dict[str, Any]:
    return teams_envelope(adaptive_card([_text_block(title, weight="Bolder"), _text_block(text)], []))


# ------------------------------------------------------------------------------------ Pushover

# https://pushover.net/api: message 1024 characters, title 250, url 512, url_title 100; an
# emergency (priority 2) needs retry (at least 30 s) and expire (at most 10800 s) and may name a
# callback URL Pushover POSTs when the person acknowledges.
PUSHOVER_MESSAGE = 1024
PUSHOVER_TITLE = 250
PUSHOVER_URL = 512
PUSHOVER_URL_TITLE = 100
PUSHOVER_EMERGENCY = 2
PUSHOVER_NORMAL = 0
PUSHOVER_RETRY_SECONDS = 60
PUSHOVER_EXPIRE_SECONDS = 3600


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def pushover_page(notification: Notification, *, token: str, user: str, callback: str | None) -> dict[str, str]:
    """The form of a page: high urgency is an emergency, repeated every minute for an hour until
    acknowledged, whose acknowledgement Pushover posts to `callback` (Tocsin's signed URL)."""
    form = {
        "token": token,
        "user": user,
        "title": one_line(f"[{notification.severity}] {headline(notification)}", PUSHOVER_TITLE),
        "message": _cut(plain_text(notification, 4 * PUSHOVER_MESSAGE), PUSHOVER_MESSAGE),
        "url": notification.url if len(notification.url) <= PUSHOVER_URL else notification.url[:PUSHOVER_URL],
        "url_title": _cut(f"Open {notification.incident_number}", PUSHOVER_URL_TITLE),
    }
    if notification.opened_at is not None:
        form["timestamp"] = str(int(notification.opened_at.timestamp()))
    if notification.urgency == "high":
        form["priority"] = str(PUSHOVER_EMERGENCY)
        form["retry"] = str(PUSHOVER_RETRY_SECONDS)
        form["expire"] = str(PUSHOVER_EXPIRE_SECONDS)
        if callback is not None:
            form["callback"] = callback
    else:
        form["priority"] = str(PUSHOVER_NORMAL)
    return form


def pushover_text(*, token: str, user: str, title: str, text: str) -> dict[str, str]:
    return {
        "token": token,
        "user": user,
        "title": one_line(title, PUSHOVER_TITLE),
        "message": _cut(text, PUSHOVER_MESSAGE),
    }
