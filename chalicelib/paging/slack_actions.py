"""A click on a Slack page's Acknowledge, Resolve or Escalate button (POST
/integrations/slack/interactivity, Slack's `block_actions` payload, form-encoded `payload=`).

Who clicked is proved by Slack's signature (`verify_signature`: `v0=` hex HMAC-SHA256 over
`v0:{X-Slack-Request-Timestamp}:{raw body}` with the app's signing secret; a timestamp more than
5 minutes away from now is refused, so a captured request cannot be replayed later). The Slack
user is then mapped to the Tocsin user(s) linked to that Slack user id (directory's sparse
slack-user-index). The button's value names the organization and incident
(chalicelib.notification.slack.button_value), but the organization must be one the Slack user
belongs to: a value naming another organization acts nowhere. The action itself is
chalicelib.paging.respond, with the person's own permissions.

The click must come from the Slack workspace the app's bot token belongs to, the one every
organization's pages are posted in (SLACK_TEAM_ID; the local stage has its own): a click whose
`team.id` names another workspace (the same app installed elsewhere) acts nowhere and is told
so, naming no organization. Slack names the workspace on every click; one that names none can
only have been signed with the signing secret itself, so it is not refused for that.

Each click acts once (chalicelib/paging/action_once.py): its id is Slack's `action_ts` with the
`trigger_id`, or the SHA-256 of the signed body when Slack sent neither; a replay of a signed
click, however often, changes nothing, is answered what the first click was, and touches no
Slack message.

The person is told the outcome: the original message is updated (chat.update) to say who did
what when something was done; otherwise (not linked, not allowed, already acknowledged) only
the clicker sees an ephemeral reply (chat.postEphemeral). Slack wants the HTTP answer within 3
seconds, so those Web API calls get a short timeout; a failed update is logged, the action stands.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import urllib.parse
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from chalicelib.directory.users import User, find_users_by_slack_user_id
from chalicelib.errors import InvalidPayload, InvalidSignature, SignatureExpired
from chalicelib.notification import slack
from chalicelib.paging import action_once
from chalicelib.paging.respond import ACTIONS, Action, Outcome, respond
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.slack")

SIGNATURE_WINDOW = timedelta(minutes=5)
VERSION = "v0"
# Slack's deadline is 3 s for the whole answer; the acting takes some of it.
WEB_API_TIMEOUT_SECONDS = 1.0
MAX_BODY_BYTES = 64 * 1024
OUTCOME_BLOCK_ID = "tocsin_outcome"
NOT_LINKED = (
    "Your Slack account is not linked to a Tocsin user, so nothing was done. Ask an admin to set your "
    "Slack user id ({slack_user_id}) on your Tocsin user, then click again."
)
NOT_A_MEMBER = "You are not a member of this incident's organization in Tocsin; nothing was done."
AMBIGUOUS = (
    "Your Slack account is linked in several Tocsin organizations and this button does not say which; nothing was done."
)
OTHER_WORKSPACE = "This Slack workspace is not the one Tocsin's Slack app pages in; nothing was done."


def signature_of(secret: str, timestamp: str, body: bytes) -> str:
    """Slack's request signature: what X-Slack-Signature carries."""
    base = f"{VERSION}:{timestamp}:".encode() + body
    return f"{VERSION}=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def verify_signature(
    *, body: bytes, timestamp: str | None, signature: str | None, now: datetime, secret: str | None
) -> None:
    """Raises InvalidSignature (missing, forged, or no signing secret configured) or
    SignatureExpired (timestamp more than 5 minutes from now, either way)."""
    if not secret:
        raise InvalidSignature("Slack requests cannot be verified: no Slack signing secret is configured.")
    if not timestamp or not signature:
        raise InvalidSignature("X-Slack-Request-Timestamp and X-Slack-Signature are required.")
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise InvalidSignature("X-Slack-Request-Timestamp must be Unix seconds.") from None
    # Checked before the age so a forged request learns nothing about the window.
    # As bytes: compare_digest refuses non-ASCII str, and a header may carry anything.
    if not hmac.compare_digest(signature_of(secret, timestamp, body).encode(), signature.encode(errors="replace")):
        raise InvalidSignature("X-Slack-Signature does not verify.")
    if abs(now.timestamp() - sent_at) > SIGNATURE_WINDOW.total_seconds():
        raise SignatureExpired("X-Slack-Request-Timestamp is more than 5 minutes old (or ahead); refused.")


@dataclass(frozen=True)
class Click:
    slack_user_id: str
    action: Action
    organization_id: str | None
    incident_number: str
    channel_id: str | None
    message_ts: str | None
    message_blocks: list[dict[str, Any]]
    click_id: str = ""  # this one click: Slack's action_ts and trigger_id, or the body's SHA-256
    team_id: str | None = None  # the Slack workspace it came from


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_click(body: bytes) -> Click | None:
    """The click in a block_actions payload; None for a payload that is not one of our buttons
    (Slack sends other interactions and the "Open incident" link button too). InvalidPayload
    when the body is not Slack's form with a JSON `payload`."""
    if len(body) > MAX_BODY_BYTES:
        raise InvalidPayload("The Slack payload is too large.")
    form = urllib.parse.parse_qs(body.decode("utf-8", errors="replace"))
    values = form.get("payload")
    if not values:
        raise InvalidPayload("The body must be form-encoded with a `payload` field (Slack's interactivity).")
    try:
        payload = json.loads(values[-1])
    except ValueError:
        raise InvalidPayload("`payload` is not JSON.") from None
    if not isinstance(payload, dict) or payload.get("type") != "block_actions":
        return None
    user = _object(payload.get("user"))
    slack_user_id = _text(user.get("id"))
    actions = payload.get("actions")
    if not slack_user_id or not isinstance(actions, list) or not actions or not isinstance(actions[0], dict):
        raise InvalidPayload("A block_actions payload needs `user.id` and `actions`.")
    clicked = actions[0]
    button = slack.ACTION_BUTTONS.get(str(clicked.get("action_id")))
    value = _text(clicked.get("value"))
    action = next((known for known in ACTIONS if button is not None and known == button[0]), None)
    if action is None or value is None:
        return None
    organization_id, _, incident_number = value.rpartition("/")
    container = _object(payload.get("container"))
    channel = _object(payload.get("channel"))
    message = _object(payload.get("message"))
    blocks = message.get("blocks")
    return Click(
        click_id=click_id_of(clicked, payload, body),
        team_id=_text(_object(payload.get("team")).get("id")) or _text(user.get("team_id")),
        slack_user_id=slack_user_id,
        action=action,
        organization_id=organization_id or None,
        incident_number=incident_number,
        channel_id=_text(container.get("channel_id")) or _text(channel.get("id")),
        message_ts=_text(container.get("message_ts")) or _text(message.get("ts")),
        message_blocks=[b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else [],
    )


def click_id_of(clicked: dict[str, Any], payload: dict[str, Any], body: bytes) -> str:
    """What makes this click one: Slack's `action_ts` (per click) and `trigger_id` (per
    interaction); without either, the signed body itself (a replay repeats it byte for byte)."""
    action_ts, trigger_id = _text(clicked.get("action_ts")), _text(payload.get("trigger_id"))
    if action_ts or trigger_id:
        return action_once.action_id("slack", action_ts or "", trigger_id or "")
    return action_once.action_id("slack", "body", hashlib.sha256(body).hexdigest())


def _person_in(click: Click, linked: list[User]) -> User | str:
    """The linked user of the button's organization, or why there is none."""
    if not linked:
        return NOT_LINKED.format(slack_user_id=click.slack_user_id)
    if click.organization_id is None:
        return linked[0] if len(linked) == 1 else AMBIGUOUS
    for user in linked:
        if user.organization_id == click.organization_id:
            return user
    return NOT_A_MEMBER


def from_our_workspace(click: Click, teams: frozenset[str]) -> bool:
    """False when the click names a Slack workspace other than the configured one(s) (`teams`)."""
    return not teams or click.team_id is None or click.team_id in teams


def handle_click(click: Click, now: datetime, *, teams: frozenset[str], settings: Settings) -> Outcome:
    """Act for the Slack user who clicked, once per click, then tell them. Never raises for
    their mistakes; a replay is answered as the first click was and tells nobody anything."""
    person = (
        _person_in(click, find_users_by_slack_user_id(click.slack_user_id))
        if from_our_workspace(click, teams)
        else OTHER_WORKSPACE
    )
    if isinstance(person, str):
        outcome = Outcome(False, person, click.incident_number)
    else:
        acting = person

        def act() -> Outcome:
            return respond(
                organization_id=acting.organization_id,
                incident_number=click.incident_number,
                action=click.action,
                person=acting,
                channel="slack",
                now=now,
                settings=settings,
            )

        outcome = action_once.once(click.click_id, now, act) if click.click_id else act()
    if outcome.replay:
        return outcome
    if outcome.done:
        _update_message(click, outcome, settings=settings)
    else:
        _tell_clicker(click, outcome, settings=settings)
    return outcome


def outcome_blocks(blocks: list[dict[str, Any]], outcome: Outcome) -> list[dict[str, Any]]:
    """The message's blocks with one context block saying who did what (replacing an earlier one)."""
    kept = [block for block in blocks if block.get("block_id") != OUTCOME_BLOCK_ID]
    note = {"type": "mrkdwn", "text": f":white_check_mark: {slack.escape(outcome.message)}"}
    return [*kept, {"type": "context", "block_id": OUTCOME_BLOCK_ID, "elements": [note]}]


def _update_message(click: Click, outcome: Outcome, *, settings: Settings) -> None:
    if not click.channel_id or not click.message_ts:
        _tell_clicker(click, outcome, settings=settings)
        return
    arguments = {
        "channel": click.channel_id,
        "ts": click.message_ts,
        "text": outcome.message,
        "blocks": outcome_blocks(click.message_blocks, outcome),
    }
    result = slack.web_api("chat.update", arguments, timeout=WEB_API_TIMEOUT_SECONDS, settings=settings)
    if not result.sent:
        logger.warning("Slack message update failed", extra={"error": result.error_code})


def _tell_clicker(click: Click, outcome: Outcome, *, settings: Settings) -> None:
    """An ephemeral reply only the clicker sees (in the conversation of the page)."""
    channel = click.channel_id or click.slack_user_id
    arguments = {"channel": channel, "user": click.slack_user_id, "text": outcome.message}
    result = slack.web_api("chat.postEphemeral", arguments, timeout=WEB_API_TIMEOUT_SECONDS, settings=settings)
    if not result.sent:
        logger.warning("Slack ephemeral reply failed", extra={"error": result.error_code})
