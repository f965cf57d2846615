"""A new directory user is invited to the console: an invitation from their organization, which
binds nothing until they accept it at sign-in (chalicelib/identity/memberships.py).

Consumes `directory.user_created` after the user's write commits. First the invitation is
recorded; then the person gets a sign-in: a new Cognito account, whose invitation email (Cognito's
template) carries a temporary password; the person chooses their own at first sign-in and then
accepts. A person who already signs in to Tocsin (invited by another organization, or before) keeps
their account and password, whatever organization asked first, and gets one email naming the
organization that added them. A retried message finds the invitation and the account and sends
nothing more. Without a configured pool (a deployment that signs people in elsewhere) nothing is
sent.
"""

from __future__ import annotations

import logging
import secrets

from chalicelib import aws, clock, templates
from chalicelib.directory.users import USER_CREATED
from chalicelib.identity import cognito, memberships
from chalicelib.organization.service import find_organization
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.directory")
INVITATION_SUBJECT = "{organization_name} added you to Tocsin"


def temporary_password() -> str:
    # Over the pool's 12-character minimum; valid for the pool's TemporaryPasswordValidityDays.
    return "Tocsin-" + secrets.token_urlsafe(12)


def send_invitation_email(*, email: str, organization_name: str, settings: Settings) -> None:
    """Tell a person who already signs in that an organization added them (SES)."""
    values = {"organization_name": organization_name, "email": email, "sign_in_url": f"{settings.app_url()}/sign-in"}
    aws.client("ses").send_email(
        Source=settings.ses_sender,
        Destination={"ToAddresses": [email]},
        Message={
            "Subject": {"Data": INVITATION_SUBJECT.format(organization_name=organization_name), "Charset": "UTF-8"},
            "Body": {
                "Text": {"Data": templates.render("email/console_invitation.txt", **values), "Charset": "UTF-8"},
                "Html": {"Data": templates.render("email/console_invitation.html", **values), "Charset": "UTF-8"},
            },
        },
    )


@handles(USER_CREATED)
def invite_to_console(message: Message, settings: Settings) -> None:
    if not settings.cognito_user_pool_id:
        return
    email = str(message.payload.get("email") or "")
    user_id = str(message.payload.get("user_id") or "")
    if not email:
        return
    organization_id, now = message.organization_id, clock.now()
    invitation = memberships.invite(email=email, organization_id=organization_id, user_id=user_id, now=now)
    created = cognito.invite(
        email=email,
        name=str(message.payload.get("name") or "") or None,
        temporary_password=temporary_password(),
        settings=settings,
    )
    if created:
        # Cognito's own email (the temporary password) told them; a redelivery finds this mark.
        memberships.mark_notified(email=email, organization_id=organization_id, now=now)
    elif not invitation.accepted and not invitation.notified:
        organization = find_organization(organization_id=organization_id)
        send_invitation_email(
            email=email, organization_name=organization.name if organization else "An organization", settings=settings
        )
        # After the send: an SES failure raises, and the redelivered message sends it then.
        memberships.mark_notified(email=email, organization_id=organization_id, now=now)
    logger.info("console invitation", extra={"user_id": user_id, "new_sign_in": created})
