"""Acting from a chat or push page's signed link: an ntfy action tap, a Mattermost button press,
Pushover's acknowledgement callback.

The link (chalicelib/notification/email_links.py, sent by chalicelib/notification/hook_links.py)
names the organization, the person paged, the incident, the action and the channel, signed and
expiring after 24 hours. Verifying it proves the person (as an email link does); here it is spent
once (a conditional write: of any number of racing presses exactly one acts, a replay is refused
with 409 and changes nothing) and the action goes through `paging.respond` with the person's own
role and the channel on the timeline ("Acknowledged by ana@example.com via Mattermost"). A
failure that is not the person's gives the link back, so the provider's retry can act.

A Mattermost press must also carry the organization's Mattermost token in its context
(`hook_links.mattermost_token`): a link of one organization with another's token is refused. A
Pushover callback must name the receipt Pushover gave when the page was sent
(chalicelib/notification/pushover.py).
"""

from __future__ import annotations

import hmac
from datetime import datetime
from typing import Any

from chalicelib.directory.users import get_user
from chalicelib.errors import Conflict, InvalidSignature, NotFound, SignatureExpired
from chalicelib.notification import email_links, pushover
from chalicelib.notification.email_links import EmailLink, LinkRefused
from chalicelib.notification.hook_links import mattermost_token
from chalicelib.paging.respond import Outcome, respond
from chalicelib.settings import Settings

NO_PERSON = "The person this page was sent to is no longer in the organization; nothing was changed."
TAP_CHANNELS = ("ntfy",)  # channels whose links act on a bare POST (the phone's notification button)


def verify_link(token: str, *, channels: tuple[str, ...], now: datetime, settings: Settings) -> EmailLink:
    """The link a token carries, sent by one of `channels`: 401 INVALID_SIGNATURE when forged,
    mangled or sent by another channel (an email link must be confirmed on its page), 401
    SIGNATURE_EXPIRED when past its 24 hours."""
    try:
        link = email_links.verify(token, now=now, settings=settings)
    except LinkRefused as refused:
        if refused.reason == email_links.EXPIRED:
            raise SignatureExpired(
                "This action link has expired (links work for 24 hours); nothing was done."
            ) from None
        raise InvalidSignature("This action link is not one Tocsin signed; nothing was done.") from None
    if link.via not in channels:
        raise InvalidSignature("This action link is not one Tocsin signed; nothing was done.")
    return link


def verify_mattermost(context: Any, *, now: datetime, settings: Settings) -> EmailLink:
    """A Mattermost button's `context`: the signed link, sent by Mattermost, with its organization's token."""
    if not isinstance(context, dict) or not isinstance(context.get("link"), str):
        raise InvalidSignature("The button's context carries no Tocsin action; nothing was done.")
    link = verify_link(context["link"], channels=("mattermost",), now=now, settings=settings)
    sent = context.get("token")
    expected = mattermost_token(link.organization_id, settings=settings)
    if not isinstance(sent, str) or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise InvalidSignature("The button's organization token does not verify; nothing was done.")
    return link


def verify_pushover(token: str, form: dict[str, str], *, now: datetime, settings: Settings) -> EmailLink:
    """Pushover's acknowledgement callback: the URL's link (sent by Pushover, to acknowledge) and
    the form's `receipt`, which must be the one Pushover gave for that page (it signs nothing else)."""
    link = verify_link(token, channels=("pushover",), now=now, settings=settings)
    if not pushover.check_receipt(link, form.get("receipt")):
        raise InvalidSignature("The callback does not name the receipt of this page; nothing was done.")
    return link


def act(link: EmailLink, now: datetime, *, settings: Settings) -> Outcome:
    """Spend the link and act as its person; 409 CONFLICT when it was used already."""
    try:
        person = get_user(organization_id=link.organization_id, user_id=link.user_id)
    except NotFound:
        return Outcome(False, NO_PERSON, link.incident_number)
    if not email_links.claim(link):
        raise Conflict(
            "This action was already taken from this page (each button works once); nothing more was done.",
            details={"incident_number": link.incident_number, "action": link.action},
        )
    try:
        return respond(
            organization_id=link.organization_id,
            incident_number=link.incident_number,
            action=link.action,
            person=person,
            channel=link.via,
            now=now,
            settings=settings,
        )
    except Exception:
        email_links.release(link)  # nothing changed: the provider's retry may act
        raise


def mattermost_answer(outcome: Outcome) -> dict[str, Any]:
    """Mattermost's integration answer: the post updated to say who did what when something was
    done; only the presser sees why when not."""
    if outcome.done:
        return {"update": {"message": outcome.message}, "ephemeral_text": outcome.message}
    return {"ephemeral_text": outcome.message}
