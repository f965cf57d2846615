"""Local stack only: Cognito's emails (password-reset codes, invitations), which the emulator
does not send.

On AWS the user pool emails the reset code and the invitation itself. moto only returns it in a response header, so the
local stack sends the same message through SES on the emulator, where the outbox shows it
(`/local/outbox?channel=email`). Hooked onto the cognito-idp client's ForgotPassword and
AdminCreateUser calls; an invitation's temporary password is the one the call sent.
"""

from __future__ import annotations

from typing import Any

from chalicelib import aws
from chalicelib.settings import get_settings

_EVENT = "cognito-identity-provider.ForgotPassword"
CODE_HEADER = "x-moto-forgot-password-confirmation-code"


def _remember_username(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    context["tocsin_reset_username"] = params.get("Username")


def _send_code(http_response: Any, context: dict[str, Any], **_: Any) -> None:
    code = http_response.headers.get(CODE_HEADER)
    email = context.get("tocsin_reset_username")
    if not code or not email or http_response.status_code != 200:
        return
    settings = get_settings()
    text = (
        f"Your Tocsin password reset code is {code}\n\n"
        f"Enter it at {settings.app_url()}/forgot-password with your new password. "
        "If you did not ask to reset your password, ignore this email."
    )
    html = (
        f"<p>Your Tocsin password reset code is <strong>{code}</strong></p>"
        f'<p>Enter it at <a href="{settings.app_url()}/forgot-password">the sign-in page</a> with your new password. '
        "If you did not ask to reset your password, ignore this email.</p>"
    )
    aws.client("ses").send_email(
        Source=settings.ses_sender,
        Destination={"ToAddresses": [email]},
        Message={
            "Subject": {"Data": "Your Tocsin password reset code"},
            "Body": {"Text": {"Data": text}, "Html": {"Data": html}},
        },
    )


def send_reset_codes_by_email() -> None:
    events = aws.client("cognito-idp").meta.events
    events.register("before-parameter-build." + _EVENT, _remember_username, unique_id="tocsin-reset-user")
    events.register("after-call." + _EVENT, _send_code, unique_id="tocsin-reset-mail")


_INVITE_EVENT = "cognito-identity-provider.AdminCreateUser"


def _remember_invitation(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
    if params.get("MessageAction") != "SUPPRESS":  # only what Cognito itself would have emailed
        context["tocsin_invitation"] = (params.get("Username"), params.get("TemporaryPassword"))


def _send_invitation(http_response: Any, context: dict[str, Any], **_: Any) -> None:
    from chalicelib.identity import pool

    invitation = context.get("tocsin_invitation")
    if not invitation or http_response.status_code != 200 or not all(invitation):
        return
    email, password = invitation
    settings = get_settings()
    text = pool.INVITE_MESSAGE.replace("{username}", email).replace("{####}", password)
    text += f"\n\nThe console: {settings.app_url()}/sign-in"
    aws.client("ses").send_email(
        Source=settings.ses_sender,
        Destination={"ToAddresses": [email]},
        Message={"Subject": {"Data": pool.INVITE_SUBJECT}, "Body": {"Text": {"Data": text}}},
    )


def send_invitations_by_email() -> None:
    events = aws.client("cognito-idp").meta.events
    events.register("before-parameter-build." + _INVITE_EVENT, _remember_invitation, unique_id="tocsin-invite-user")
    events.register("after-call." + _INVITE_EVENT, _send_invitation, unique_id="tocsin-invite-mail")
