"""The page call's callback: POST /integrations/voice/callback, where Twilio posts the key the
person pressed. Outside the API envelope: the answer is TwiML (text/xml, as Twilio reads it); a request that
is not the provider's, or whose URL we did not issue, is refused with 401 in the webhook body
(chalicelib/paging/voice_callback.py holds the rules)."""

from __future__ import annotations

from chalice.app import Response

from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import NO_BUCKET, Call, OperationGroup
from chalicelib.api.provider_signatures import TWILIO_SIGNATURE, VoiceCallback
from chalicelib.notification.voice_link import CALLBACK_PATH

api = OperationGroup(__name__, tag="integrations")


@api.raw(
    "POST",
    CALLBACK_PATH,
    operation_id="answerVoiceCallback",
    credential=TWILIO_SIGNATURE,
    bucket=NO_BUCKET,
    family=ErrorFamily.WEBHOOK,
    content_type="text/xml",
    summary="A key pressed on a page call (Twilio's Gather callback; answers TwiML)",
    description="Twilio posts its form-encoded fields (`Digits`, `CallSid`, `From`, `To`, ...) to the URL the "
    "call carried: `incident_number`, `organization_id`, `user_id`, `expires` and `token` (Tocsin's own HMAC "
    "over them). `X-Twilio-Signature` must verify with the voice account's auth token over the full URL and "
    "the fields, and the token must be Tocsin's and unexpired, else 401 and nothing changes. Key 4 "
    "acknowledges, 6 resolves, 8 escalates, for the person called; the answer says what happened, and "
    "another key asks again.",
    errors=(400, 401, 413),
    headers=("X-Twilio-Signature",),
)
def answer_voice_callback(call: Call) -> Response:
    from chalicelib.paging.voice_callback import answer_press

    callback: VoiceCallback = call.credential
    twiml = answer_press(callback.target, callback.form, call.now, settings=call.settings)
    return Response(body=twiml, status_code=200, headers={"Content-Type": "text/xml; charset=utf-8"})
