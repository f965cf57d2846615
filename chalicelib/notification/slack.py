"""Slack through the Web API: `chat.postMessage` to the person's Slack user id (a direct message
from the bot), authenticated with the bot token as `Authorization: Bearer`. The page is Block Kit
(`render`), with a plain fallback `text` and the "Acknowledge", "Resolve" and "Escalate" buttons
(their clicks come back to POST /integrations/slack/interactivity: chalicelib/paging/slack_actions.py).
`post_message` makes the call for any message (pages, handoff notices:
chalicelib/notification/notices.py); `web_api` any other method (chat.update, chat.postEphemeral).

Slack answers HTTP 200 with `{"ok": false, "error": "..."}` when it refuses (SLACK_<error>,
e.g. SLACK_channel_not_found); an HTTP error, a timeout or an unreadable answer is
SLACK_UNAVAILABLE. The token is never logged nor put in a result message.
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import urllib.error
import urllib.request
from typing import Any

from chalicelib import zones
from chalicelib.notification import page_facts
from chalicelib.notification.channels import (
    ChannelName,
    DeliveryResult,
    Notification,
    Recipient,
    assignee_label,
    one_line,
    subject_line,
)
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.notification")

_PARTIAL_ENTITY = re.compile(r"&[a-z]*$")  # an escape a cut would split
UNAVAILABLE = "SLACK_UNAVAILABLE"
NOT_CONFIGURED = "SLACK_NOT_CONFIGURED"
MAX_ANSWER_BYTES = 1 << 20
METADATA_EVENT = "tocsin_incident_paged"
# Block Kit limits: a section's text 3000 characters, a field's 2000, 10 fields a section, 10
# elements a context block. The caps below are before escaping; an escape is at most 5 characters
# ("&amp;"), so the description is capped well under 3000 / 5 would be too short to read: its cap
# leaves room and `_section` cuts what escaping made longer.
MAX_TITLE = 500
MAX_FIELD = 200
MAX_MESSAGE = 2800
MAX_DESCRIPTION = 1500
MAX_SECTION = 3000
MAX_LABEL = 80
# The page's buttons: action_id -> (the action, its label). The button's value is
# "<organization id>/<incident number>" (see button_value); what it may do is decided by who clicked.
ACTION_BUTTONS = {
    "tocsin_acknowledge": ("acknowledge", "Acknowledge"),
    "tocsin_resolve": ("resolve", "Resolve"),
    "tocsin_escalate": ("escalate", "Escalate"),
}


def button_value(organization_id: str | None, incident_number: str) -> str:
    return f"{organization_id}/{incident_number}" if organization_id else incident_number


def action_buttons(notification: Notification) -> list[dict[str, Any]]:
    value = button_value(notification.organization_id, notification.incident_number)
    return [
        {
            "type": "button",
            "action_id": action_id,
            "text": {"type": "plain_text", "text": label},
            "value": value,
            **({"style": "primary"} if action == "acknowledge" else {}),
        }
        for action_id, (action, label) in ACTION_BUTTONS.items()
    ]


def escape(text: str) -> str:
    """Slack's mrkdwn control characters (https://api.slack.com/reference/surfaces/formatting)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _field(label: str, value: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": f"*{label}*\n{escape(one_line(value, MAX_FIELD))}"}


def _section(text: str) -> dict[str, Any]:
    """A mrkdwn section, its (escaped) text within Block Kit's 3000 characters."""
    if len(text) > MAX_SECTION:
        text = _PARTIAL_ENTITY.sub("", text[: MAX_SECTION - 1]) + "\u2026"
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def link(url: str, label: str) -> str:
    """A mrkdwn link to a URL someone else wrote: escaped, and `|` (which would end the URL) encoded."""
    return f"<{escape(url).replace('|', '%7C')}|{escape(label)}>"


def _fact_blocks(notification: Notification) -> list[dict[str, Any]]:
    """The description, the labels and the source and runbook links, each when the page has it."""
    blocks: list[dict[str, Any]] = []
    if notification.description:
        description = page_facts.shorten(notification.description, MAX_DESCRIPTION)
        blocks.append(_section(f"*Description*\n{escape(description)}"))
    if notification.labels:
        shown = [f"`{escape(one_line(f'{key}={value}', MAX_LABEL))}`" for key, value in notification.labels]
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": "*Labels*  " + "  ".join(shown)}]})
    links = []
    if notification.source_url:
        links.append(link(notification.source_url, f"Source: {notification.source_name or 'the alert'}"))
    if notification.runbook_url:
        links.append(link(notification.runbook_url, "Runbook"))
    if links:
        blocks.append(_section("  \u00b7  ".join(links)))
    return blocks


def render(notification: Notification, recipient: Recipient) -> dict[str, Any]:
    """The chat.postMessage arguments: Block Kit blocks (the headline linking to the incident's
    console page, the facts as fields with the time it opened in the recipient's zone, the message,
    the description, the labels, the source and runbook links, the Acknowledge, Resolve and
    Escalate buttons and an "Open incident" link button) and `text`, the fallback notifications
    and screen readers show. Every value is mrkdwn-escaped; the only links are the console's and
    the alert's own http(s) source and runbook links (docs/PAGES.md)."""
    e = escape
    icon = ":rotating_light:" if notification.urgency == "high" else ":warning:"
    title = e(one_line(notification.title, MAX_TITLE))
    headline = f"{icon} *<{e(notification.url)}|{e(notification.incident_number)}>*: {title}"
    fields = [
        _field("Severity", notification.severity),
        _field("Urgency", notification.urgency.capitalize()),
        _field("Service", notification.service_name or "None"),
        _field("Assignee", assignee_label(notification)),
    ]
    if notification.opened_at is not None:
        fields.append(_field("Opened", zones.message_time(notification.opened_at, notification.time_zone)))
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": headline}},
        {"type": "section", "fields": fields},
    ]
    text = e(subject_line(notification))
    if notification.message:
        message = notification.message[:MAX_MESSAGE]
        blocks.append(_section(e(message)))
        text += f"\n{e(message)}"
    blocks.extend(_fact_blocks(notification))
    blocks.append(
        {
            "type": "actions",
            "block_id": "tocsin_actions",
            "elements": [
                *action_buttons(notification),
                {
                    "type": "button",
                    "action_id": "open_incident",
                    "text": {"type": "plain_text", "text": "Open incident"},
                    "url": notification.url,
                    **({"style": "danger"} if notification.urgency == "high" else {}),
                },
            ],
        }
    )
    return {
        "channel": recipient.slack_user_id,
        "text": text,
        "blocks": blocks,
        "unfurl_links": False,
        "metadata": {
            "event_type": METADATA_EVENT,
            "event_payload": {"incident_number": notification.incident_number, "severity": notification.severity},
        },
    }


def post_message(
    arguments: dict[str, Any],
    *,
    base_url: str | None = None,
    token: str | None = None,
    timeout: float | None = None,
    settings: Settings,
) -> DeliveryResult:
    """One `chat.postMessage` call with `arguments` (channel, text, blocks...): the settings'
    API base URL, bot token and timeout unless given. Never raises for a delivery problem."""
    return web_api("chat.postMessage", arguments, base_url=base_url, token=token, timeout=timeout, settings=settings)


def web_api(
    method: str,
    arguments: dict[str, Any],
    *,
    base_url: str | None = None,
    token: str | None = None,
    timeout: float | None = None,
    settings: Settings,
) -> DeliveryResult:
    """One Web API call (`chat.postMessage`, `chat.update`, `chat.postEphemeral`...) with a JSON
    body. Never raises for a delivery problem."""
    token = token or settings.slack_token()
    if not token:
        return DeliveryResult.provider_failed("slack", NOT_CONFIGURED, "No Slack bot token is configured.")
    base_url = (base_url or settings.slack_api_url()).rstrip("/")
    timeout = timeout if timeout is not None else settings.slack_timeout_seconds
    request = urllib.request.Request(
        f"{base_url}/{method}",
        data=json.dumps(arguments).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json; charset=utf-8"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read(MAX_ANSWER_BYTES)
    except urllib.error.HTTPError as error:
        logger.warning("Slack answered an HTTP error", extra={"status": error.code})
        return DeliveryResult.provider_failed("slack", UNAVAILABLE, f"Slack answered HTTP {error.code}.")
    except (OSError, http.client.HTTPException) as error:  # URLError, timeouts, resets
        reason = getattr(error, "reason", None) or error
        logger.warning("Slack unreachable", extra={"error": type(error).__name__})
        return DeliveryResult.provider_failed("slack", UNAVAILABLE, f"Slack could not be reached: {reason}.")
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        return DeliveryResult.provider_failed("slack", UNAVAILABLE, "Slack's answer was not a Slack API answer.")
    if answer.get("ok") is not True:
        error_name = str(answer.get("error") or "unknown_error")
        logger.warning("Slack refused a message", extra={"slack_error": error_name})
        refusal = f"Slack refused the message: {error_name}."
        return DeliveryResult.provider_failed("slack", f"SLACK_{error_name}", refusal)
    return DeliveryResult.delivered("slack", str(answer.get("ts") or "") or None)


class SlackChannel:
    name: ChannelName = "slack"

    def __init__(
        self, base_url: str | None = None, token: str | None = None, timeout: float | None = None, *, settings: Settings
    ) -> None:
        self._settings = settings
        self._base_url = base_url
        self._token = token
        self._timeout = timeout

    def send(self, notification: Notification, recipient: Recipient) -> DeliveryResult:
        if not recipient.slack_user_id:
            return DeliveryResult.contact_missing(self.name, "Slack user id")
        return post_message(
            render(notification, recipient),
            base_url=self._base_url,
            token=self._token,
            timeout=self._timeout,
            settings=self._settings,
        )
