"""The Opsgenie Alert API drop-in's use cases, for the Opsgenie integration whose key was admitted
(chalicelib.api.genie_keys): create, acknowledge, close, add a note, read an alert, read what a
request became, ping a heartbeat by name.

Opsgenie processes alert requests after answering 202 with a request id; Tocsin processes them
before it answers, and records what each became (`Outcome`) for GET /v2/alerts/requests/{id}. As
with Opsgenie, an action on an alert that does not exist is accepted, and its request says so
("Alert does not exist", not a success).

A create is a trigger through the one alert pipeline (chalicelib.integration.ingest: event rules,
maintenance, dedup, grouping); its alias is the dedup key, one of Opsgenie's own making (a UUID)
when it names none, as Opsgenie gives every alert an alias. Identifiers (`identifierType`): `id`
(the default) is the alert's id, any alert of the organization; `tiny` its tiny id (alerts this
drop-in created); `alias` the alert the alias names now in this integration (the open one, else
the latest). Acknowledging acknowledges the alert's incident; closing resolves the alert, and its
incident with its last triggered alert; a note is a comment on the alert's incident.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from datetime import datetime
from typing import Final, Literal

from chalicelib.alert.repository import get_alert
from chalicelib.alert.tables import RESOLVED, AlertRecord
from chalicelib.errors import AppError, InternalError, InvalidFields, NotFound
from chalicelib.heartbeat.ping import record_ping
from chalicelib.heartbeat.service import find_by_name
from chalicelib.incident import commands, repository
from chalicelib.incident.models import MAX_COMMENT
from chalicelib.incident.tables import IncidentRecord
from chalicelib.integration.claims import dedup_id, read_claim
from chalicelib.integration.ingest import IngestResult, acknowledge_alert, ingest, resolve_alert
from chalicelib.integration.normalized import NormalizedAlert, clean_text, normalize_dedup_key, truncate
from chalicelib.integration.origin import AlertOrigin
from chalicelib.integration.parsers.opsgenie import ALIAS_MAX, OpsgenieAction, OpsgenieCreate
from chalicelib.integration.tables import IntegrationRecord
from chalicelib.opsgenie import repository as records
from chalicelib.opsgenie.models import OpsgenieAlertV1
from chalicelib.opsgenie.repository import Outcome
from chalicelib.opsgenie.tables import OpsgenieRequestRecord
from chalicelib.opsgenie.view import alert_view
from chalicelib.settings import Settings

Action = Literal["acknowledge", "close", "note"]
ACTION_NAMES: Final[dict[Action, str]] = {"acknowledge": "Acknowledge", "close": "Close", "note": "AddNote"}
IDENTIFIER_TYPES: Final = ("id", "alias", "tiny")
NO_ALERT: Final = "Alert does not exist"
NO_INCIDENT_FOR_NOTE: Final = "The alert has no incident to add the note to (it was suppressed)"
_ALERT_ID = re.compile(r"alr_[0-9a-f]{32}")
_REQUEST_ID = re.compile(r"[0-9A-Za-z-]{1,64}")
_TINY_ID = re.compile(r"[0-9]{1,15}")


def new_request_id() -> str:
    return str(uuid.uuid4())


def create_alert(
    *,
    integration: IntegrationRecord,
    create: OpsgenieCreate,
    source_ip: str,
    request_id: str,
    now: datetime,
    settings: Settings,
) -> Outcome:
    """`source_ip`: the caller's address, the alert's source when the create names none (as Opsgenie has it)."""
    alert, fields = create.alert, create.fields
    if alert.dedup_key is None:
        alert = dataclasses.replace(alert, dedup_key=str(uuid.uuid4()))
    fields = dataclasses.replace(fields, alias=fields.alias or alert.dedup_key, source=fields.source or source_ip)
    origin = AlertOrigin.of(integration, acting_user=fields.user)
    result = _ingest(origin, alert, now, settings=settings)
    outcome = _created(result, fields.alias)
    new_alert = result.alert is not None and not result.deduplicated
    if result.alert is not None:
        records.remember_alert(
            organization_id=integration.organization_id, alert_id=result.alert.alert_id, fields=fields, now=now
        )
    if fields.note and new_alert and result.incident is not None:
        _comment(origin, result.incident.incident_number, fields.note, now)
    _record(integration, request_id, outcome, now)
    return outcome


def _ingest(origin: AlertOrigin, alert: NormalizedAlert, now: datetime, *, settings: Settings) -> IngestResult:
    try:
        return ingest(origin, alert, now=now, settings=settings)
    except AppError as error:
        # The pipeline's refusals (no service, an unknown one) are the request's: Opsgenie's 422.
        if error.status >= 500:
            raise InternalError(error.message) from None
        raise InvalidFields(message=error.message) from None


def _created(result: IngestResult, alias: str | None) -> Outcome:
    alert = result.alert
    if alert is None:
        return Outcome("Create", True, f"Nothing was created: {result.note or 'dropped'}", alias=alias)
    if result.deduplicated:
        status = f"Alert deduplicated: count {int(alert.event_count)}"
    elif result.suppressed:
        status = "Created alert, suppressed: no incident, nobody paged"
    elif result.grouped and result.incident is not None:
        status = f"Created alert, grouped into incident {result.incident.incident_number}"
    else:
        status = "Created alert"
    return Outcome("Create", True, status, alert_id=alert.alert_id, alias=alias)


def act(
    *,
    integration: IntegrationRecord,
    identifier: str,
    identifier_type: str | None,
    action: Action,
    body: OpsgenieAction,
    request_id: str,
    now: datetime,
) -> Outcome:
    """Acknowledge, close or add a note to the alert `identifier` names; what it became."""
    alert = find_alert(integration, identifier, identifier_type, now=now)
    if alert is None:
        outcome = Outcome(ACTION_NAMES[action], False, NO_ALERT)
    else:
        outcome = _act(AlertOrigin.of(integration, acting_user=body.user), alert, action, body, now)
    _record(integration, request_id, outcome, now)
    return outcome


def _act(origin: AlertOrigin, alert: AlertRecord, action: Action, body: OpsgenieAction, now: datetime) -> Outcome:
    name, number = ACTION_NAMES[action], alert.incident_number
    record = records.read_alert(alert.organization_id, alert.alert_id, now=now)
    alias = (record.alias if record is not None else None) or alert.dedup_key
    if action == "note":
        if number is None:
            return Outcome(
                name, False, "The alert has no incident to add the note to (it was suppressed)", alert.alert_id, alias
            )
        _comment(origin, number, body.note or "", now)
        return Outcome(name, True, "Added note", alert.alert_id, alias)
    if action == "acknowledge":
        if alert.status == RESOLVED:
            status = "Alert is closed: nothing to acknowledge"
        else:
            result = acknowledge_alert(origin, incident_number=number, now=now)
            status = "Acknowledged alert" if result.note is None else f"Nothing to acknowledge: {result.note}"
    elif alert.status == RESOLVED:
        status = "Alert is already closed"
    else:
        result = resolve_alert(origin, alert_id=alert.alert_id, incident_number=number, now=now)
        status = "Closed alert" + (f"; {result.note}" if result.note else "")
    if body.note and number is not None:
        _comment(origin, number, body.note, now)
    return Outcome(name, True, status, alert.alert_id, alias)


def _comment(origin: AlertOrigin, incident_number: str, note: str, now: datetime) -> None:
    comment = truncate(clean_text(note).strip(), MAX_COMMENT)
    if comment:
        commands.add_comment(
            organization_id=origin.organization_id,
            incident_number=incident_number,
            comment=comment,
            now=now,
            principal=origin.principal,
        )


def _record(integration: IntegrationRecord, request_id: str, outcome: Outcome, now: datetime) -> None:
    records.record_request(
        organization_id=integration.organization_id,
        integration_id=integration.integration_id,
        request_id=request_id,
        outcome=outcome,
        now=now,
    )


def find_alert(
    integration: IntegrationRecord, identifier: str, identifier_type: str | None, *, now: datetime
) -> AlertRecord | None:
    """The alert an identifier names, or None; an unknown identifierType is refused (422)."""
    kind = (identifier_type or "id").strip().lower()
    if kind not in IDENTIFIER_TYPES:
        raise InvalidFields({"identifierType": f"must be one of {', '.join(IDENTIFIER_TYPES)}"})
    organization_id = integration.organization_id
    alert_id: str | None = None
    if kind == "tiny":
        if _TINY_ID.fullmatch(identifier):
            alert_id = records.alert_of_tiny(organization_id, int(identifier), now=now)
    elif kind == "alias":
        key = normalize_dedup_key(identifier[:ALIAS_MAX])
        claim = read_claim(dedup_id(AlertOrigin.of(integration), key)) if key else None
        alert_id = claim.alert_id if claim is not None else None
    elif _ALERT_ID.fullmatch(identifier):
        alert_id = identifier
    return get_alert(organization_id, alert_id) if alert_id else None


def alert_of(
    *, integration: IntegrationRecord, identifier: str, identifier_type: str | None, now: datetime
) -> OpsgenieAlertV1:
    """The alert an identifier names, as Opsgenie shows one; 404 when none."""
    alert = find_alert(integration, identifier, identifier_type, now=now)
    if alert is None:
        raise NotFound(f"{NO_ALERT}: no alert has the {(identifier_type or 'id').lower()} {identifier[:100]!r}.")
    record = records.read_alert(alert.organization_id, alert.alert_id, now=now)
    return alert_view(alert, record, _incident(alert))


def _incident(alert: AlertRecord) -> IncidentRecord | None:
    if alert.incident_number is None:
        return None
    try:
        return repository.get_incident(alert.organization_id, alert.incident_number)
    except NotFound:
        return None


def request_status(*, integration: IntegrationRecord, request_id: str, now: datetime) -> OpsgenieRequestRecord:
    """What a request of the organization became; 404 when it is unknown (or older than 7 days)."""
    found = (
        records.read_request(integration.organization_id, request_id, now=now)
        if _REQUEST_ID.fullmatch(request_id)
        else None
    )
    if found is None:
        raise NotFound("Request does not exist: unknown, or processed more than 7 days ago.")
    return found


def ping_heartbeat(*, integration: IntegrationRecord, name: str, now: datetime, settings: Settings) -> int:
    """Ping the organization's heartbeat named `name` (each, if several share it); how many. 404 when none."""
    found = find_by_name(organization_id=integration.organization_id, name=name)
    if not found:
        raise NotFound(f"Heartbeat with name {name[:100]!r} does not exist.")
    for heartbeat in found:
        record_ping(record=heartbeat, now=now, settings=settings)
    return len(found)
