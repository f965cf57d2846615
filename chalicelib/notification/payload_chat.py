"""What a page posts to Discord, Google Chat and Mattermost incoming webhooks. Pure: no I/O.

- Discord (Execute Webhook): `content` (at most 2000 characters) and one embed (title 256,
  description 4096, at most 25 fields of name 256 / value 1024, 6000 characters in all), no
  mentions parsed (`allowed_mentions`), links to the signed action pages in the description:
  one-way, a webhook message takes no buttons.
- Google Chat (incoming webhook): `text` (at most 4096 characters) and one `cardsV2` card, a
  header, decorated texts for the facts and a button list opening the action pages (one-way).
- Mattermost (incoming webhook): `text` (16383 characters) and one attachment with the facts as
  short fields and interactive buttons whose `integration.url` is Tocsin's
  `POST /integrations/mattermost/actions`, its `context` the organization's Mattermost token and
  the signed single-use link of that action (chalicelib/paging/mattermost_actions.py reads them).
"""

from __future__ import annotations

from typing import Any

from chalicelib.notification.channels import Notification, one_line
from chalicelib.notification.hook_links import LABELS, PageLinks, mattermost_actions_url, mattermost_token
from chalicelib.notification.payload_push import facts, headline, plain_text
from chalicelib.settings import Settings

DISCORD_CONTENT = 2000
DISCORD_TITLE = 256
DISCORD_DESCRIPTION = 4096
DISCORD_FIELD_NAME = 256
DISCORD_FIELD_VALUE = 1024
DISCORD_MAX_FIELDS = 25
DISCORD_EMBED_TOTAL = 6000
GOOGLE_CHAT_TEXT = 4096
MATTERMOST_TEXT = 16383
MATTERMOST_USERNAME = "Tocsin"
COLORS = {"high": 0xD0021B, "low": 0xF5A623}  # red for high urgency, amber for low


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _md_link(label: str, url: str) -> str:
    # A URL is ours or the alert's http(s) link; `)` and spaces would end a markdown link early.
    return f"[{label}]({url.replace(')', '%29').replace(' ', '%20')})"


def _action_line(notification: Notification, links: PageLinks) -> str:
    parts = [_md_link(LABELS[action], url) for action, url in links.pages.items()]
    parts.append(_md_link("Open incident", notification.url))
    if notification.runbook_url:
        parts.append(_md_link("Runbook", notification.runbook_url))
    return " \u00b7 ".join(parts)


# ------------------------------------------------------------------------------------- Discord


def discord_page(notification: Notification, links: PageLinks) -> dict[str, Any]:
    title = _cut(headline(notification), DISCORD_TITLE)
    actions = _action_line(notification, links)
    details = plain_text(notification, DISCORD_DESCRIPTION)
    room = DISCORD_DESCRIPTION - len(actions) - 2
    description = f"{_cut(details, max(room, 0))}\n\n{actions}" if room > 0 else _cut(actions, DISCORD_DESCRIPTION)
    fields = [
        {"name": _cut(name, DISCORD_FIELD_NAME), "value": _cut(value, DISCORD_FIELD_VALUE), "inline": True}
        for name, value in facts(notification)
    ][:DISCORD_MAX_FIELDS]
    embed: dict[str, Any] = {
        "title": title,
        "url": notification.url,
        "description": description,
        "color": COLORS.get(notification.urgency, COLORS["low"]),
        "fields": fields,
    }
    overflow = embed_size(embed) - DISCORD_EMBED_TOTAL
    if overflow > 0:
        embed["description"] = _cut(description, len(description) - overflow)
    icon = "\U0001f6a8" if notification.urgency == "high" else "\u26a0\ufe0f"
    content = f"{icon} [{notification.severity}] {one_line(headline(notification), DISCORD_CONTENT - 20)}"
    return {
        "username": MATTERMOST_USERNAME,
        "content": _cut(content, DISCORD_CONTENT),
        "embeds": [embed],
        "allowed_mentions": {"parse": []},
    }


def embed_size(embed: dict[str, Any]) -> int:
    """The characters Discord counts against an embed's 6000: title, description, field names and values."""
    total = len(embed.get("title", "")) + len(embed.get("description", ""))
    return total + sum(len(f["name"]) + len(f["value"]) for f in embed.get("fields", []))


def discord_text(text: str) -> dict[str, Any]:
    return {"username": MATTERMOST_USERNAME, "content": _cut(text, DISCORD_CONTENT), "allowed_mentions": {"parse": []}}


# --------------------------------------------------------------------------------- Google Chat


def google_chat_page(notification: Notification, links: PageLinks) -> dict[str, Any]:
    buttons = [{"text": LABELS[action], "onClick": {"openLink": {"url": url}}} for action, url in links.pages.items()]
    buttons.append({"text": "Open incident", "onClick": {"openLink": {"url": notification.url}}})
    if notification.runbook_url:
        buttons.append({"text": "Runbook", "onClick": {"openLink": {"url": notification.runbook_url}}})
    widgets: list[dict[str, Any]] = [
        {"decoratedText": {"topLabel": name, "text": one_line(value, 200)}} for name, value in facts(notification)
    ]
    if notification.description:
        widgets.append({"textParagraph": {"text": _cut(notification.description, 2000)}})
    widgets.append({"buttonList": {"buttons": buttons}})
    icon = "\U0001f6a8" if notification.urgency == "high" else "\u26a0\ufe0f"
    text = f"{icon} [{notification.severity}] {headline(notification)}"
    if notification.message:
        text += f"\n{notification.message}"
    return {
        "text": _cut(text, GOOGLE_CHAT_TEXT),
        "cardsV2": [
            {
                "cardId": "tocsin-page",
                "card": {
                    "header": {
                        "title": one_line(headline(notification), 200),
                        "subtitle": f"{notification.severity} \u00b7 {notification.urgency} urgency",
                    },
                    "sections": [{"widgets": widgets}],
                },
            }
        ],
    }


def google_chat_text(text: str) -> dict[str, Any]:
    return {"text": _cut(text, GOOGLE_CHAT_TEXT)}


# ---------------------------------------------------------------------------------- Mattermost


def mattermost_buttons(notification: Notification, links: PageLinks, *, settings: Settings) -> list[dict[str, Any]]:
    token = mattermost_token(notification.organization_id or "", settings=settings)
    return [
        {
            "id": action,  # Mattermost wants an id of letters and digits only
            "name": LABELS[action],
            "type": "button",
            "style": "primary" if action == "acknowledge" else "default",
            "integration": {
                "url": mattermost_actions_url(settings=settings),
                "context": {"action": action, "token": token, "link": link_token},
            },
        }
        for action, link_token in links.tokens.items()
    ]


def mattermost_page(notification: Notification, links: PageLinks, *, settings: Settings) -> dict[str, Any]:
    icon = ":rotating_light:" if notification.urgency == "high" else ":warning:"
    attachment: dict[str, Any] = {
        "fallback": _cut(f"[{notification.severity}] {headline(notification)}", 300),
        "color": "#{:06X}".format(COLORS.get(notification.urgency, COLORS["low"])),
        "title": one_line(headline(notification), 300),
        "title_link": notification.url,
        "fields": [{"short": True, "title": name, "value": value} for name, value in facts(notification)],
        "actions": mattermost_buttons(notification, links, settings=settings),
    }
    body = plain_text(notification, 6000).split("\n", 1)
    if len(body) > 1:
        attachment["text"] = body[1]
    return {
        "username": MATTERMOST_USERNAME,
        "text": _cut(f"{icon} **[{notification.severity}]** {headline(notification)}", MATTERMOST_TEXT),
        "attachments": [attachment],
    }


def mattermost_text(text: str) -> dict[str, Any]:
    return {"username": MATTERMOST_USERNAME, "text": _cut(text, MATTERMOST_TEXT)}
