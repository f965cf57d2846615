"""New Relic: alert workflow webhooks (default template) and the older notification channel format.

Workflow (camelCase): `id` is the issue id and the dedup key; `priority` read through
chalicelib.severity's one table (CRITICAL/HIGH/MEDIUM/LOW -> SEV0..SEV3; a word it does not know:
the service default); `state` CREATED/ACTIVATED -> trigger, CLOSED ->
resolve, ACKNOWLEDGED (or ACTIVATED with trigger USER_ACTION) -> acknowledge, another state ->
note, no state -> trigger. The body is a user-editable template: missing keys are tolerated,
wrongly typed core keys are refused.

Channel (snake_case): `incident_id` is the dedup key; `current_state` open/acknowledged/closed;
`severity` through the same table (CRITICAL/WARNING/INFO -> SEV0/SEV2/SEV3).
Both: the fields not mapped are kept as the alert's details; `runbookUrl` / `runbook_url` (or the
workflow's `accumulations.runbookUrl`) is the alert's runbook_url.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from chalicelib.errors import InvalidPayload
from chalicelib.integration.normalized import Action, NormalizedAlert
from chalicelib.integration.parsers._common import (
    compact,
    dig,
    epoch_ms,
    first_text,
    http_url,
    json_type,
    listed,
    load_json_object,
    mapped,
    service_hint,
    text,
)

# Fields the parser maps; the rest of a (user-editable) template is kept as the alert's details.
WORKFLOW_MAPPED: Final = frozenset(
    {
        "id",
        "issueUrl",
        "issuePageUrl",
        "state",
        "priority",
        "title",
        "trigger",
        "impactedEntities",
        "alertPolicyNames",
        "alertConditionNames",
        "totalIncidents",
        "isCorrelated",
        "accountId",
        "workflowName",
        "createdAt",
        "updatedAt",
        "description",
        "details",
        "sources",
        "service_id",
        "runbookUrl",
        "runbook_url",
    }
)
CHANNEL_MAPPED: Final = frozenset(
    {
        "incident_id",
        "current_state",
        "severity",
        "condition_name",
        "policy_name",
        "details",
        "targets",
        "runbook_url",
        "account_name",
        "incident_url",
        "timestamp",
        "service_id",
    }
)
STATE_ACTION: Final[Mapping[str, Action]] = {
    "CREATED": "trigger",
    "ACTIVATED": "trigger",
    "ACKNOWLEDGED": "acknowledge",
    "CLOSED": "resolve",
}
CHANNEL_STATE_ACTION: Final[Mapping[str, Action]] = {
    "open": "trigger",
    "acknowledged": "acknowledge",
    "closed": "resolve",
}
_WORKFLOW_KEYS: Final = frozenset({"id", "issueUrl", "state", "priority", "title", "trigger", "impactedEntities"})
_CHANNEL_KEYS: Final = frozenset({"incident_id", "current_state", "condition_name", "policy_name", "incident_url"})


def parse_newrelic(body: bytes | str) -> NormalizedAlert:
    payload = load_json_object(body)
    if payload.keys() & _CHANNEL_KEYS and not payload.keys() & {"issueUrl", "state"}:
        return _channel(payload)
    if payload.keys() & _WORKFLOW_KEYS:
        return _workflow(payload)
    raise InvalidPayload("Not a New Relic workflow webhook (expected id, title, state, priority, issueUrl, ...).")


def _require_text(payload: Mapping[str, Any], name: str, problems: list[str]) -> None:
    value = payload.get(name)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, str | int):
        problems.append(f"'{name}' must be a string, not {json_type(value)}.")


def _workflow(payload: dict[str, Any]) -> NormalizedAlert:
    problems: list[str] = []
    for name in ("id", "state", "priority", "trigger"):
        _require_text(payload, name, problems)
    if problems:
        raise InvalidPayload.from_problems(problems)
    state = (text(payload.get("state")) or "").upper()
    trigger = (text(payload.get("trigger")) or "").upper()
    action: Action = STATE_ACTION.get(state, "note") if state else "trigger"
    if state == "ACTIVATED" and trigger == "USER_ACTION":
        action = "acknowledge"
    priority = text(payload.get("priority"))
    severity = mapped("newrelic", priority)
    issue_id = text(payload.get("id"))
    correlated = payload.get("isCorrelated")
    if isinstance(correlated, str):
        correlated = correlated.strip().lower() == "true"
    accumulations = payload.get("accumulations")
    hint = service_hint(
        dig(accumulations, "tag", "service_id"),
        dig(accumulations, "tag.service_id"),
        dig(payload, "tags", "service_id"),
        dig(payload, "tag", "service_id"),
        payload.get("service_id"),
    )
    metadata: dict[str, object] = {
        "issue_id": issue_id,
        "state": state or None,
        "trigger": trigger or None,
        "priority": priority,
        "workflow": text(payload.get("workflowName")),
        "policies": _joined(payload.get("alertPolicyNames")),
        "conditions": _joined(payload.get("alertConditionNames")),
        "impacted_entities": _joined(payload.get("impactedEntities")),
        "total_incidents": text(payload.get("totalIncidents")),
        "is_correlated": None if correlated is None else str(bool(correlated)).lower(),
        "account_id": text(payload.get("accountId")),
    }
    title = first_text(payload.get("title"), payload.get("alertConditionNames"), payload.get("alertPolicyNames"))
    description = _description(payload)
    summary = f"New Relic issue {state or 'update'}" + (f" via {trigger}" if trigger else "")
    if priority:
        summary += f" ({priority.upper()})"
    return NormalizedAlert(
        source="newrelic",
        action=action,
        title=title or "",
        description=description,
        severity=severity,
        dedup_key=issue_id,
        source_url=http_url(payload.get("issueUrl")) or http_url(payload.get("issuePageUrl")),
        service_hint=hint,
        metadata=compact(metadata),
        summary=summary,
        raw_details=payload,
        occurred_at=epoch_ms(payload.get("updatedAt")) or epoch_ms(payload.get("createdAt")),
        details={k: v for k, v in payload.items() if k not in WORKFLOW_MAPPED},
        runbook_url=first_url(payload.get("runbookUrl"), payload.get("runbook_url"), dig(accumulations, "runbookUrl")),
    )


def first_url(*values: object) -> str | None:
    """The first http(s) URL among the values (a list yields its items)."""
    for value in values:
        for item in value[:10] if isinstance(value, list) else [value]:
            found = http_url(item)
            if found:
                return found
    return None


def _joined(value: object) -> str | None:
    if isinstance(value, list):
        items = [t for t in (text(v) for v in value[:20]) if t]
        return ", ".join(items) or None
    return text(value)


def _description(payload: Mapping[str, Any]) -> str | None:
    lines = []
    for label, key in (
        ("Impacted entities", "impactedEntities"),
        ("Policies", "alertPolicyNames"),
        ("Conditions", "alertConditionNames"),
        ("Sources", "sources"),
    ):
        value = _joined(payload.get(key))
        if value:
            lines.append(f"{label}: {value}")
    details = text(payload.get("description")) or text(payload.get("details"))
    if details:
        lines.insert(0, details)
    return "\n".join(lines) or None


def _channel(payload: dict[str, Any]) -> NormalizedAlert:
    problems: list[str] = []
    for name in ("incident_id", "current_state", "severity"):
        _require_text(payload, name, problems)
    if problems:
        raise InvalidPayload.from_problems(problems)
    state = (text(payload.get("current_state")) or "open").lower()
    if state not in CHANNEL_STATE_ACTION:
        raise InvalidPayload("'current_state' must be one of open, acknowledged or closed.")
    raw_severity = text(payload.get("severity"))
    incident_id = text(payload.get("incident_id"))
    condition = text(payload.get("condition_name"))
    policy = text(payload.get("policy_name"))
    details = text(payload.get("details"))
    title = condition or details or policy
    if condition and policy:
        title = f"{condition} ({policy})"
    targets = listed(payload.get("targets"))
    hint = service_hint(*(dig(t, "labels", "service_id") for t in targets[:10]), payload.get("service_id"))
    metadata = {
        "incident_id": incident_id,
        "state": state,
        "severity": raw_severity,
        "condition": condition,
        "policy": policy,
        "runbook_url": http_url(payload.get("runbook_url")),
        "account_name": text(payload.get("account_name")),
        "targets": _joined([dig(t, "name") for t in targets[:10]]),
    }
    return NormalizedAlert(
        source="newrelic",
        action=CHANNEL_STATE_ACTION[state],
        title=title or "",
        description=details,
        severity=mapped("newrelic", raw_severity),
        dedup_key=incident_id,
        source_url=http_url(payload.get("incident_url")),
        service_hint=hint,
        metadata=compact(metadata),
        summary=f"New Relic incident {incident_id or ''} {state}" + (f" ({raw_severity})" if raw_severity else ""),
        raw_details=payload,
        occurred_at=epoch_ms(payload.get("timestamp")),
        details={k: v for k, v in payload.items() if k not in CHANNEL_MAPPED},
        runbook_url=http_url(payload.get("runbook_url")),
    )
