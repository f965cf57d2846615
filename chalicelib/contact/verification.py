"""Proving a phone number or a webhook URL: a 6-digit code sent to it, typed back within 10 minutes.

Only an HMAC of the code is stored (keyed with API_KEY_HMAC_SECRET and bound to the method and
its address); the plain code leaves only in the `contact.send_verification` message, whose
consumer sends the SMS or places the call, and it is never logged.

Attempts are claimed before a code is compared: each `verify` first adds one to the code's
attempt counter with a conditional update (fewer than MAX_ATTEMPTS so far, same code, unexpired),
and compares only when that claim succeeded. However many guesses race, at most MAX_ATTEMPTS
are ever compared against one code.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pynamodb.exceptions import DoesNotExist

from chalicelib import clock
from chalicelib.budget import service as budget
from chalicelib.budget.rules import Send
from chalicelib.contact import rules, service
from chalicelib.contact.profile import ContactMethod, to_method
from chalicelib.contact.tables import ContactRecord, method_item_key, user_key
from chalicelib.directory.rules import is_item_id
from chalicelib.directory.users import User
from chalicelib.errors import Conflict, InvalidVerificationCode, NotFound
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings
from chalicelib.store import RetryableConflict, assign, retry_on_conflict, update_if

# The message the channels' consumer turns into an SMS or a voice call.
SEND_VERIFICATION = "contact.send_verification"
# Its payload says the request charged the outbound budget (chalicelib/notification/gate.py CHARGED).
BUDGET_CHARGED = "budget_charged"


@dataclass(frozen=True)
class VerificationSent:
    contact_method_id: str
    type: str
    address: str
    expires_at: datetime
    resend_available_at: datetime
    attempts_allowed: int


def _record(organization_id: str, user: User, contact_method_id: str, now: datetime) -> ContactRecord:
    """The method's item (one GetItem); a user never read before gets the defaults first, so the
    default methods answer as they would once listed."""
    if not is_item_id(contact_method_id):
        raise NotFound("Contact method not found.")
    key = (user_key(organization_id, user.user_id), method_item_key(contact_method_id))
    try:
        return ContactRecord.get(*key, consistent_read=True)
    except DoesNotExist:
        pass
    if service.profile(organization_id, user, now=now).method(contact_method_id) is None:
        raise NotFound("Contact method not found.")
    return ContactRecord.get(*key, consistent_read=True)


def _check_needs_verification(record: ContactRecord) -> None:
    if not rules.needs_code(str(record.method_type)):
        raise Conflict("Email and Slack contact methods are verified when they are added; there is nothing to verify.")
    if record.verified:
        raise Conflict("This contact method is already verified.")


def _digest(record: ContactRecord, code: str, *, settings: Settings) -> str:
    return rules.code_digest(
        settings.api_key_hmac_secret,
        user_key=str(record.user_key),
        contact_method_id=str(record.contact_method_id),
        address=str(record.address),
        code=code,
    )


def _checked(organization_id: str, user: User, contact_method_id: str, now: datetime) -> ContactRecord:
    record = _record(organization_id, user, contact_method_id, now)
    _check_needs_verification(record)
    return record


def _window_after_send(record: ContactRecord, now: datetime) -> rules.SendWindow:
    """The method's send window after one more code; 429 inside its cooldown or past its cap."""
    return rules.next_send(
        last_sent_at=record.code_sent_at,
        window=rules.SendWindow(record.send_window_started_at, int(record.sends_in_window or 0)),
        now=now,
    )


def _spend_budget(
    organization_id: str, user_id: str, record: ContactRecord, now: datetime, *, settings: Settings
) -> budget.Decision:
    """The outbound budget's verification limits (per number across organizations, per person):
    429 RATE_LIMITED with Retry-After when spent (chalicelib/budget)."""
    # A webhook URL is counted by its HMAC: the hint in `address` is not unique to it.
    destination = str(record.destination_identity or record.address)
    send = Send(str(record.method_type), destination, "verification", organization_id, user_id)
    return budget.spend_or_raise(send, now, settings=settings)


def send_verification(
    *, organization_id: str, user_id: str, contact_method_id: str, now: datetime, settings: Settings
) -> VerificationSent:
    """Store a fresh code's digest (the previous code stops working), then publish it for sending.
    409 for email/Slack or an already verified method; 429 inside the cooldown, past the method's
    hourly cap, or past the outbound budget's verification limits (per number, per person)."""
    user = service.get_user(organization_id, user_id)
    # The method's own cooldown and cap answer first; then the budget of the number and the person
    # (which no new method resets), charged here so its refusal is this request's 429.
    first = _checked(organization_id, user, contact_method_id, now)
    _window_after_send(first, now)
    charge = _spend_budget(organization_id, user_id, first, now, settings=settings)

    def attempt() -> tuple[ContactRecord, str]:
        record = _checked(organization_id, user, contact_method_id, now)
        window = _window_after_send(record, now)
        code = rules.new_code()
        previous = record.code_sent_at
        unchanged = (
            (ContactRecord.address == record.address)
            & (ContactRecord.verified == False)  # noqa: E712 - a DynamoDB condition, not a comparison
            & (ContactRecord.code_sent_at == previous if previous else ContactRecord.code_sent_at.does_not_exist())
        )
        actions = [
            ContactRecord.code_digest.set(_digest(record, code, settings=settings)),
            ContactRecord.code_expires_at.set(now + rules.CODE_TTL),
            ContactRecord.code_attempts.set(0),
            ContactRecord.code_sent_at.set(now),
            assign(ContactRecord.send_window_started_at, window.started),
            ContactRecord.sends_in_window.set(window.sends),
        ]
        if not update_if(record, actions, unchanged):
            raise RetryableConflict()  # another send or an address change won: read again
        return record, code

    try:
        record, code = retry_on_conflict(attempt, what="verification code")
    except Exception:
        charge.refund()
        raise
    expires_at = now + rules.CODE_TTL
    payload = {
        "user_id": user_id,
        "contact_method_id": contact_method_id,
        "type": str(record.method_type),
        "address": str(record.address),
        "code": code,
        "expires_at": clock.isoformat(expires_at),
        BUDGET_CHARGED: True,
    }
    if record.sealed_destination:  # a webhook-style method: where the code goes, still sealed
        payload["sealed_destination"] = str(record.sealed_destination)
    publish(Message(SEND_VERIFICATION, organization_id, payload))
    return VerificationSent(
        contact_method_id=contact_method_id,
        type=str(record.method_type),
        address=str(record.address),
        expires_at=expires_at,
        resend_available_at=now + rules.RESEND_COOLDOWN,
        attempts_allowed=rules.MAX_ATTEMPTS,
    )


def verify(
    *, organization_id: str, user_id: str, contact_method_id: str, code: str, now: datetime, settings: Settings
) -> ContactMethod:
    """Check the code: verified on a match; 400 INVALID_VERIFICATION_CODE (with attempts_left) on a
    miss; 409 NO_VERIFICATION_CODE when none was sent, it expired or its attempts are spent."""
    user = service.get_user(organization_id, user_id)

    def claim_attempt() -> ContactRecord:
        record = _record(organization_id, user, contact_method_id, now)
        _check_needs_verification(record)
        rules.check_code_usable(
            digest=record.code_digest,
            expires_at=record.code_expires_at,
            attempts=int(record.code_attempts or 0),
            now=now,
        )
        claim = (
            (ContactRecord.code_digest == record.code_digest)
            & (ContactRecord.code_attempts < rules.MAX_ATTEMPTS)
            & (ContactRecord.code_expires_at > now)
        )
        if not update_if(record, [ContactRecord.code_attempts.add(1)], claim):
            raise RetryableConflict()  # re-read: spent, expired or replaced meanwhile
        return record  # now holds the stored values after the claim

    record = retry_on_conflict(claim_attempt, what="verification code")
    stored_digest = str(record.code_digest)
    if not rules.code_matches(stored_digest, _digest(record, code, settings=settings)):
        left = max(0, rules.MAX_ATTEMPTS - int(record.code_attempts or 0))
        advice = "send a new code" if left == 0 else f"{left} attempt{'s' if left != 1 else ''} left"
        raise InvalidVerificationCode(f"The verification code is wrong; {advice}.", details={"attempts_left": left})
    done = [
        ContactRecord.verified.set(True),
        assign(ContactRecord.address_key, rules.address_key(str(record.method_type), str(record.address), True)),
        assign(ContactRecord.code_digest, None),
        assign(ContactRecord.code_expires_at, None),
        assign(ContactRecord.code_attempts, None),
        assign(ContactRecord.updated_at, now),
    ]
    # The same code still stands: a new send or a new address since the claim voids this match.
    if not update_if(record, done, ContactRecord.code_digest == stored_digest):
        raise rules.no_code("replaced")
    return to_method(record, user)
