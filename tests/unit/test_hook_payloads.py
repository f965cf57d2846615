"""What a page posts to ntfy, Teams, Discord, Google Chat and Mattermost, checked against each
provider's documented fields and limits as tables (pure: no I/O).

No machine-readable Adaptive Cards schema is published on PyPI or npm (the `adaptivecards` and
`adaptivecards-designer` packages ship none), so the card is checked against the schema's
documented required fields and Teams' limits instead: the element and action types the version
declares, each one's required properties, at most 6 actions, under 28 KB."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.notification import email_links, payload_chat, payload_push
from chalicelib.notification.channels import Notification, Recipient
from chalicelib.notification.hook_links import PageLinks, mattermost_token, page_links
from chalicelib.settings import get_settings

NOW = datetime(2026, 11, 27, 14, 5, tzinfo=UTC)
ADA = Recipient("u-ada", "Ada", None, None)


def notification(**changes: Any) -> Notification:
    base: dict[str, Any] = {
        "incident_number": "INC-2026-0042",
        "title": "Checkout 500s",
        "severity": "SEV1",
        "urgency": "high",
        "message": "Level 1 of Checkout",
        "url": "http://127.0.0.1:8000/app/incidents/INC-2026-0042",
        "at": NOW,
        "service_name": "Checkout",
        "organization_id": "org-1",
        "description": "Errors above 5%",
        "labels": (("env", "prod"),),
        "runbook_url": "https://runbooks.example.com/checkout",
        "opened_at": NOW,
    }
    base.update(changes)
    return Notification(**base)


def links(n: Notification, via: str) -> PageLinks:
    return page_links(n, ADA, via=via, now=NOW, settings=get_settings())


# ------------------------------------------------------------------------------------------ ntfy


@pytest.mark.parametrize(("urgency", "priority", "tag"), [("high", 5, "rotating_light"), ("low", 3, "warning")])
def test_ntfy_priority_and_tags_follow_the_urgency(urgency: str, priority: int, tag: str) -> None:
    n = notification(urgency=urgency)
    body = payload_push.ntfy_page(n, "pages", links(n, "ntfy"))
    assert set(body) == {"topic", "title", "message", "priority", "tags", "click", "actions"}
    assert (body["topic"], body["priority"], body["tags"], body["click"]) == ("pages", priority, [tag, "sev1"], n.url)
    assert body["title"] == "[SEV1] INC-2026-0042: Checkout 500s"


def test_ntfy_actions_are_two_signed_posts_and_a_view() -> None:
    n = notification()
    body = payload_push.ntfy_page(n, "pages", links(n, "ntfy"))
    assert len(body["actions"]) <= payload_push.NTFY_MAX_ACTIONS == 3
    (ack, resolve, view) = body["actions"]
    for action, label, verb in ((ack, "Acknowledge", "acknowledge"), (resolve, "Resolve", "resolve")):
        assert (action["action"], action["label"], action["method"], action["clear"]) == ("http", label, "POST", True)
        token = action["url"].rsplit("/", 1)[1]
        assert action["url"].startswith("http://127.0.0.1:8000/integrations/page-actions/c1.")
        link = email_links.verify(token, now=NOW, settings=get_settings())
        assert (link.via, link.action, link.user_id, link.incident_number) == ("ntfy", verb, "u-ada", "INC-2026-0042")
    assert view == {"action": "view", "label": "Open incident", "url": n.url}


@pytest.mark.parametrize(
    ("text", "fits"),
    [("a" * 100, True), ("é" * 3000, False), ("x" * 5000, False)],
)
def test_ntfy_message_stays_within_4096_bytes(text: str, fits: bool) -> None:
    body = payload_push.ntfy_page(notification(description=None, message=text), "t", PageLinks())
    size = len(body["message"].encode())
    assert size <= payload_push.NTFY_MESSAGE_BYTES
    assert body["message"].endswith("\u2026") is not fits


# ----------------------------------------------------------------------------------------- Teams

# Adaptive Cards 1.4: the types a card may use here and each one's required properties (schema docs).
CARD_ELEMENTS = {"TextBlock": {"text"}, "FactSet": {"facts"}}
CARD_ACTIONS = {"Action.OpenUrl": {"url"}}
TEXT_BLOCK_PROPERTIES = {"type", "text", "wrap", "size", "weight", "color", "isSubtle"}
SIZES, WEIGHTS = {"Small", "Default", "Medium", "Large", "ExtraLarge"}, {"Lighter", "Default", "Bolder"}
COLORS = {"Default", "Dark", "Light", "Accent", "Good", "Warning", "Attention"}


def check_card(card: dict[str, Any]) -> None:
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    assert card["$schema"] == "http://adaptivecards.io/schemas/adaptive-card.json"
    for element in card["body"]:
        assert element["type"] in CARD_ELEMENTS and CARD_ELEMENTS[element["type"]] <= set(element)
        if element["type"] == "TextBlock":
            assert set(element) <= TEXT_BLOCK_PROPERTIES and element["text"]
            assert element.get("size", "Default") in SIZES and element.get("weight", "Default") in WEIGHTS
            assert element.get("color", "Default") in COLORS
        else:
            assert all(set(fact) == {"title", "value"} and fact["value"] for fact in element["facts"])
    assert len(card.get("actions", [])) <= payload_push.CARD_MAX_ACTIONS
    for action in card.get("actions", []):
        assert action["type"] in CARD_ACTIONS and set(action) == {"type", "title", "url"}
        assert re.match(r"^https?://", action["url"])


def test_the_teams_page_is_a_workflows_message_with_a_valid_card() -> None:
    n = notification()
    body = payload_push.teams_page(n, links(n, "teams"))
    assert body["type"] == "message" and len(body["attachments"]) == 1
    attachment = body["attachments"][0]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive" and attachment["contentUrl"] is None
    card = attachment["content"]
    check_card(card)
    assert [a["title"] for a in card["actions"]] == ["Acknowledge", "Resolve", "Escalate", "Open incident", "Runbook"]
    assert all("/app/email-actions/c1." in a["url"] for a in card["actions"][:3])  # GET shows, POST acts
    facts = dict((f["title"], f["value"]) for f in card["body"][1]["facts"])
    assert facts["Severity"] == "SEV1" and facts["Service"] == "Checkout" and facts["Urgency"] == "High"
    assert card["body"][0]["text"] == "INC-2026-0042: Checkout 500s" and card["body"][0]["color"] == "Attention"


@pytest.mark.parametrize("size", [10, 5000, 200_000])
def test_the_teams_card_stays_under_28_kb(size: int) -> None:
    n = notification(title="T" * size, message="M" * size, description="D" * size, labels=(("k", "v" * size),))
    body = payload_push.teams_page(n, links(n, "teams"))
    check_card(body["attachments"][0]["content"])
    assert len(json.dumps(body).encode()) < payload_push.TEAMS_MAX_BYTES


def test_the_teams_verification_card() -> None:
    body = payload_push.teams_text("Tocsin verification code", "Your code is 123456.")
    check_card(body["attachments"][0]["content"])
    assert "actions" not in body["attachments"][0]["content"]


# --------------------------------------------------------------------------------------- Discord


@pytest.mark.parametrize("size", [10, 3000, 50_000])
def test_discord_content_and_embed_limits(size: int) -> None:
    n = notification(title="T" * size, message="M" * size, description="D" * size)
    body = payload_chat.discord_page(n, links(n, "discord"))
    assert set(body) == {"username", "content", "embeds", "allowed_mentions"}
    assert body["allowed_mentions"] == {"parse": []}  # an alert's text never pings @everyone
    assert len(body["content"]) <= payload_chat.DISCORD_CONTENT == 2000
    (embed,) = body["embeds"]
    assert len(embed["title"]) <= 256 and len(embed["description"]) <= 4096
    assert len(embed["fields"]) <= 25
    assert all(len(f["name"]) <= 256 and len(f["value"]) <= 1024 for f in embed["fields"])
    assert payload_chat.embed_size(embed) <= payload_chat.DISCORD_EMBED_TOTAL


def test_discord_links_to_the_action_pages() -> None:
    n = notification()
    embed = payload_chat.discord_page(n, links(n, "discord"))["embeds"][0]
    found = dict(re.findall(r"\[([^\]]+)\]\((\S+?)\)", embed["description"]))
    assert list(found)[:4] == ["Acknowledge", "Resolve", "Escalate", "Open incident"]
    assert email_links.verify(found["Escalate"].rsplit("/", 1)[1], now=NOW, settings=get_settings()).via == "discord"
    assert embed["url"] == n.url and embed["color"] == payload_chat.COLORS["high"]


# ----------------------------------------------------------------------------------- Google Chat


def test_google_chat_text_and_card() -> None:
    n = notification(message="x" * 9000)
    body = payload_chat.google_chat_page(n, links(n, "google_chat"))
    assert set(body) == {"text", "cardsV2"} and len(body["text"]) <= payload_chat.GOOGLE_CHAT_TEXT == 4096
    (card,) = body["cardsV2"]
    assert card["cardId"] == "tocsin-page" and card["card"]["header"]["title"] == "INC-2026-0042: Checkout 500s"
    widgets = card["card"]["sections"][0]["widgets"]
    buttons = widgets[-1]["buttonList"]["buttons"]
    assert [b["text"] for b in buttons] == ["Acknowledge", "Resolve", "Escalate", "Open incident", "Runbook"]
    assert all(set(b["onClick"]) == {"openLink"} for b in buttons)
    assert {w["decoratedText"]["topLabel"] for w in widgets if "decoratedText" in w} >= {"Severity", "Service"}


# ------------------------------------------------------------------------------------ Mattermost


def test_mattermost_buttons_post_back_with_the_organization_token_and_the_link() -> None:
    n = notification()
    body = payload_chat.mattermost_page(n, links(n, "mattermost"), settings=get_settings())
    assert body["username"] == "Tocsin" and len(body["text"]) <= payload_chat.MATTERMOST_TEXT
    (attachment,) = body["attachments"]
    assert attachment["title_link"] == n.url and attachment["color"] == "#D0021B"
    assert all(field["short"] for field in attachment["fields"])
    buttons = attachment["actions"]
    assert [(b["id"], b["name"], b["type"]) for b in buttons] == [
        ("acknowledge", "Acknowledge", "button"),
        ("resolve", "Resolve", "button"),
        ("escalate", "Escalate", "button"),
    ]
    for button in buttons:
        assert re.fullmatch(r"[a-z]+", button["id"])  # Mattermost wants letters and digits only
        assert button["integration"]["url"] == "http://127.0.0.1:8000/integrations/mattermost/actions"
        context = button["integration"]["context"]
        assert (
            context["token"]
            == mattermost_token("org-1", settings=get_settings())
            != mattermost_token("org-2", settings=get_settings())
        )
        link = email_links.verify(context["link"], now=NOW, settings=get_settings())
        assert (link.via, link.action) == ("mattermost", button["id"])


@pytest.mark.parametrize(
    ("channel", "build"),
    [
        ("discord", lambda: payload_chat.discord_text("x" * 3000)),
        ("google_chat", lambda: payload_chat.google_chat_text("x" * 5000)),
        ("mattermost", lambda: payload_chat.mattermost_text("x" * 20000)),
        ("ntfy", lambda: payload_push.ntfy_text("t", "title", "x" * 5000)),
    ],
)
def test_plain_notices_are_cut_to_the_limits(channel: str, build: Any) -> None:
    body = build()
    text = body.get("content") or body.get("text") or body.get("message")
    limit = {"discord": 2000, "google_chat": 4096, "mattermost": 16383, "ntfy": 4096}[channel]
    assert len(text.encode() if channel == "ntfy" else text) <= limit and text.endswith("\u2026")


def test_a_page_without_an_organization_has_no_action_links() -> None:
    assert (
        page_links(notification(organization_id=None), ADA, via="teams", now=NOW, settings=get_settings())
        == PageLinks()
    )


# -------------------------------------------------------------------------------------- Pushover


@pytest.mark.parametrize(
    ("urgency", "priority", "emergency"),
    [("high", "2", True), ("low", "0", False)],
)
def test_pushover_form_priority_follows_the_urgency(urgency: str, priority: str, emergency: bool) -> None:
    n = notification(urgency=urgency, title="T" * 400, message="M" * 3000)
    form = payload_push.pushover_page(n, token="a" * 30, user="u" * 30, callback="https://t.example/cb/x")
    assert (form["token"], form["user"], form["priority"]) == ("a" * 30, "u" * 30, priority)
    assert len(form["title"]) <= 250 and len(form["message"]) <= 1024
    assert len(form["url"]) <= 512 and len(form["url_title"]) <= 100 and form["url"] == n.url
    assert form["timestamp"] == str(int(NOW.timestamp()))
    if emergency:  # repeated every minute for an hour until acknowledged; the callback acknowledges
        assert (form["retry"], form["expire"], form["callback"]) == ("60", "3600", "https://t.example/cb/x")
        assert int(form["retry"]) >= 30 and int(form["expire"]) <= 10800
    else:
        assert not {"retry", "expire", "callback"} & set(form)
    assert all(isinstance(value, str) for value in form.values())  # a form: every field a string


def test_pushover_notice_is_a_plain_form() -> None:
    form = payload_push.pushover_text(token="t", user="u", title="T" * 300, text="x" * 2000)
    assert set(form) == {"token", "user", "title", "message"}
    assert len(form["title"]) <= 250 and len(form["message"]) <= 1024
