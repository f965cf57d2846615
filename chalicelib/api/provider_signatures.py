"""Signed provider callbacks: the request proves it comes from the provider by its signature, over
the raw body (and for Twilio, the URL we issued). Each kind verifies and hands the verified
payload to its handler (`call.credential`); a refusal is 401 (or 404/413/503 as below), and none
counts against a bucket: the providers retry on their own schedule, and a forgery costs one HMAC.

- Slack v0 (`X-Slack-Signature` over `v0:{timestamp}:{body}`, 5 minutes): chalicelib.paging.slack_actions;
- Twilio (`X-Twilio-Signature` over the URL and form, and Tocsin's token in that URL):
  chalicelib.paging.voice_callback;
- SNS, for the two-way SMS topic (the signing certificate, and the configured topic: any AWS
  account can sign an SNS message): chalicelib.integration.parsers.sns.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from chalicelib.api.credential_kinds import CredentialKind, Inbound, Verified
from chalicelib.errors import DeliveryRejected, InvalidPayload, NotFound, PayloadTooLarge, ServiceUnavailable

if TYPE_CHECKING:
    from chalicelib.notification.voice_link import CallbackTarget

MAX_VOICE_FORM_BYTES = 16 * 1024  # Twilio's callback form is well under 2 KiB
MAX_VOICE_FORM_FIELDS = 100
MAX_SNS_BODY_BYTES = 256 * 1024  # SNS messages are at most 256 KiB


@dataclass(frozen=True)
class VoiceCallback:
    target: CallbackTarget  # the person and incident the call was for
    form: list[tuple[str, str]]  # Twilio's fields (`Digits`, `CallSid`, ...)


def _slack_v0(inbound: Inbound) -> Verified:
    from chalicelib.paging import slack_actions

    slack_actions.verify_signature(
        body=inbound.raw_body,
        timestamp=inbound.header("x-slack-request-timestamp"),
        signature=inbound.header("x-slack-signature"),
        now=inbound.now,
        secret=inbound.settings.slack_signing_key(),
    )
    return Verified()


def _voice_form(body: bytes) -> list[tuple[str, str]]:
    if len(body) > MAX_VOICE_FORM_BYTES:
        raise PayloadTooLarge("The callback form is too large.")
    try:
        return urllib.parse.parse_qsl(
            body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=MAX_VOICE_FORM_FIELDS
        )
    except (UnicodeDecodeError, ValueError):
        raise InvalidPayload("The callback form is not UTF-8 form-encoded fields.") from None


def _twilio(inbound: Inbound) -> Verified:
    from chalicelib.paging.voice_callback import verify_callback

    form = _voice_form(inbound.raw_body)
    query = {name: str(value) for name, value in (inbound.request.query_params or {}).items()}
    signature = inbound.header("x-twilio-signature") or ""
    target = verify_callback(query=query, form=form, signature=signature, now=inbound.now, settings=inbound.settings)
    return Verified(subject=VoiceCallback(target, form))


def _sns_sms_topic(inbound: Inbound) -> Verified:
    from chalicelib.integration import fetch
    from chalicelib.integration.parsers.sns import verify_sns_message

    settings = inbound.settings
    if not settings.sms_inbound_topic_arn:
        raise NotFound("SMS replies are not configured (no SMS_INBOUND_TOPIC_ARN).")
    body = inbound.raw_body
    if len(body) > MAX_SNS_BODY_BYTES:
        raise PayloadTooLarge(f"The body is larger than {MAX_SNS_BODY_BYTES // 1024} KiB.")
    try:
        message = verify_sns_message(
            dict(inbound.request.headers),
            body,
            fetch_certificate=lambda url: fetch.fetch_certificate(url, settings=settings),
            allowed_cert_host_pattern=settings.sns_cert_host_pattern,
            allow_http_cert_url=settings.is_local and settings.local_allow_http_sns_certs,
            expected_topic_arn=settings.sms_inbound_topic_arn,
            now=inbound.now,
        )
    except DeliveryRejected as rejected:
        if rejected.retryable:  # the certificate could not be fetched: SNS retries after a 503
            raise ServiceUnavailable(f"{rejected.message} Retry the delivery.") from None
        raise
    return Verified(subject=message)


SLACK_V0_SIGNATURE = CredentialKind("slack_v0_signature", _slack_v0)
TWILIO_SIGNATURE = CredentialKind("twilio_signature", _twilio)
SNS_SMS_TOPIC_SIGNATURE = CredentialKind("sns_sms_topic_signature", _sns_sms_topic)
