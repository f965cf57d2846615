"""Which organization a sign-in opens, and accepting an organization's invitation.

Cognito says the password is right; the memberships say which organizations invited the address
and which of those the person accepted (chalicelib/identity/memberships.py); the directory says
whether the person is still an active user there. One accepted organization and no invitation
waiting: the session starts at once, as it always did. Otherwise the person chooses: an accepted
organization opens, an invitation opens once accepted (that click is the acceptance; an
invitation never accepted binds nothing, whoever sent it first), or is declined (it goes, and the
choice is shown again without it).

Between the password and the choice the browser holds a ticket: an HMAC over the email, the
identity's legacy organization and an expiry (10 minutes), bound to the browser's CSRF token (its
pre-session cookie), carried in the choice form. A ticket copied to another browser, altered or
late opens nothing; the options are read again when the choice arrives.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

from chalicelib.console import sessions
from chalicelib.console.visits import cookie, pre_session_cookie_name, safe_next, session_cookie_name
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.users import find_user_by_email
from chalicelib.errors import Forbidden, Unauthorized
from chalicelib.identity import cognito, memberships
from chalicelib.organization.service import find_organization
from chalicelib.settings import Settings

console = ConsolePages(__name__)

TICKET_SECONDS = 600
NOT_SET_UP = (
    "Your password is right, but no active Tocsin user has this email in your organization. "
    "Ask an admin of your organization to add you."
)
TICKET_REFUSED = "Your sign-in has expired or is not valid; sign in again."


@dataclass(frozen=True)
class Option:
    """An organization this sign-in may open."""

    organization_id: str
    name: str
    user_id: str
    accepted: bool


def options_for(email: str, legacy_organization_id: str | None) -> list[Option]:
    """The organizations that invited the address and still have it as an active user: accepted
    ones first, then invitations, each by name."""
    found = memberships.with_legacy(memberships.memberships_of(email), email, legacy_organization_id)
    options = []
    for membership in found:
        person = find_user_by_email(organization_id=membership.organization_id, email=email)
        if person is None or not person.is_active:
            continue
        organization = find_organization(organization_id=membership.organization_id)
        name = organization.name if organization else membership.organization_id
        options.append(Option(membership.organization_id, name, person.user_id, membership.accepted))
    return sorted(options, key=lambda option: (not option.accepted, option.name.casefold()))


def _ticket_mac(email: str, legacy: str, expires: int, csrf_token: str, *, settings: Settings) -> str:
    secret = settings.api_key_hmac_secret.encode()
    signed = f"console-sign-in-choice:{email}:{legacy}:{expires}:{csrf_token}".encode()
    return hmac.new(secret, signed, hashlib.sha256).hexdigest()


def ticket(ctx: Ctx, email: str, legacy: str) -> str:
    expires = int(ctx.now.timestamp()) + TICKET_SECONDS
    return f"{expires}.{_ticket_mac(email, legacy, expires, ctx.csrf_token, settings=ctx.settings)}"


def ticket_holds(ctx: Ctx, email: str, legacy: str, presented: str) -> bool:
    expires_text, _, mac = presented.partition(".")
    if not expires_text.isdigit() or int(expires_text) < ctx.now.timestamp():
        return False
    return hmac.compare_digest(
        mac.encode(), _ticket_mac(email, legacy, int(expires_text), ctx.csrf_token, settings=ctx.settings).encode()
    )


def start_session(ctx: Ctx, organization_id: str, user_id: str, *, settings: Settings) -> Redirect:
    token, _ = sessions.start(organization_id=organization_id, user_id=user_id, now=ctx.now, settings=settings)
    lifetime = settings.console_absolute_hours * 3600
    ctx.set_cookies.append(cookie(session_cookie_name(settings=settings), token, max_age=lifetime, settings=settings))
    ctx.set_cookies.append(cookie(pre_session_cookie_name(settings=settings), "", max_age=0, settings=settings))
    return Redirect(safe_next(ctx.value("next"), settings=settings))


def after_password(ctx: Ctx, claims: dict[str, Any]) -> Page | Redirect:
    """Cognito accepted the password: open the one accepted organization, or let the person choose."""
    email = str(claims.get("email") or "").lower()
    legacy = str(claims.get(cognito.ORG_ATTRIBUTE) or "")
    options = options_for(email, legacy) if email else []
    if not options:
        raise Forbidden(NOT_SET_UP)
    if len(options) == 1 and options[0].accepted:
        return start_session(ctx, options[0].organization_id, options[0].user_id, settings=ctx.settings)
    return choice_page(ctx, email, legacy, options)


def choice_page(ctx: Ctx, email: str, legacy: str, options: list[Option]) -> Page:
    fields = {"email": email, "legacy": legacy, "ticket": ticket(ctx, email, legacy)}
    fields["next"] = safe_next(ctx.value("next"), settings=ctx.settings)
    return Page(
        "console/choose_organization.html",
        "Choose an organization",
        context={
            "email": email,
            "fields": fields,
            "accepted": [option for option in options if option.accepted],
            "invited": [option for option in options if not option.accepted],
        },
    )


@console.action("/sign-in/organization", scope=None, anonymous=True)
def choose_organization(ctx: Ctx) -> Page | Redirect:
    """Open the organization chosen after the password; an invitation is accepted by choosing it,
    or declined (`decline=yes`)."""
    email, legacy = ctx.value("email").lower(), ctx.value("legacy")
    if not email or not ticket_holds(ctx, email, legacy, ctx.value("ticket")):
        raise Unauthorized(TICKET_REFUSED)
    wanted = ctx.value("organization_id")
    chosen = next((option for option in options_for(email, legacy) if option.organization_id == wanted), None)
    if chosen is None:
        raise Forbidden(NOT_SET_UP)
    if ctx.value("decline") == "yes" and not chosen.accepted:
        memberships.decline(email=email, organization_id=chosen.organization_id)
        return after_password(ctx, {"email": email, cognito.ORG_ATTRIBUTE: legacy})
    if not chosen.accepted:
        memberships.accept(email=email, organization_id=chosen.organization_id, now=ctx.now)
    if chosen.organization_id != legacy:
        cognito.choose_organization(email=email, organization_id=chosen.organization_id, settings=ctx.settings)
    return start_session(ctx, chosen.organization_id, chosen.user_id, settings=ctx.settings)
