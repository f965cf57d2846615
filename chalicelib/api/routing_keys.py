"""Routing-key credentials: an integration's routing key in the path (`/webhooks/{routing_key}`), in
`Authorization: Bearer` (the legacy `/v1/incidents`), or in the body's `routing_key` (the
PagerDuty Events drop-ins `/v2/enqueue` and `/v2/change/enqueue`).

The integration gate (chalicelib.integration.gate) is the authenticator: the route, revoked,
HTTPS, IP allow-list, size and HMAC signature checks. A delivery past them counts against its
routing key's bucket; one whose signature failed against the unverified bucket of its routing
key and address. The verified subject (`call.credential`) is the gate's `Admitted`.

Every kind names the integration its key found, admitted or refused (`named`: a revoked key, a
forged signature), so the event log records the request on it (chalicelib.api.event_log). A key
that names no integration names nothing. A replayed request is admitted again (`readmit`) by the
same checks, as of now, from its recorded address and headers, but the signature: a replay is
only allowed for a signature that was checked valid, or where none is required
(chalicelib.eventlog.replay).

Another route family whose credential is an integration's key (an Opsgenie `GenieKey`) admits
through `admit_routing_key` to get the same gate, buckets and event log.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.api.credential_kinds import CredentialKind, Inbound, Readmit, Refused, Verified
from chalicelib.errors import AppError, DeliveryRejected, InvalidPayload, RouteNotFound


def admit_routing_key(
    inbound: Inbound,
    routing_key: str,
    *,
    source_type: str | None = None,
    signed: tuple[Mapping[str, str] | None, bytes] | None = None,
) -> Verified:
    """`source_type`: the path's ("legacy"), else the integration's own. `signed`: the headers and
    body its signature is checked over (the request's, unless given)."""
    from chalicelib.integration import gate

    body = inbound.raw_body
    integration = gate.find(routing_key, settings=inbound.settings)
    try:
        gate.check(
            integration,
            forwarded_proto=inbound.header("x-forwarded-proto"),
            source_ip=inbound.source_ip,
            body_size=len(body),
            source_type=source_type,
            settings=inbound.settings,
        )
    except AppError as refused:
        raise Refused(refused, named=integration) from None
    headers, signed_body = signed if signed is not None else (dict(inbound.request.headers), body)
    kind = source_type or integration.integration_type
    try:
        signature = gate.verify_signature(
            integration, kind, headers, signed_body, inbound.now, settings=inbound.settings
        )
    except DeliveryRejected as failed:
        bucket = gate.unverified_bucket(integration, inbound.source_ip)
        raise Refused(failed, bucket=bucket, named=integration) from None
    admitted = gate.Admitted(integration, signature, signed=gate.requires_signature(integration, kind))
    return Verified(subject=admitted, bucket=gate.delivery_bucket(integration), named=integration)


def _readmit(*, source_type: str | None = None, pagerduty: bool = False) -> Readmit:
    def readmit(inbound: Inbound, integration: Any) -> Verified:
        from chalicelib.integration import gate

        gate.check(
            integration,
            forwarded_proto=inbound.header("x-forwarded-proto"),
            source_ip=inbound.source_ip,
            body_size=len(inbound.raw_body),
            source_type=source_type,
            settings=inbound.settings,
        )
        if pagerduty:
            _pagerduty_only(integration.integration_type)
        return Verified(subject=gate.Admitted(integration), named=integration)

    return readmit


def _in_path(inbound: Inbound) -> Verified:
    return admit_routing_key(inbound, inbound.path["routing_key"])


def _in_bearer(inbound: Inbound) -> Verified:
    scheme, _, credential = (inbound.header("authorization") or "").partition(" ")
    if scheme.lower() != "bearer" or not credential.strip():
        raise RouteNotFound("Send the routing key as Authorization: Bearer <routing key>.")
    return admit_routing_key(inbound, credential.strip(), source_type="legacy")


def _in_pagerduty_body(inbound: Inbound) -> Verified:
    """The body's routing_key, which must be a PagerDuty Events integration's."""
    from chalicelib.json_body import JsonBodyError, read_json

    body = inbound.raw_body
    try:
        document = read_json(body) if body else None  # the gate checks the size once the key is known
    except JsonBodyError:
        raise InvalidPayload("Request body is not valid JSON") from None
    routing_key = document.get("routing_key") if isinstance(document, dict) else None
    if not isinstance(routing_key, str) or not routing_key.strip():
        raise InvalidPayload("'routing_key' is missing or blank")
    # A PagerDuty event carries no signature of ours: an integration that requires one refuses it
    # (and the attempt counts as unverified), as on its own webhook URL without the headers.
    verified = admit_routing_key(inbound, routing_key, signed=(None, b""))
    try:
        _pagerduty_only(verified.subject.integration.integration_type)
    except InvalidPayload as refused:
        raise Refused(refused, bucket=verified.bucket, named=verified.named) from None
    return verified


def _pagerduty_only(integration_type: str) -> None:
    if integration_type != "pagerduty":
        raise InvalidPayload("'routing_key' does not belong to a PagerDuty Events integration")


ROUTING_KEY_IN_PATH = CredentialKind("routing_key_in_path", _in_path, readmit=_readmit())
ROUTING_KEY_IN_BEARER = CredentialKind("routing_key_in_bearer", _in_bearer, readmit=_readmit(source_type="legacy"))
ROUTING_KEY_IN_PAGERDUTY_BODY = CredentialKind(
    "routing_key_in_pagerduty_body", _in_pagerduty_body, readmit=_readmit(pagerduty=True)
)
