"""A user's contact methods (email, Slack, SMS, voice), their verification, and notification rules.

A person manages their own with any credential of theirs (a personal API key or a session), no
scope needed; reading someone else's needs `users:read`, changing it `users:write` (owners and
admins). docs/CONTACTS.md describes the rules.
"""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
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
from chalicelib.oncall.models import DeletedV1
from chalicelib.pagination import Page, paginate

api = OperationGroup(__name__, tag="contacts")

METHODS = "/api/v1/users/{user_id}/contact-methods"
METHOD = METHODS + "/{contact_method_id}"
RULES = "/api/v1/users/{user_id}/notification-rules"
SELF = "user_id"


@api.operation(
    "GET",
    METHODS,
    operation_id="listContactMethods",
    summary="List a user's contact methods, oldest first",
    scope="users:read",
    self_param=SELF,
    query=ContactMethodListQuery,
    response=Page[ContactMethodV1],
    errors=(400, 404),
    description="A user who has none yet gets the defaults on this first read: the account email, plus Slack "
    "when the user has a slack_user_id.",
)
def list_contact_methods(call: Call) -> Page[ContactMethodV1]:
    query: ContactMethodListQuery = call.query
    found = service.list_methods(organization_id=call.principal.organization_id, user_id=call.path[SELF], now=call.now)
    return paginate([ContactMethodV1.of(m) for m in found], limit=query.limit, offset=query.offset)


@api.operation(
    "POST",
    METHODS,
    operation_id="createContactMethod",
    summary="Add a contact method; phone numbers and webhook URLs start unverified",
    scope="users:write",
    self_param=SELF,
    body=ContactMethodCreate,
    response=ContactMethodV1,
    status=201,
    errors=(400, 404, 409),
    description="409 when the user already has this (type, address) or has 20 methods. A webhook-style "
    "method (teams, mattermost, ntfy, discord, google_chat) is a URL checked as outbound webhooks' are (https "
    "to a public address; 400 naming `address` otherwise); it is a secret, answered only as a hint.",
)
def create_contact_method(call: Call) -> ContactMethodV1:
    body: ContactMethodCreate = call.body
    method = service.create_method(
        organization_id=call.principal.organization_id,
        user_id=call.path[SELF],
        method_type=body.type,
        address=body.address,
        label=body.label,
        now=call.now,
        secret=body.secret,
    )
    return ContactMethodV1.of(method)


@api.operation(
    "GET",
    METHOD,
    operation_id="getContactMethod",
    summary="Get a contact method",
    scope="users:read",
    self_param=SELF,
    response=ContactMethodV1,
    errors=(404,),
)
def get_contact_method(call: Call) -> ContactMethodV1:
    method = service.get_method(
        organization_id=call.principal.organization_id,
        user_id=call.path[SELF],
        contact_method_id=call.path["contact_method_id"],
        now=call.now,
    )
    return ContactMethodV1.of(method)


@api.operation(
    "PATCH",
    METHOD,
    operation_id="updateContactMethod",
    summary="Change a contact method's label or address (a new phone number must be verified again)",
    scope="users:write",
    self_param=SELF,
    body=ContactMethodPatch,
    response=ContactMethodV1,
    errors=(400, 404, 409),
)
def update_contact_method(call: Call) -> ContactMethodV1:
    body: ContactMethodPatch = call.body
    method = service.update_method(
        organization_id=call.principal.organization_id,
        user_id=call.path[SELF],
        contact_method_id=call.path["contact_method_id"],
        now=call.now,
        **body.changes(),
    )
    return ContactMethodV1.of(method)


@api.operation(
    "DELETE",
    METHOD,
    operation_id="deleteContactMethod",
    summary="Delete a contact method and every notification rule step that names it",
    scope="users:write",
    self_param=SELF,
    response=DeletedV1,
    errors=(404, 409),
)
def delete_contact_method(call: Call) -> DeletedV1:
    contact_method_id = call.path["contact_method_id"]
    service.delete_method(
        organization_id=call.principal.organization_id,
        user_id=call.path[SELF],
        contact_method_id=contact_method_id,
        now=call.now,
    )
    return DeletedV1(id=contact_method_id, deleted=True)


@api.operation(
    "POST",
    METHOD + "/send-verification",
    operation_id="sendContactMethodVerification",
    summary="Send a 6-digit code to an sms or voice number (valid 10 minutes; a new one voids the last)",
    scope="users:write",
    self_param=SELF,
    response=VerificationSentV1,
    status=202,
    errors=(404, 409, 429),
    description="409 for email and Slack methods (verified when added) and for a verified number. "
    "429 RATE_LIMITED with Retry-After within 30 s of the last code, past 5 codes an hour to the method, or past "
    "the outbound budget: codes to one number (3 an hour, whatever organization or method asks) and codes one "
    "person asks for (5 an hour); details.limit names the limit (GET /api/v1/settings/limits).",
)
def send_verification(call: Call) -> VerificationSentV1:
    sent = verification.send_verification(
        organization_id=call.principal.organization_id,
        user_id=call.path[SELF],
        contact_method_id=call.path["contact_method_id"],
        now=call.now,
    )
    return VerificationSentV1.of(sent)


@api.operation(
    "POST",
    METHOD + "/verify",
    operation_id="verifyContactMethod",
    summary="Verify an sms or voice number with the code sent to it",
    scope="users:write",
    self_param=SELF,
    body=VerificationCode,
    response=ContactMethodV1,
    errors=(400, 404, 409),
    description="A wrong code is a 400 INVALID_VERIFICATION_CODE with details.attempts_left; after 5 wrong "
    "codes the code is void. 409 NO_VERIFICATION_CODE (details.reason: not_sent, expired, attempts_exhausted, "
    "replaced) when no code can be checked: send a new one. 409 CONFLICT for a verified or email/Slack method.",
)
def verify_contact_method(call: Call) -> ContactMethodV1:
    body: VerificationCode = call.body
    method = verification.verify(
        organization_id=call.principal.organization_id,
        user_id=call.path[SELF],
        contact_method_id=call.path["contact_method_id"],
        code=body.code,
        now=call.now,
    )
    return ContactMethodV1.of(method)


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
