"""Local stack only: Cognito's password-reset email, which the emulator does not send.

On AWS the user pool emails the code itself. moto only returns it in a response header, so the
local stack sends the same message through SES on the emulator, where the outbox shows it
(`/local/outbox?channel=email`). Hooked onto the cognito-idp client's ForgotPassword calls.
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
