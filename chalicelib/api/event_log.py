"""The integrations' event log, as the request pipeline's after-answer step.

A route family declares it once (`record_requests_of(family)`: the inbound webhooks and the
PagerDuty drop-ins do; an Opsgenie family would, with a credential kind that admits through
chalicelib.api.routing_keys). Then every answer of that family whose credential named an
integration (`admission.named`: admitted, or refused at the gate, its signature, its rate limit)
is recorded on that integration with one write (chalicelib.eventlog.service.record), what its
handler left on the call (`call.outcome`) or the error answered. A request whose routing key
names no integration (404, a PagerDuty body without a key) names none and is not recorded; nor
are the family's other routes (Slack, voice, heartbeat pings, the calendar feed), whose
credentials name no integration.

The answer is made before the step runs: a failing write is logged and changes nothing.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from chalice.app import Response

from chalicelib.api.admission import Admission
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import Operation
from chalicelib.api.pipeline import Answered, after_answer
from chalicelib.errors import AppError, RateLimited
from chalicelib.eventlog import outcome, service, slots
from chalicelib.eventlog.capture import SignatureState
from chalicelib.eventlog.outcome import Outcome
from chalicelib.integration.gate import DELIVERY_BUCKET, Admitted
from chalicelib.integration.tables import IntegrationRecord

logger = logging.getLogger("tocsin.eventlog")
_DECLARED: set[ErrorFamily] = set()


def record_requests_of(*families: ErrorFamily) -> None:
    """Record every request of these families that names an integration (once per family)."""
    for family in families:
        if family not in _DECLARED:
            _DECLARED.add(family)
            after_answer(family)(record_request)


def record_request(answered: Answered) -> None:
    integration = answered.admission.named
    if not isinstance(integration, IntegrationRecord):
        return
    admission, error = answered.admission, answered.error
    received = received_of(admission, answered.operation, integration, signature_of(admission, error))
    answer = answer_of(answered.response, error, answered.outcome)
    slot = slots.slot_for(
        admission.inbound.now,
        hits=_delivery_hits(admission),
        rate_limited=isinstance(error, RateLimited),
        window_seconds=admission.inbound.settings.rate_limit_window_seconds,
    )
    try:
        service.record(received, answer, slot)
    except Exception:
        # Never the sender's problem: its answer is already made.
        logger.exception("event log: could not record a request to integration %s", integration.integration_id)


def received_of(
    admission: Admission, operation: Operation, integration: IntegrationRecord, signature: SignatureState | None
) -> service.Received:
    inbound = admission.inbound
    return service.Received(
        integration_id=integration.integration_id,
        organization_id=integration.organization_id,
        operation_id=operation.operation_id,
        method=operation.method,
        route=operation.path,
        source_address=inbound.source_ip,
        headers={str(name): str(value) for name, value in inbound.request.headers.items()},
        body=inbound.raw_body,
        received_at=inbound.now,
        signature=signature,
    )


def answer_of(response: Response, error: AppError | None, handled: Outcome | None) -> service.Answer:
    said = outcome.of_error(error, handled) if error is not None else (handled or Outcome("accepted"))
    return service.Answer(status=response.status_code, body=_json(response.body), outcome=said)


def signature_of(admission: Admission, error: AppError | None) -> SignatureState | None:
    """valid: checked and good; invalid: refused for it; None: none was checked."""
    if error is not None and outcome.refused_for_signature(error.code):
        return "invalid"
    admitted = admission.credential
    if isinstance(admitted, Admitted) and admitted.signed:
        return "valid"
    return None


def _delivery_hits(admission: Admission) -> int | None:
    """The request's count in its routing key's bucket this window, when it was counted there."""
    decision = admission.decision
    if decision is None or decision.category != DELIVERY_BUCKET:
        return None
    return decision.hits


def _json(body: Any) -> Any:
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    if not isinstance(body, str) or not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None
