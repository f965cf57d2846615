"""Pure contact rules: method types and addresses, the default methods and rules of a new user,
notification rule validation, and the arithmetic of verification codes (expiry, attempts, resend
cooldown, hourly cap). No AWS here; `now` is passed in. docs/CONTACTS.md explains the choices.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from chalicelib.directory import rules as directory_rules
from chalicelib.errors import Conflict, NoVerificationCode, RateLimited, ValidationFailed

ContactType = Literal[
    "email", "slack", "sms", "voice", "teams", "mattermost", "ntfy", "discord", "google_chat", "pushover"
]
CONTACT_TYPES: tuple[ContactType, ...] = (
    "email",
    "slack",
    "sms",
    "voice",
    "teams",
    "mattermost",
    "ntfy",
    "discord",
    "google_chat",
    "pushover",
)
# Phone methods cost money per message and reach whoever holds the number: they prove ownership.
PHONE_TYPES: tuple[ContactType, ...] = ("sms", "voice")
# Webhook-style methods (chalicelib/contact/hooks.py): a URL anybody could have typed, proven by a
# code posted to it, as a phone number is.
HOOK_TYPES: tuple[ContactType, ...] = ("teams", "mattermost", "ntfy", "discord", "google_chat", "pushover")
Urgency = Literal["high", "low"]
URGENCIES: tuple[Urgency, ...] = ("high", "low")

E164_PATTERN = r"^\+[1-9]\d{7,14}$"
_E164 = re.compile(E164_PATTERN)
LABEL_MAX = 100
ADDRESS_MAX = 254
# A webhook URL may be longer (a Teams Workflows URL with its signature is ~300 characters).
HOOK_ADDRESS_MAX = 2048
MAX_METHODS = 20
MAX_STEPS = 10
MAX_DELAY_MINUTES = 1440
DEFAULT_LABELS: dict[str, str] = {
    "email": "Email",
    "slack": "Slack",
    "sms": "SMS",
    "voice": "Voice call",
    "teams": "Microsoft Teams",
    "mattermost": "Mattermost",
    "ntfy": "ntfy",
    "discord": "Discord",
    "google_chat": "Google Chat",
    "pushover": "Pushover",
}
# Deterministic ids: two racing first reads write the same items, so one conditional put wins.
DEFAULT_EMAIL_ID = "default-email"
DEFAULT_SLACK_ID = "default-slack"

CODE_DIGITS = 6
CODE_TTL = timedelta(minutes=10)
MAX_ATTEMPTS = 5
RESEND_COOLDOWN = timedelta(seconds=30)
SENDS_PER_WINDOW = 5
SEND_WINDOW = timedelta(hours=1)


# --- methods -------------------------------------------------------------------------------------


def is_phone(method_type: str) -> bool:
    return method_type in PHONE_TYPES


def is_hook(method_type: str) -> bool:
    return method_type in HOOK_TYPES


def needs_code(method_type: str) -> bool:
    """Phone numbers and webhook URLs are proven by a code sent there and typed back."""
    return is_phone(method_type) or is_hook(method_type)


def verified_on_creation(method_type: str) -> bool:
    """Email and Slack are trusted as entered (see docs/CONTACTS.md); phone numbers and webhook
    URLs must be proven."""
    return not needs_code(method_type)


def check_type(method_type: str) -> ContactType:
    for known in CONTACT_TYPES:
        if method_type == known:
            return known
    raise ValidationFailed.for_field("type", f"must be one of {', '.join(CONTACT_TYPES)}")


def normalize_address(method_type: str, address: str) -> str:
    """The stored form: emails lower-cased, Slack ids trimmed, phone numbers strict E.164."""
    value = address.strip()
    if method_type == "email":
        return directory_rules.normalize_email(value, field="address")
    if method_type == "slack":
        if not value or len(value) > directory_rules.SLACK_ID_MAX or any(c.isspace() for c in value):
            raise ValidationFailed.for_field(
                "address", f"must be a Slack user id: 1 to {directory_rules.SLACK_ID_MAX} characters without spaces"
            )
        return value
    if len(value) > ADDRESS_MAX:
        raise ValidationFailed.for_field("address", f"must be at most {ADDRESS_MAX} characters")
    if is_phone(method_type):
        if not _E164.match(value):
            raise ValidationFailed.for_field("address", "must be an E.164 phone number, e.g. +15551234567")
        return value
    raise ValidationFailed.for_field("type", f"must be one of {', '.join(CONTACT_TYPES)}")


def clean_label(label: str | None, method_type: str) -> str:
    """Trimmed, inner whitespace collapsed; left out or blank, the type's default label."""
    if label is None or not label.strip():
        return DEFAULT_LABELS.get(method_type, method_type)
    return directory_rules.clean_name(label, field="label", max_length=LABEL_MAX)


def address_key(method_type: str, address: str, verified: bool) -> str | None:
    """The sparse index key of a verified phone method (`sms#+15551234567`); None otherwise."""
    return f"{method_type}#{address}" if verified and is_phone(method_type) else None


def check_can_add(
    existing: Iterable[tuple[str, str]], method_type: str, address: str, *, count: int, shown: str | None = None
) -> None:
    """409 when the user is at the limit or already has this (type, address); `shown`: the address
    as the answer may name it (a webhook URL is compared by its HMAC and named by its hint)."""
    if (method_type, address) in set(existing):
        raise Conflict(
            f"This user already has a {method_type} contact method for {shown or address}.",
            details={"fields": [{"field": "address", "message": "already a contact method of this user"}]},
        )
    if count >= MAX_METHODS:
        raise Conflict(f"A user has at most {MAX_METHODS} contact methods; delete one first.")


# --- defaults ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DefaultMethod:
    contact_method_id: str
    type: ContactType
    address: str
    label: str
    follows_account_email: bool


def default_methods(email: str | None, slack_user_id: str | None) -> list[DefaultMethod]:
    """A new user's methods: the account email, plus Slack when the user has a Slack id."""
    found = []
    if email:
        found.append(DefaultMethod(DEFAULT_EMAIL_ID, "email", email, DEFAULT_LABELS["email"], True))
    if slack_user_id:
        found.append(DefaultMethod(DEFAULT_SLACK_ID, "slack", slack_user_id, DEFAULT_LABELS["slack"], False))
    return found


def default_steps(methods: Sequence[DefaultMethod]) -> list[Step]:
    """Every default method at 0 minutes; the same list serves both urgencies."""
    return [Step(method.contact_method_id, 0) for method in methods]


# --- notification rules --------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    contact_method_id: str
    delay_minutes: int


def clean_steps(urgency: str, steps: Sequence[Step], method_ids: Iterable[str]) -> list[Step]:
    """At most MAX_STEPS, delays 0..MAX_DELAY_MINUTES, every id one of the user's methods, no step
    twice; sorted by delay (steps with the same delay keep the order given)."""
    known = set(method_ids)
    problems: list[dict[str, str]] = []
    if len(steps) > MAX_STEPS:
        problems.append({"field": urgency, "message": f"at most {MAX_STEPS} steps"})
    seen: set[Step] = set()
    for index, step in enumerate(steps):
        where = f"{urgency}.{index}"
        if not 0 <= step.delay_minutes <= MAX_DELAY_MINUTES:
            problems.append({"field": f"{where}.delay_minutes", "message": f"must be 0 to {MAX_DELAY_MINUTES}"})
        if step.contact_method_id not in known:
            problems.append({"field": f"{where}.contact_method_id", "message": "not a contact method of this user"})
        elif step in seen:
            problems.append({"field": where, "message": "the same method at the same delay is listed twice"})
        seen.add(step)
    if problems:
        raise ValidationFailed.for_fields(problems, "The notification rules are invalid.")
    return sorted(steps, key=lambda step: step.delay_minutes)


def without_method(steps: Sequence[Step], contact_method_id: str) -> list[Step]:
    return [step for step in steps if step.contact_method_id != contact_method_id]


# --- verification codes --------------------------------------------------------------------------


def new_code() -> str:
    return f"{secrets.randbelow(10**CODE_DIGITS):0{CODE_DIGITS}d}"


def code_digest(secret: str, *, user_key: str, contact_method_id: str, address: str, code: str) -> str:
    """HMAC-SHA256 of the code bound to the method and its address: the plain code is never stored,
    and a digest is worthless for any other method or number."""
    message = f"contact-verification\n{user_key}\n{contact_method_id}\n{address}\n{code}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def code_matches(stored_digest: str, candidate_digest: str) -> bool:
    return hmac.compare_digest(stored_digest.encode(), candidate_digest.encode())


@dataclass(frozen=True)
class SendWindow:
    """How many codes were sent to a method since `started` (the hourly cap)."""

    started: datetime | None
    sends: int


def next_send(*, last_sent_at: datetime | None, window: SendWindow, now: datetime) -> SendWindow:
    """The window after one more send; 429 RATE_LIMITED (with Retry-After) inside the cooldown or
    past the hourly cap."""
    if last_sent_at is not None and now < last_sent_at + RESEND_COOLDOWN:
        _too_soon(last_sent_at + RESEND_COOLDOWN, now, f"Wait {int(RESEND_COOLDOWN.total_seconds())} s between codes.")
    if window.started is None or now >= window.started + SEND_WINDOW:
        return SendWindow(now, 1)
    if window.sends >= SENDS_PER_WINDOW:
        _too_soon(window.started + SEND_WINDOW, now, f"At most {SENDS_PER_WINDOW} codes per hour to one method.")
    return SendWindow(window.started, window.sends + 1)


def _too_soon(until: datetime, now: datetime, why: str) -> None:
    seconds = max(1, int((until - now).total_seconds() + 0.999))
    raise RateLimited(
        f"{why} Retry after {seconds} s.",
        details={"retry_after_seconds": seconds},
        headers={"Retry-After": str(seconds)},
    )


NoCodeReason = Literal["not_sent", "expired", "attempts_exhausted", "replaced"]


def no_code(reason: NoCodeReason) -> NoVerificationCode:
    messages = {
        "not_sent": "No verification code was sent for this contact method; send one first.",
        "expired": "The verification code expired; send a new one.",
        "attempts_exhausted": f"The code took {MAX_ATTEMPTS} wrong attempts and no longer works; send a new one.",
        "replaced": "A new code was sent or the address changed meanwhile; use the newest code.",
    }
    return NoVerificationCode(messages[reason], details={"reason": reason})


def check_code_usable(*, digest: str | None, expires_at: datetime | None, attempts: int, now: datetime) -> None:
    """NoVerificationCode (409) unless a code was sent, is unexpired, and has attempts left."""
    if not digest or expires_at is None:
        raise no_code("not_sent")
    if attempts >= MAX_ATTEMPTS:
        raise no_code("attempts_exhausted")
    if now >= expires_at:
        raise no_code("expired")
