"""Signing in and out: Cognito checks the password, the directory says who the person is.

A pool user is mapped to the directory user with the same email in an organization that invited
the address and whose invitation the person accepted; a person with more than one, or with an
invitation waiting, chooses (chalicelib/console/pages/sign_in_organization.py). The role is the
directory's. The session cookie is HttpOnly, SameSite=Lax
and (outside the local stack) Secure; it lives no longer than the session's absolute expiry.
"""

from __future__ import annotations

from chalicelib.console import sessions
from chalicelib.console.pages.sign_in_organization import after_password
from chalicelib.console.visits import (
    app_path,
    cookie,
    cookies_of,
    safe_next,
    session_cookie_name,
)
from chalicelib.console.web import ConsolePages, Ctx, Page, Redirect
from chalicelib.errors import ValidationFailed
from chalicelib.identity import cognito

console = ConsolePages(
    __name__,
    notices={
        "signed_out": "You are signed out.",
        "password_reset": "Your password was changed. Sign in with the new one.",
    },
)


def _required(ctx: Ctx, *names: str) -> None:
    missing = [{"field": name, "message": "required"} for name in names if not ctx.value(name)]
    if missing:
        raise ValidationFailed.for_fields(missing)


def sign_in_form(ctx: Ctx) -> Page:
    return Page(
        "console/sign_in.html",
        "Sign in",
        context={
            "email": ctx.value("email"),
            "next": safe_next(ctx.value("next") or ctx.arg("next"), settings=ctx.settings),
        },
    )


@console.page("/sign-in", anonymous=True)
def show_sign_in(ctx: Ctx) -> Page | Redirect:
    """The sign-in form."""
    if ctx.principal is not None:
        return Redirect(safe_next(ctx.arg("next"), settings=ctx.settings))
    return sign_in_form(ctx)


def _finish(ctx: Ctx, outcome: cognito.SignInOutcome) -> Page | Redirect:
    if isinstance(outcome, cognito.NewPasswordRequired):
        return Page(
            "console/new_password.html",
            "Choose a new password",
            context={
                "email": outcome.email,
                "challenge": outcome.challenge_session,
                "next": safe_next(ctx.value("next"), settings=ctx.settings),
            },
        )
    return after_password(ctx, outcome.claims)


@console.action("/sign-in", scope=None, anonymous=True, on_error=sign_in_form)
def sign_in(ctx: Ctx) -> Page | Redirect:
    """Check the email and password with Cognito and start a session."""
    _required(ctx, "email", "password")
    return _finish(
        ctx, cognito.sign_in(email=ctx.value("email").lower(), password=ctx.value("password"), settings=ctx.settings)
    )


def new_password_form(ctx: Ctx) -> Page:
    return Page(
        "console/new_password.html",
        "Choose a new password",
        context={
            "email": ctx.value("email"),
            "challenge": ctx.value("challenge"),
            "next": safe_next(ctx.value("next"), settings=ctx.settings),
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
        settings=ctx.settings,
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
    cognito.send_reset_code(email=email, settings=ctx.settings)
    return Page("console/forgot_password.html", "Enter your code", context={"stage": "code", "email": email})


@console.action("/reset-password", scope=None, anonymous=True, on_error=reset_form)
def reset_password(ctx: Ctx) -> Redirect:
    """Set a new password with the emailed code."""
    _required(ctx, "email", "code", "new_password")
    cognito.reset_password(
        email=ctx.value("email").lower(),
        code=ctx.value("code"),
        new_password=ctx.value("new_password"),
        settings=ctx.settings,
    )
    return Redirect(app_path("/sign-in", settings=ctx.settings), notice="password_reset")


@console.action("/sign-out", scope=None)
def sign_out(ctx: Ctx) -> Redirect:
    """End the session on the server and in the browser."""
    sessions.end(cookies_of(ctx.request).get(session_cookie_name(settings=ctx.settings), ""))
    ctx.set_cookies.append(cookie(session_cookie_name(settings=ctx.settings), "", max_age=0, settings=ctx.settings))
    return Redirect(app_path("/sign-in", settings=ctx.settings), notice="signed_out")


@console.page("")
def home(ctx: Ctx) -> Redirect:
    """The console's front door: the incident list."""
    return Redirect(app_path("/incidents", settings=ctx.settings))
