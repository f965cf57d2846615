"""Inbound webhooks: POST /webhooks/{routingKey} (and its older forms) and the PagerDuty Events
API v2 drop-in, POST /v2/enqueue. Outside the API envelope: they raise the errors of
chalicelib.errors like any view, and the view wrapper renders them in the webhook body or
PagerDuty's (chalicelib.api.error_render)."""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from datetime import datetime
from typing import Any

from chalice.app import Request, Response

from chalicelib import clock
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.routing import ApiBlueprint, raw_operation, source_ip, unexpected_error
from chalicelib.errors import (
    AppError,
    DeliveryRejected,
    InternalError,
    InvalidPayload,
    RouteNotFound,
    ServiceUnavailable,
)
from chalicelib.idempotency.service import StoredResponse
from chalicelib.incident.tables import IncidentRecord
from chalicelib.integration import fetch
from chalicelib.integration.gate import Admitted, admit
from chalicelib.integration.ingest import IngestResult, ingest
from chalicelib.integration.models import (
    PagerDutyAcceptedV1,
    PagerDutyEventV1,
    WebhookAcceptedV1,
    WebhookAlertV1,
    WebhookIncidentV1,
    WebhookPayloadV1,
)
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.integration.replay import deliver_once
from chalicelib.json_body import JsonBodyError, read_json
from chalicelib.settings import get_settings

logger = logging.getLogger("tocsin.webhooks")
api = ApiBlueprint(__name__, tag="webhooks")

WEBHOOK_ERRORS = (400, 401, 403, 404, 409, 410, 413, 429, 503)
CONTENT_TYPES = ["*/*"]  # SNS posts JSON as text/plain


def _raw_body(request: Request) -> bytes:
    raw = request.raw_body or b""
    return raw.encode() if isinstance(raw, str) else raw


def _json(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    return Response(
        body=json.dumps(body, default=str),
        status_code=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


def _incident_body(incident: IncidentRecord | None) -> WebhookIncidentV1 | None:
    if incident is None:
        return None
    base = get_settings().public_base_url.rstrip("/")
    return WebhookIncidentV1(
        id=incident.incident_number,
        title=incident.title,
        severity=incident.severity,
        status=incident.status,
        url=f"{base}/api/v1/incidents/{incident.incident_number}",
    )


def _parse(admitted: Admitted, request: Request, source_type: str, body: bytes, now: Any) -> NormalizedAlert:
    from chalicelib.integration.parsers import parse

    integration = admitted.integration
    settings = get_settings()
    try:
        return parse(
            source_type,
            dict(request.headers),
            body,
            now=now,
            # HMAC signatures (custom, Sentry) were verified by the gate, before any bucket was charged.
            signing_secret=None,
            client_secret=None,
            fetch_certificate=fetch.fetch_certificate,
            allowed_cert_host_pattern=settings.sns_cert_host_pattern,
            allow_http_cert_url=settings.is_local and settings.local_allow_http_sns_certs,
            expected_topic_arn=integration.expected_topic_arn,
        )
    except DeliveryRejected as rejected:
        if rejected.retryable:
            # Not the sender's fault yet (the SNS certificate could not be fetched): a 503 with
            # Retry-After makes the provider retry, where a 4xx would drop the delivery. A
            # certificate the host says does not exist was a 401 already (a forgery).
            raise ServiceUnavailable(
                f"{rejected.message} Retry the delivery.", headers=admitted.rate.headers()
            ) from None
        rejected.headers.update(admitted.rate.headers())
        raise


def _ingest(admitted: Admitted, alert: NormalizedAlert, now: Any) -> IngestResult:
    try:
        return ingest(AlertOrigin.of(admitted.integration), alert, now=now)
    except DeliveryRejected as rejected:
        rejected.headers.update(admitted.rate.headers())
        raise
    except AppError as error:
        # The domain's own refusals (e.g. a title it will not store) are the sender's payload problem.
        if error.status >= 500:
            raise InternalError(error.message, headers=admitted.rate.headers()) from None
        raise InvalidPayload(error.message, headers=admitted.rate.headers()) from None


REPLAY_MESSAGE = "replay of an earlier delivery (same timestamp and signature); nothing new was done"


def _accepted(result: IngestResult, warnings: tuple[str, ...]) -> StoredResponse:
    alert = result.alert
    accepted = WebhookAcceptedV1(
        incident=_incident_body(result.incident),
        deduplicated=result.deduplicated,
        message=result.note,
        alert=WebhookAlertV1(id=alert.alert_id, status=alert.status, count=int(alert.event_count))
        if alert is not None
        else None,
        grouped=result.grouped,
        suppressed=result.suppressed,
        dropped=result.dropped,
        warnings=list(warnings),
    )
    return StoredResponse(status=_status_of(result), body=accepted.model_dump())


def _status_of(result: IngestResult) -> int:
    """201 an incident opened; 202 suppressed or dropped (nothing pages); 200 otherwise."""
    if result.created:
        return 201
    if result.suppressed or result.dropped:
        return 202
    return 200


def _deliver(request: Request, routing_key: str, source_type: str | None = None) -> Response:
    now = clock.now()
    body = _raw_body(request)
    admitted: Admitted | None = None
    try:
        admitted = admit(
            routing_key=routing_key,
            forwarded_proto=request.headers.get("x-forwarded-proto"),
            source_ip=source_ip(request),
            body_size=len(body),
            now=now,
            headers=dict(request.headers),
            body=body,
            source_type=source_type,
        )
        alert = _parse(admitted, request, source_type or admitted.integration.integration_type, body, now)
        headers = admitted.rate.headers()
        if alert.action == "confirm_subscription" and alert.subscribe_url:
            fetch.confirm_subscription(alert.subscribe_url)
            return _json(
                200,
                WebhookAcceptedV1(incident=None, deduplicated=False, message="subscription confirmed").model_dump(),
                headers,
            )
        if alert.action == "ignore":
            return _json(
                200,
                WebhookAcceptedV1(
                    incident=None, deduplicated=False, message="nothing to do for this delivery"
                ).model_dump(),
                headers,
            )
        verified = admitted  # narrowed for the closure
        answer, replayed = deliver_once(
            integration=verified.integration,
            signature=verified.signature,
            body=body,
            now=now,
            deliver=lambda: _accepted(_ingest(verified, alert, now), alert.warnings),
        )
    except AppError as error:
        if admitted is not None:
            error.headers = {**admitted.rate.headers(), **error.headers}
        raise
    except Exception as unexpected:
        raise unexpected_error(
            "webhook delivery", unexpected, message="The delivery could not be processed; retry it."
        ) from unexpected
    if replayed:
        # The same signed request again (a retry or a replay): the first delivery's incident, as a dedup.
        replay_body = {**answer.body, "deduplicated": True, "message": REPLAY_MESSAGE}
        return _json(200, replay_body, headers)
    return _json(answer.status, answer.body, headers)


_DESCRIPTION = (
    "The routing key in the URL is the credential. The body is the provider's own format for native "
    "integrations (New Relic, Sentry, Alertmanager/Grafana, CloudWatch through SNS, PagerDuty Events v2) "
    "or the custom schema. Every accepted event creates or updates an alert (GET /api/v1/alerts). 201 when an "
    "incident was created; 200 when an existing one was updated (deduplicated, or grouped by the service's "
    "alert_grouping) or nothing needed doing; 202 with suppressed: true (an event rule or a maintenance window: "
    "recorded, no incident, nobody paged) or dropped: true (an event rule: nothing recorded), incident null. "
    "Errors: ROUTE_NOT_FOUND 404, WEBHOOK_REVOKED 410, "
    "INVALID_PAYLOAD 400, INVALID_SIGNATURE and SIGNATURE_EXPIRED 401, IP_NOT_ALLOWED and HTTPS_REQUIRED 403, "
    "PAYLOAD_TOO_LARGE 413 (over 256 KiB), RATE_LIMITED 429 (100 per minute per routing key), "
    "SERVICE_UNAVAILABLE 503 with Retry-After (an SNS signing certificate could not be fetched; retry)."
)


@raw_operation(
    api,
    "POST",
    "/webhooks/{routing_key}",
    operation_id="deliverWebhook",
    body=WebhookPayloadV1,
    error_family=ErrorFamily.WEBHOOK,
    summary="Inbound webhook of an integration",
    description=_DESCRIPTION,
    response=WebhookAcceptedV1,
    status=201,
    other_statuses=(200, 202),
    errors=WEBHOOK_ERRORS,
    headers=("X-Service-Signature", "X-Service-Timestamp", "Sentry-Hook-Signature"),
)
def deliver(request: Request, path: dict[str, str]) -> Response:
    return _deliver(request, path["routing_key"])


@raw_operation(
    api,
    "POST",
    "/webhooks/custom/{routing_key}",
    operation_id="deliverCustomWebhook",
    body=WebhookPayloadV1,
    error_family=ErrorFamily.WEBHOOK,
    summary="Older form of the inbound webhook URL",
    description=_DESCRIPTION,
    response=WebhookAcceptedV1,
    status=201,
    other_statuses=(200, 202),
    errors=WEBHOOK_ERRORS,
)
def deliver_custom(request: Request, path: dict[str, str]) -> Response:
    return _deliver(request, path["routing_key"])


@raw_operation(
    api,
    "POST",
    "/v1/incidents",
    operation_id="deliverLegacyIncident",
    body=WebhookPayloadV1,
    error_family=ErrorFamily.WEBHOOK,
    summary="Legacy custom payload; the routing key is sent as Authorization: Bearer <routing key>",
    description=_DESCRIPTION,
    response=WebhookAcceptedV1,
    status=201,
    other_statuses=(200, 202),
    errors=WEBHOOK_ERRORS,
)
def deliver_legacy(request: Request, path: dict[str, str]) -> Response:
    scheme, _, credential = (request.headers.get("authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        raise RouteNotFound("Send the routing key as Authorization: Bearer <routing key>.")
    return _deliver(request, credential.strip(), source_type="legacy")


# --- PagerDuty Events API v2 ---------------------------------------------------------------------


def admit_pagerduty(request: Request, body: bytes, now: datetime) -> Admitted:
    """The first steps of both PagerDuty drop-ins (events and change events): the body's routing
    key, the gate, and a PagerDuty Events integration behind it."""
    try:
        document = read_json(body) if body else None  # the gate checks the size once the key is known
    except JsonBodyError:
        raise InvalidPayload("Request body is not valid JSON") from None
    routing_key = document.get("routing_key") if isinstance(document, dict) else None
    if not isinstance(routing_key, str) or not routing_key.strip():
        raise InvalidPayload("'routing_key' is missing or blank")
    admitted = admit(
        routing_key=routing_key,
        forwarded_proto=request.headers.get("x-forwarded-proto"),
        source_ip=source_ip(request),
        body_size=len(body),
        now=now,
    )
    if admitted.integration.integration_type != "pagerduty":
        raise InvalidPayload(
            "'routing_key' does not belong to a PagerDuty Events integration", headers=admitted.rate.headers()
        )
    return admitted


@raw_operation(
    api,
    "POST",
    "/v2/enqueue",
    operation_id="enqueuePagerDutyEvent",
    body=PagerDutyEventV1,
    error_family=ErrorFamily.PAGERDUTY,
    summary="PagerDuty Events API v2 drop-in",
    description="Answers exactly as PagerDuty does: 202 {status, message, dedup_key}; 400 "
    "{status: 'invalid event', message, errors}; 429 when throttled. A tool that pages PagerDuty "
    "today switches by changing only its URL; routing_key is the integration's routing key.",
    response=PagerDutyAcceptedV1,
    status=202,
    errors=(400, 413, 429),
)
def enqueue(request: Request, path: dict[str, str]) -> Response:
    now = clock.now()
    body = _raw_body(request)
    try:
        admitted = admit_pagerduty(request, body, now)
        alert = _parse(admitted, request, "pagerduty", body, now)
        if alert.action == "trigger" and alert.dedup_key is None:
            alert = dataclasses.replace(alert, dedup_key=uuid.uuid4().hex)
        _ingest(admitted, alert, now)
    except AppError:
        raise
    except Exception as unexpected:
        raise unexpected_error(
            "PagerDuty event", unexpected, message="The event could not be processed; retry it."
        ) from unexpected
    accepted = PagerDutyAcceptedV1(dedup_key=alert.dedup_key or "")
    return _json(202, accepted.model_dump(), admitted.rate.headers())
