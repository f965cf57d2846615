"""A new directory user gets a console sign-in: an account in the Cognito pool, invited by email.

Consumes `directory.user_created` after the user's write commits. Cognito sends the invitation
(its template names the temporary password); the person chooses their own at first sign-in. A
retried message finds the account and does nothing. Without a configured pool (a deployment
that signs people in elsewhere) nothing is sent.
"""

from __future__ import annotations

import logging
import secrets

from chalicelib.directory.users import USER_CREATED
from chalicelib.identity import cognito
from chalicelib.queue.consumers import handles
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings

logger = logging.getLogger("tocsin.directory")


def temporary_password() -> str:
    # Over the pool's 12-character minimum; valid for the pool's TemporaryPasswordValidityDays.
    return "Tocsin-" + secrets.token_urlsafe(12)


@handles(USER_CREATED)
def invite_to_console(message: Message) -> None:
    if not get_settings().cognito_user_pool_id:
        return
    email = str(message.payload.get("email") or "")
    if not email:
        return
    invited = cognito.invite(
        email=email,
        organization_id=message.organization_id,
        name=str(message.payload.get("name") or "") or None,
        temporary_password=temporary_password(),
    )
    logger.info("console invitation", extra={"user_id": message.payload.get("user_id"), "invited": invited})
