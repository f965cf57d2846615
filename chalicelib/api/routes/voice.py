"""The page call's callback: POST /integrations/voice/callback, where Twilio posts the key the
person pressed. Outside the API envelope: the answer is TwiML (text/xml, as Twilio reads it); a request that
is not the provider's, or whose URL we did not issue, is refused with 401 in the webhook body
(chalicelib/paging/voice_callback.py holds the rules)."""

from __future__ import annotations

import urllib.parse

from chalice.app import Request, Response

from chalicelib import clock
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.routing import ApiBlueprint, raw_operation
from chalicelib.errors import InvalidPayload, PayloadTooLarge
from chalicelib.notification.voice_link import CALLBACK_PATH

api = ApiBlueprint(__name__, tag="integrations")
MAX_FORM_BYTES = 16 * 1024  # Twilio's callback form is well under 2 KiB
MAX_FORM_FIELDS = 100


def _form(request: Request) -> list[tuple[str, str]]:
    raw = request.raw_body or b""
    body = raw.encode() if isinstance(raw, str) else raw
    if len(body) > MAX_FORM_BYTES:
        raise PayloadTooLarge("The callback form is too large.")
    try:
        text = body.decode("utf-8")
        return urllib.parse.parse_qsl(
            text, keep_blank_values=True, strict_parsing=False, max_num_fields=MAX_FORM_FIELDS
        )
    except (UnicodeDecodeError, ValueError):
        raise InvalidPayload("The callback form is not UTF-8 form-encoded fields.") from None


@raw_operation(
    api,
    "POST",
    CALLBACK_PATH,
    operation_id="answerVoiceCallback",
    error_family=ErrorFamily.WEBHOOK,
    response_content_type="text/xml",
    content_types=["*/*"],
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
def answer_voice_callback(request: Request, path: dict[str, str]) -> Response:
    from chalicelib.paging.voice_callback import answer_key

    form = _form(request)
    query = {name: str(value) for name, value in (request.query_params or {}).items()}
    twiml = answer_key(
        query=query,
        form=form,
        signature=request.headers.get("x-twilio-signature", ""),
        now=clock.now(),
    )
    return Response(body=twiml, status_code=200, headers={"Content-Type": "text/xml; charset=utf-8"})
