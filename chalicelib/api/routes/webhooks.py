"""Inbound webhooks: POST /webhooks/{routingKey} (and its older forms) and the PagerDuty Events
API v2 drop-in, POST /v2/enqueue. Outside the API envelope: the routing key is the credential
(chalicelib.api.routing_keys: the integration gate and its buckets, checked by the request
pipeline before a handler runs); handlers raise the errors of chalicelib.errors like any, and
the pipeline renders them in the webhook body or PagerDuty's (chalicelib.api.error_render).
Each handler leaves what became of the delivery on its call (`call.outcome`) for the
integration's event log, which the pipeline writes after the answer (chalicelib.api.event_log)."""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from datetime import datetime
from typing import Any

from chalice.app import Response

from chalicelib.api import event_log
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import CREDENTIAL_BUCKET, Call, OperationGroup
from chalicelib.api.routing_keys import ROUTING_KEY_IN_BEARER, ROUTING_KEY_IN_PAGERDUTY_BODY, ROUTING_KEY_IN_PATH
from chalicelib.errors import AppError, DeliveryRejected, InternalError, InvalidPayload, ServiceUnavailable
from chalicelib.eventlog import outcome
from chalicelib.eventlog.outcome import Outcome
from chalicelib.idempotency.service import StoredResponse
from chalicelib.incident.tables import IncidentRecord
from chalicelib.integration import fetch
from chalicelib.integration.gate import Admitted
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
from chalicelib.settings import Settings

logger = logging.getLogger("tocsin.webhooks")
api = OperationGroup(__name__, tag="webhooks")
event_log.record_requests_of(ErrorFamily.WEBHOOK, ErrorFamily.PAGERDUTY)

WEBHOOK_ERRORS = (400, 401, 403, 404, 409, 410, 413, 429, 503)
UNEXPECTED = "The delivery could not be processed; retry it."


def json_answer(status: int, body: dict[str, Any]) -> Response:
    return Response(
        body=json.dumps(body, default=str), status_code=status, headers={"Content-Type": "application/json"}
    )


def _incident_body(incident: IncidentRecord | None, *, settings: Settings) -> WebhookIncidentV1 | None:
    if incident is None:
        return None
    base = settings.public_base_url.rstrip("/")
    return WebhookIncidentV1(
        id=incident.incident_number,
        title=incident.title,
        severity=incident.severity,
        status=incident.status,
        url=f"{base}/api/v1/incidents/{incident.incident_number}",
    )


def _parse(call: Call, source_type: str) -> NormalizedAlert:
    settings = call.settings
    from chalicelib.integration.parsers import parse

    admitted: Admitted = call.credential
    integration = admitted.integration
    try:
        return parse(
            source_type,
            dict(call.request.headers),
            call.raw_body,
            # HMAC signatures (custom, Sentry) were verified by the gate, before any bucket was charged.
            fetch_certificate=lambda url: fetch.fetch_certificate(url, settings=settings),
            allowed_cert_host_pattern=settings.sns_cert_host_pattern,
            allow_http_cert_url=settings.is_local and settings.local_allow_http_sns_certs,
            expected_topic_arn=integration.expected_topic_arn,
        )
    except DeliveryRejected as rejected:
        if rejected.retryable:
            # Not the sender's fault yet (the SNS certificate could not be fetched): a 503 with
            # Retry-After makes the provider retry, where a 4xx would drop the delivery. A
            # certificate the host says does not exist was a 401 already (a forgery).
            raise ServiceUnavailable(f"{rejected.message} Retry the delivery.") from None
        raise


def _ingest(admitted: Admitted, alert: NormalizedAlert, now: datetime, *, settings: Settings) -> IngestResult:
    try:
        return ingest(AlertOrigin.of(admitted.integration), alert, now=now, settings=settings)
    except DeliveryRejected:
        raise
    except AppError as error:
        # The domain's own refusals (e.g. a title it will not store) are the sender's payload problem.
        if error.status >= 500:
            raise InternalError(error.message) from None
        raise InvalidPayload(error.message) from None


REPLAY_MESSAGE = "replay of an earlier delivery (same timestamp and signature); nothing new was done"


def _accepted(call: Call, result: IngestResult, delivered: NormalizedAlert) -> StoredResponse:
    warnings = (*delivered.warnings, *result.warnings)  # the parser's, then what ingesting said
    call.outcome = outcome.of_ingest(result, action=delivered.action, title=delivered.title, warnings=warnings)
    alert = result.alert
    accepted = WebhookAcceptedV1(
        incident=_incident_body(result.incident, settings=call.settings),
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


def _deliver(call: Call, source_type: str | None = None) -> Response:
    admitted: Admitted = call.credential
    alert = _parse(call, source_type or admitted.integration.integration_type)
    # What is known before ingesting, kept should ingesting refuse it.
    call.outcome = Outcome("accepted", action=alert.action, title=alert.title, warnings=alert.warnings)
    if alert.action == "confirm_subscription" and alert.subscribe_url:
        fetch.confirm_subscription(alert.subscribe_url, settings=call.settings)
        call.outcome = Outcome("accepted", action=alert.action, message="subscription confirmed")
        confirmed = WebhookAcceptedV1(incident=None, deduplicated=False, message="subscription confirmed")
        return json_answer(200, confirmed.model_dump())
    if alert.action == "ignore":
        call.outcome = Outcome("accepted", action=alert.action, message="nothing to do for this delivery")
        ignored = WebhookAcceptedV1(incident=None, deduplicated=False, message="nothing to do for this delivery")
        return json_answer(200, ignored.model_dump())
    answer, replayed = deliver_once(
        integration=admitted.integration,
        signature=admitted.signature,
        body=call.raw_body,
        now=call.now,
        deliver=lambda: _accepted(call, _ingest(admitted, alert, call.now, settings=call.settings), alert),
    )
    if replayed:
        # The same signed request again (a retry or a replay): the first delivery's incident, as a dedup.
        body = {**answer.body, "deduplicated": True, "message": REPLAY_MESSAGE}
        call.outcome = _replayed(alert, body)
        return json_answer(200, body)
    return json_answer(answer.status, answer.body)


def _replayed(alert: NormalizedAlert, body: dict[str, Any]) -> Outcome:
    incident, counted = body.get("incident") or {}, body.get("alert") or {}
    return Outcome(
        "deduplicated",
        action=alert.action,
        title=alert.title,
        message=REPLAY_MESSAGE,
        warnings=tuple(body.get("warnings") or ()),
        incident_number=incident.get("id"),
        alert_id=counted.get("id"),
    )


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


@api.raw(
    "POST",
    "/webhooks/{routing_key}",
    operation_id="deliverWebhook",
    credential=ROUTING_KEY_IN_PATH,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.WEBHOOK,
    unexpected=UNEXPECTED,
    body=WebhookPayloadV1,
    summary="Inbound webhook of an integration",
    description=_DESCRIPTION,
    response=WebhookAcceptedV1,
    status=201,
    other_statuses=(200, 202),
    errors=WEBHOOK_ERRORS,
    headers=("X-Service-Signature", "X-Service-Timestamp", "Sentry-Hook-Signature"),
)
def deliver(call: Call) -> Response:
    return _deliver(call)


@api.raw(
    "POST",
    "/webhooks/custom/{routing_key}",
    operation_id="deliverCustomWebhook",
    credential=ROUTING_KEY_IN_PATH,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.WEBHOOK,
    unexpected=UNEXPECTED,
    body=WebhookPayloadV1,
    summary="Older form of the inbound webhook URL",
    description=_DESCRIPTION,
    response=WebhookAcceptedV1,
    status=201,
    other_statuses=(200, 202),
    errors=WEBHOOK_ERRORS,
)
def deliver_custom(call: Call) -> Response:
    return _deliver(call)


@api.raw(
    "POST",
    "/v1/incidents",
    operation_id="deliverLegacyIncident",
    credential=ROUTING_KEY_IN_BEARER,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.WEBHOOK,
    unexpected=UNEXPECTED,
    body=WebhookPayloadV1,
    summary="Legacy custom payload; the routing key is sent as Authorization: Bearer <routing key>",
    description=_DESCRIPTION,
    response=WebhookAcceptedV1,
    status=201,
    other_statuses=(200, 202),
    errors=WEBHOOK_ERRORS,
)
def deliver_legacy(call: Call) -> Response:
    return _deliver(call, source_type="legacy")


# --- PagerDuty Events API v2 ---------------------------------------------------------------------


@api.raw(
    "POST",
    "/v2/enqueue",
    operation_id="enqueuePagerDutyEvent",
    credential=ROUTING_KEY_IN_PAGERDUTY_BODY,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.PAGERDUTY,
    unexpected="The event could not be processed; retry it.",
    body=PagerDutyEventV1,
    summary="PagerDuty Events API v2 drop-in",
    description="Answers exactly as PagerDuty does: 202 {status, message, dedup_key}; 400 "
    "{status: 'invalid event', message, errors}; 429 when throttled. A tool that pages PagerDuty "
    "today switches by changing only its URL; routing_key is the integration's routing key.",
    response=PagerDutyAcceptedV1,
    status=202,
    errors=(400, 413, 429),
)
def enqueue(call: Call) -> Response:
    admitted: Admitted = call.credential
    alert = _parse(call, "pagerduty")
    if alert.action == "trigger" and alert.dedup_key is None:
        alert = dataclasses.replace(alert, dedup_key=uuid.uuid4().hex)
    call.outcome = Outcome("accepted", action=alert.action, title=alert.title, warnings=alert.warnings)
    result = _ingest(admitted, alert, call.now, settings=call.settings)
    warnings = (*alert.warnings, *result.warnings)  # not in PagerDuty's answer; the event log keeps them
    call.outcome = outcome.of_ingest(result, action=alert.action, title=alert.title, warnings=warnings)
    return json_answer(202, PagerDutyAcceptedV1(dedup_key=alert.dedup_key or "").model_dump())
