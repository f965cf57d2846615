"""The subscriber flow's HTML pages: what each answer says, in the status page's own stylesheet
(so the status page's Content-Security-Policy covers them). Pure: words in, HTML out.

Form actions are relative to the page that shows them (`/status/{slug}/subscribe`,
`/status/{slug}/confirm?token=...`), so they stay on the origin the reader is on, which is what
the policy's `form-action 'self'` allows.
"""

from __future__ import annotations

from chalicelib.statuspage.page_style import STYLESHEET
from chalicelib.statuspage.subscribe_form import SubscribeForm
from chalicelib.subscriber.links import LinkPurpose
from chalicelib.subscriber.rules import PENDING_FOR
from chalicelib.subscriber.service import Outcome
from chalicelib.templates import render

SUBSCRIBE_ACTION = "subscribe"  # relative to /status/{slug}/subscribe


def _message(name: str, page_url: str | None, heading: str, *lines: str) -> str:
    return render(
        "statuspage/subscribe_message.html",
        stylesheet=STYLESHEET,
        name=name or "Status",
        page_url=page_url,
        heading=heading,
        lines=list(lines),
    )


def check_inbox(name: str, page_url: str) -> str:
    """The answer to every accepted form post: the same words whatever the address's state."""
    return _message(
        name,
        page_url,
        "Check your inbox",
        "If that address can be subscribed, we have sent it an email with a link to confirm.",
        "Nothing else is sent until the link is followed and its button pressed. "
        "An address already subscribed gets no new email.",
    )


def form_again(name: str, page_url: str, form: SubscribeForm) -> str:
    return render(
        "statuspage/subscribe_form.html", stylesheet=STYLESHEET, name=name or "Status", page_url=page_url, form=form
    )


_BUTTONS: dict[LinkPurpose, tuple[str, str, str]] = {
    "confirm": (
        "Confirm your subscription",
        "Press the button to start receiving updates about this service.",
        "Confirm subscription",
    ),
    "unsubscribe": (
        "Unsubscribe",
        "Press the button to stop receiving updates about this service.",
        "Unsubscribe",
    ),
}


def button_page(name: str, page_url: str, purpose: LinkPurpose, token: str) -> str:
    heading, explanation, button = _BUTTONS[purpose]
    return render(
        "statuspage/subscribe_button.html",
        stylesheet=STYLESHEET,
        name=name or "Status",
        page_url=page_url,
        heading=heading,
        explanation=explanation,
        button=button,
        action=f"{purpose}?token={token}",
    )


_OUTCOMES: dict[Outcome, tuple[str, str]] = {
    "confirmed": ("You are subscribed", "Updates will come when an incident or maintenance affects this service."),
    "already_confirmed": ("Already confirmed", "This subscription was confirmed already; nothing changed."),
    "unsubscribed": ("You are unsubscribed", "You will get no more updates from this status page."),
    "not_subscribed": ("Not subscribed", "This subscription was removed already; nothing changed."),
}


def outcome_page(name: str, page_url: str | None, outcome: Outcome, webhook_secret: str | None = None) -> str:
    heading, line = _OUTCOMES[outcome]
    if webhook_secret is None:
        return _message(name, page_url, heading, line)
    return _message(
        name,
        page_url,
        heading,
        line,
        "Each delivery to your webhook is signed: X-Service-Signature is sha256= and the hex HMAC-SHA256 of "
        "the X-Service-Timestamp value, a dot and the raw body, keyed with this secret:",
        webhook_secret,
        "Keep it private. This page shows it again whenever the link's button is pressed.",
    )


def link_problem(status: int) -> str:
    if status == 404:
        return _message(
            "Status",
            None,
            "This link has expired",
            "The subscription it confirms is no longer waiting: confirmation links work for "
            f"{int(PENDING_FOR.total_seconds() // 3600)} hours. Subscribe again from the status page.",
        )
    return _message(
        "Status",
        None,
        "This link is not valid",
        "It may have been cut short when it was copied. Open it again from the email, whole.",
    )


def too_many(name: str, page_url: str | None, retry_after: str | None) -> str:
    wait = f"{retry_after} seconds" if retry_after and retry_after.isdigit() else "a little"
    return _message(name, page_url, "Too many requests", f"Please wait {wait} and try again.")
