"""Signing in and out: Cognito checks the password, the directory says who the person is.

A pool user is mapped to the directory user with the same email in the organization its
`custom:org` names; the role is the directory's. The session cookie is HttpOnly, SameSite=Lax
and (outside the local stack) Secure; it lives no longer than the session's absolute expiry.
"""

from __future__ import annotations

from chalicelib.console import sessions
from chalicelib.console.visits import (
    app_path,
    cookie,
    cookies_of,
    pre_session_cookie_name,
    safe_next,
    session_cookie_name,
)
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.directory.users import find_user_by_email
from chalicelib.errors import Forbidden, ValidationFailed
from chalicelib.identity import cognito
from chalicelib.settings import get_settings

console = ConsolePages(
    __name__,
    notices={
        "signed_out": "You are signed out.",
        "password_reset": "Your password was changed. Sign in with the new one.",
    },
)

NOT_SET_UP = (
    "Your password is right, but no active Tocsin user has this email in your organization. "
    "Ask an admin of your organization to add you."
)


def _required(ctx: Ctx, *names: str) -> None:
    missing = [{"field": name, "message": "required"} for name in names if not ctx.value(name)]
    if missing:
        raise ValidationFailed.for_fields(missing)


def sign_in_form(ctx: Ctx) -> Page:
    return Page(
        "console/sign_in.html",
        "Sign in",
        context={"email": ctx.value("email"), "next": safe_next(ctx.value("next") or ctx.arg("next"))},
    )


@console.page("/sign-in", anonymous=True)
def show_sign_in(ctx: Ctx) -> Page | Redirect:
    """The sign-in form."""
    if ctx.principal is not None:
        return Redirect(safe_next(ctx.arg("next")))
    return sign_in_form(ctx)


def _finish(ctx: Ctx, outcome: cognito.SignInOutcome) -> Page | Redirect:
    if isinstance(outcome, cognito.NewPasswordRequired):
        return Page(
            "console/new_password.html",
            "Choose a new password",
            context={
                "email": outcome.email,
                "challenge": outcome.challenge_session,
                "next": safe_next(ctx.value("next")),
            },
        )
    organization_id = str(outcome.claims.get(cognito.ORG_ATTRIBUTE) or "")
    email = str(outcome.claims.get("email") or "")
    person = find_user_by_email(organization_id=organization_id, email=email) if organization_id and email else None
    if person is None or not person.is_active:
        raise Forbidden(NOT_SET_UP)
    token, _ = sessions.start(organization_id=organization_id, user_id=person.user_id, now=ctx.now)
    lifetime = get_settings().console_absolute_hours * 3600
    ctx.set_cookies.append(cookie(session_cookie_name(), token, max_age=lifetime))
    ctx.set_cookies.append(cookie(pre_session_cookie_name(), "", max_age=0))
    return Redirect(safe_next(ctx.value("next")))


@console.action("/sign-in", scope=None, anonymous=True, on_error=sign_in_form)
def sign_in(ctx: Ctx) -> Page | Redirect:
    """Check the email and password with Cognito and start a session."""
    _required(ctx, "email", "password")
    return _finish(ctx, cognito.sign_in(email=ctx.value("email").lower(), password=ctx.value("password")))


def new_password_form(ctx: Ctx) -> Page:
    return Page(
        "console/new_password.html",
        "Choose a new password",
        context={
            "email": ctx.value("email"),
            "challenge": ctx.value("challenge"),
            "next": safe_next(ctx.value("next")),
        },
    )


@console.action("/new-password", scope=None, anonymous=True, on_error=new_password_form)
def new_password(ctx: Ctx) -> Page | Redirect:
    """Replace a temporary password, then sign in."""
    _required(ctx, "email", "challenge", "new_password")
    outcome = cognito.set_new_password(
        email=ctx.value("email").lower(),
        challenge_session=ctx.value("challenge"),
        new_password=ctx.value("new_password"),
    )
    return _finish(ctx, outcome)


def forgot_form(ctx: Ctx) -> Page:
    stage = "code" if ctx.request.method == "POST" and ctx.value("code") else "ask"
    return Page(
        "console/forgot_password.html", "Reset your password", context={"stage": stage, "email": ctx.value("email")}
    )


def reset_form(ctx: Ctx) -> Page:
    return Page(
        "console/forgot_password.html", "Reset your password", context={"stage": "code", "email": ctx.value("email")}
    )


@console.page("/forgot-password", anonymous=True)
def show_forgot_password(ctx: Ctx) -> Page:
    """Ask for a password reset code."""
    return Page("console/forgot_password.html", "Reset your password", context={"stage": "ask", "email": ""})


@console.action("/forgot-password", scope=None, anonymous=True, on_error=forgot_form)
def forgot_password(ctx: Ctx) -> Page:
    """Have Cognito send a reset code (the same answer whether or not the account exists)."""
    _required(ctx, "email")
    email = ctx.value("email").lower()
    cognito.send_reset_code(email=email)
    return Page("console/forgot_password.html", "Enter your code", context={"stage": "code", "email": email})


@console.action("/reset-password", scope=None, anonymous=True, on_error=reset_form)
def reset_password(ctx: Ctx) -> Redirect:
    """Set a new password with the emailed code."""
    _required(ctx, "email", "code", "new_password")
    cognito.reset_password(
        email=ctx.value("email").lower(), code=ctx.value("code"), new_password=ctx.value("new_password")
    )
    return Redirect(app_path("/sign-in"), notice="password_reset")


@console.action("/sign-out", scope=None)
def sign_out(ctx: Ctx) -> Redirect:
    """End the session on the server and in the browser."""
    sessions.end(cookies_of(ctx.request).get(session_cookie_name(), ""))
    ctx.set_cookies.append(cookie(session_cookie_name(), "", max_age=0))
    return Redirect(app_path("/sign-in"), notice="signed_out")


@console.page("")
def home(ctx: Ctx) -> Redirect:
    """The console's front door: the incident list."""
    return Redirect(app_path("/incidents"))
