"""Actions from chat and push pages: an ntfy notification's buttons
(`POST /integrations/page-actions/{token}`) and a Mattermost page's buttons
(`POST /integrations/mattermost/actions`). The credential kinds (chalicelib/api/page_action_tokens.py)
verify the signed link; chalicelib/paging/link_actions.py spends it once and acts as its person.
"""

from __future__ import annotations

import json
from typing import Any

from chalice.app import Response

from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import NO_BUCKET, Call, OperationGroup
from chalicelib.api.page_action_tokens import MATTERMOST_ACTION_TOKEN, PAGE_ACTION_LINK, PUSHOVER_RECEIPT
from chalicelib.notification.hook_links import MATTERMOST_ACTIONS_PATH, TAP_PATH
from chalicelib.notification.pushover import CALLBACK_PATH as PUSHOVER_CALLBACK_PATH

api = OperationGroup(__name__, tag="webhooks")

_ONCE = (
    "Each link works once: a replay is 409 CONFLICT and changes nothing. A forged or mangled link, or one of "
    "another channel, is 401 INVALID_SIGNATURE; one past its 24 hours 401 SIGNATURE_EXPIRED. The person acts with "
    "their own role: a viewer is answered `done: false` and why."
)


def _json(body: dict[str, Any]) -> Response:
    return Response(body=json.dumps(body), status_code=200, headers={"Content-Type": "application/json"})


@api.raw(
    "POST",
    TAP_PATH + "/{token}",
    operation_id="actFromPushNotification",
    credential=PAGE_ACTION_LINK,
    bucket=NO_BUCKET,
    family=ErrorFamily.WEBHOOK,
    summary="An action button of a push page (ntfy): acknowledge or resolve as the person paged",
    description="The URL is the signed single-use link the page carried (the body is ignored). 200 "
    "`{done, message, incident_number}`. " + _ONCE,
    errors=(401, 409),
)
def act_from_push(call: Call) -> Response:
    from chalicelib.paging.link_actions import act

    outcome = act(call.credential, call.now, settings=call.settings)
    return _json({"done": outcome.done, "message": outcome.message, "incident_number": outcome.incident_number})


@api.raw(
    "POST",
    MATTERMOST_ACTIONS_PATH,
    operation_id="mattermostAction",
    credential=MATTERMOST_ACTION_TOKEN,
    bucket=NO_BUCKET,
    family=ErrorFamily.WEBHOOK,
    summary="A Mattermost page's Acknowledge, Resolve or Escalate button",
    description="Mattermost posts the button's `integration.context`: the organization's Mattermost token and "
    "the signed link of the action (another organization's token is refused). 200 with Mattermost's answer: "
    "`update.message` says who did what when something was done, `ephemeral_text` tells the presser. " + _ONCE,
    errors=(400, 401, 409, 413),
)
def mattermost_action(call: Call) -> Response:
    from chalicelib.paging.link_actions import act, mattermost_answer

    return _json(mattermost_answer(act(call.credential, call.now, settings=call.settings)))


@api.raw(
    "POST",
    PUSHOVER_CALLBACK_PATH + "/{token}",
    operation_id="pushoverAcknowledged",
    credential=PUSHOVER_RECEIPT,
    bucket=NO_BUCKET,
    family=ErrorFamily.WEBHOOK,
    summary="Pushover's callback: an emergency page acknowledged on the phone acknowledges the incident",
    description="Pushover posts its form (`receipt`, `acknowledged`, `acknowledged_at`, `acknowledged_by`, ...) to "
    "the callback URL the page named: a signed link to acknowledge, for the person paged. The `receipt` must be "
    "the one Pushover answered when the page was sent, else 401 INVALID_SIGNATURE. 200 `{done, message, "
    "incident_number}`. " + _ONCE,
    errors=(400, 401, 409, 413),
)
def pushover_acknowledged(call: Call) -> Response:
    from chalicelib.paging.link_actions import act

    outcome = act(call.credential, call.now, settings=call.settings)
    return _json({"done": outcome.done, "message": outcome.message, "incident_number": outcome.incident_number})
