"""A user's contact methods (email, Slack, SMS, voice, the chat and push channels), their
verification, and notification rules.

A person manages their own with any credential of theirs (a personal API key or a session), no
scope needed; reading someone else's needs `users:read`, changing it `users:write` (owners and
admins). docs/CONTACTS.md describes the rules.
"""

from __future__ import annotations

from typing import Any

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.resource import Resource, by_organization, each
from chalicelib.contact import service, verification
from chalicelib.contact.models import (
    ContactMethodCreate,
    ContactMethodListQuery,
    ContactMethodPatch,
    ContactMethodV1,
    NotificationRulesPut,
    NotificationRulesV1,
    VerificationCode,
    VerificationSentV1,
)

api = OperationGroup(__name__, tag="contacts")

RULES = "/api/v1/users/{user_id}/notification-rules"
SELF = "user_id"


def _at_now(call: Call) -> dict[str, Any]:
    """The user's methods are read at `now`: a user who has none gets the defaults on the first read."""
    return {**by_organization(call), "now": call.now}


methods = Resource(
    api,
    "/api/v1/users/{user_id}/contact-methods",
    "contact_method_id",
    ContactMethodV1,
    each(ContactMethodV1.of),
    read="users:read",
    write="users:write",
    self_param=SELF,
    key=_at_now,
)


methods.listing(
    "listContactMethods",
    "List a user's contact methods, oldest first",
    lambda call, _: service.list_methods(**_at_now(call)),
    query=ContactMethodListQuery,
    errors=(400, 404),
    description="A user who has none yet gets the defaults on this first read: the account email, plus Slack "
    "when the user has a slack_user_id.",
)
methods.create(
    "createContactMethod",
    "Add a contact method; phone numbers and webhook URLs start unverified",
    ContactMethodCreate,
    methods.by_key(service.create_method, with_settings=True),
    errors=(400, 404, 409),
    description="409 when the user already has this (type, address) or has 20 methods. A webhook-style "
    "method (teams, mattermost, ntfy, discord, google_chat) is a URL checked as outbound webhooks' are (https "
    "to a public address; 400 naming `address` otherwise), a pushover method a user key; either is a secret, "
    "answered only as a hint.",
)
methods.get("getContactMethod", "Get a contact method", service.get_method)
methods.update(
    "updateContactMethod",
    "Change a contact method's label or address (a new phone number or webhook URL must be verified again)",
    ContactMethodPatch,
    service.update_method,
    with_settings=True,
)
methods.delete(
    "deleteContactMethod",
    "Delete a contact method and every notification rule step that names it",
    service.delete_method,
    errors=(404, 409),
)
methods.act(
    "POST",
    "/send-verification",
    "sendContactMethodVerification",
    "Send a 6-digit code to an sms or voice number or a webhook-style method (valid 10 minutes; a new one voids "
    "the last)",
    verification.send_verification,
    with_settings=True,
    response=VerificationSentV1,
    present=lambda _call, sent: VerificationSentV1.of(sent),
    status=202,
    errors=(404, 409, 429),
    description="409 for email and Slack methods (verified when added) and for a verified number. "
    "429 RATE_LIMITED with Retry-After within 30 s of the last code, past 5 codes an hour to the method, or past "
    "the outbound budget: codes to one number (3 an hour, whatever organization or method asks) and codes one "
    "person asks for (5 an hour); details.limit names the limit (GET /api/v1/settings/limits).",
)


methods.act(
    "POST",
    "/verify",
    "verifyContactMethod",
    "Verify an sms or voice number or a webhook-style method with the code sent to it",
    verification.verify,
    body=VerificationCode,
    with_settings=True,
    errors=(400, 404, 409),
    description="A wrong code is a 400 INVALID_VERIFICATION_CODE with details.attempts_left; after 5 wrong "
    "codes the code is void. 409 NO_VERIFICATION_CODE (details.reason: not_sent, expired, attempts_exhausted, "
    "replaced) when no code can be checked: send a new one. 409 CONFLICT for a verified or email/Slack method.",
)


@api.operation(
    "GET",
    RULES,
    operation_id="getNotificationRules",
    summary="A user's notification rules: for each urgency, which method after how many minutes",
    scope="users:read",
    self_param=SELF,
    response=NotificationRulesV1,
    errors=(404,),
    description="Each step shows its method's type, label, address and verified; unverified steps are "
    "skipped when paging. A new user's rules are email at 0 for both urgencies, plus Slack at 0 when "
    "the user has a slack_user_id.",
)
def get_notification_rules(call: Call) -> NotificationRulesV1:
    found = service.get_rules(organization_id=call.principal.organization_id, user_id=call.path[SELF], now=call.now)
    return NotificationRulesV1.of(found)


@api.operation(
    "PUT",
    RULES,
    operation_id="putNotificationRules",
    summary="Replace a user's notification rules (both urgencies)",
    scope="users:write",
    self_param=SELF,
    body=NotificationRulesPut,
    response=NotificationRulesV1,
    errors=(400, 404, 409),
    description="At most 10 steps per urgency, delays 0 to 1440 minutes; every contact_method_id must be one "
    "of the user's methods and a (method, delay) pair appears once (400 otherwise). Steps are kept by "
    "delay. With `version`, a stale version is a 409.",
)
def put_notification_rules(call: Call) -> NotificationRulesV1:
    body: NotificationRulesPut = call.body
    updated = service.put_rules(
        organization_id=call.principal.organization_id,
        user_id=call.path[SELF],
        high=[step.step() for step in body.high],
        low=[step.step() for step in body.low],
        now=call.now,
        expected_version=body.version,
    )
    return NotificationRulesV1.of(updated)
