"""Slack's interactivity endpoint: the Acknowledge, Resolve and Escalate buttons of a Slack page
post here (chalicelib/paging/slack_actions.py says how a click is verified and acted on). Point
the Slack app's "Interactivity Request URL" at {public base URL}/integrations/slack/interactivity.
"""

from __future__ import annotations

import json

from chalice.app import Response

from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import NO_BUCKET, Call, OperationGroup
from chalicelib.api.provider_signatures import SLACK_V0_SIGNATURE
from chalicelib.integration.models import SlackInteractivityAnswerV1
from chalicelib.paging import slack_actions

api = OperationGroup(__name__, tag="webhooks")


def _answer(body: SlackInteractivityAnswerV1) -> Response:
    return Response(body=json.dumps(body.model_dump()), status_code=200, headers={"Content-Type": "application/json"})


@api.raw(
    "POST",
    "/integrations/slack/interactivity",
    operation_id="slackInteractivity",
    credential=SLACK_V0_SIGNATURE,
    bucket=NO_BUCKET,
    family=ErrorFamily.WEBHOOK,
    summary="Slack interactivity: a click on a Slack page's Acknowledge, Resolve or Escalate button",
    description="Slack's block_actions payload, form-encoded (`payload=` JSON), signed with the Slack app's "
    "signing secret: X-Slack-Signature is `v0=` hex HMAC-SHA256 over `v0:{X-Slack-Request-Timestamp}:{raw body}`. "
    "The Slack user acts as the Tocsin user linked to their Slack user id, with that user's permissions, in the "
    "organization the button names only if they belong to it. 200 always once verified: `done` says whether "
    "anything changed and `message` what the person was told (the page's message is updated, or an ephemeral "
    "reply explains why not, e.g. a Slack user not linked to Tocsin). Errors: INVALID_SIGNATURE 401 (missing or "
    "forged), SIGNATURE_EXPIRED 401 (timestamp more than 5 minutes from now), INVALID_PAYLOAD 400.",
    response=SlackInteractivityAnswerV1,
    errors=(400, 401),
    headers=("X-Slack-Signature", "X-Slack-Request-Timestamp"),
)
def slack_interactivity(call: Call) -> Response:
    click = slack_actions.parse_click(call.raw_body)
    if click is None:
        return _answer(SlackInteractivityAnswerV1(done=False, message="Nothing to do for this interaction."))
    outcome = slack_actions.handle_click(click, call.now, teams=call.settings.slack_teams(), settings=call.settings)
    return _answer(
        SlackInteractivityAnswerV1(done=outcome.done, message=outcome.message, incident_number=outcome.incident_number)
    )
