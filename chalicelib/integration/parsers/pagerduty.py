"""PagerDuty Events API v2 bodies (the migration source and the drop-in `POST /v2/enqueue`).

event_action trigger|acknowledge|resolve (case-insensitive). dedup_key <= 255, required for
acknowledge/resolve; a trigger without one keeps None and the service generates one. For a
trigger, payload.summary (<= 1024), payload.source and payload.severity are required; severity is
one of PagerDuty's four words, read through chalicelib.severity's one table (critical SEV0, error
SEV1, warning SEV2, info SEV3). payload.custom_details is kept as the alert's details (an object's
keys; anything else under `custom_details`), and a link whose text names a runbook (or
custom_details.runbook_url) is its runbook_url. Problems are reported all at once as PagerDuty-style
strings in `InvalidPayload.details`, for the `{status: "invalid event", message: "Event object
is invalid", errors: [...]}` answer. The routing key is only exposed (`routing_key`); the HTTP
layer validates it (`routing_key_problems`) and it never reaches metadata or raw_details.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from chalicelib.errors import AppError, InvalidPayload
from chalicelib.integration.normalized import Action, NormalizedAlert
from chalicelib.integration.parsers._common import (
    compact,
    dig,
    http_url,
    iso_time,
    listed,
    load_json_object,
    service_hint,
    text,
)
from chalicelib.severity import PAGERDUTY_WORDS, Severity, severity_word

EVENT_ACTIONS: Final[tuple[Action, ...]] = ("trigger", "acknowledge", "resolve")
ROUTING_KEY_LENGTH: Final = 32
DEDUP_KEY_MAX: Final = 255
SUMMARY_MAX: Final = 1024
DETAILS_IN_METADATA: Final = 15
INVALID_EVENT_STATUS: Final = "invalid event"
INVALID_EVENT_MESSAGE: Final = "Event object is invalid"


def routing_key_problems(value: object) -> list[str]:
    """PagerDuty-style errors for a routing key (for the HTTP layer)."""
    if not isinstance(value, str) or not value.strip():
        return ["'routing_key' is missing or blank"]
    if len(value) != ROUTING_KEY_LENGTH:
        return [f"Length of 'routing_key' is incorrect (should be {ROUTING_KEY_LENGTH} characters)"]
    return []


def invalid_event_body(rejected: AppError) -> dict[str, Any]:
    """The 400 body PagerDuty answers with: every problem found, or the message alone."""
    errors = rejected.details if isinstance(rejected.details, list) and rejected.details else [rejected.message]
    return {"status": INVALID_EVENT_STATUS, "message": INVALID_EVENT_MESSAGE, "errors": errors}


def _blank(value: object) -> bool:
    return not isinstance(value, str) or not value.strip()


def parse_pagerduty(body: bytes | str) -> NormalizedAlert:
    event = load_json_object(body, "The event")
    errors: list[str] = []
    raw_action = event.get("event_action")
    word = raw_action.strip().lower() if isinstance(raw_action, str) else ""
    action: Action | None = next((a for a in EVENT_ACTIONS if a == word), None)
    if not word:
        errors.append("'event_action' is missing or blank")
    elif action is None:
        errors.append("'event_action' is invalid (must be one of 'trigger', 'acknowledge', 'resolve')")
    dedup_key = event.get("dedup_key")
    if dedup_key is not None and not isinstance(dedup_key, str):
        errors.append("'dedup_key' must be a string")
        dedup_key = None
    elif isinstance(dedup_key, str) and len(dedup_key) > DEDUP_KEY_MAX:
        errors.append(f"'dedup_key' is too long (must be at most {DEDUP_KEY_MAX} characters)")
    if action in ("acknowledge", "resolve") and _blank(dedup_key):
        errors.append("'dedup_key' is missing or blank")
    payload = event.get("payload")
    if payload is not None and not isinstance(payload, dict):
        errors.append("'payload' must be an object")
        payload = None
    payload = payload or {}
    severity: Severity | None = None
    if action == "trigger":
        summary = payload.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            errors.append("'payload.summary' is missing or blank")
        elif len(summary) > SUMMARY_MAX:
            errors.append(f"'payload.summary' is too long (must be at most {SUMMARY_MAX} characters)")
        if _blank(payload.get("source")):
            errors.append("'payload.source' is missing or blank")
        raw_severity = payload.get("severity")
        if not isinstance(raw_severity, str) or not raw_severity.strip():
            errors.append("'payload.severity' is missing or blank")
        else:
            word = raw_severity.strip().lower()
            severity = severity_word(word, "pagerduty") if word in PAGERDUTY_WORDS else None
            if severity is None:
                errors.append("'payload.severity' is invalid (must be one of 'critical', 'error', 'warning', 'info')")
    if errors or action is None:
        raise InvalidPayload("Event object is invalid: " + "; ".join(errors), details=errors)
    return _alert(event, action, payload, severity)


def _alert(
    event: dict[str, Any], action: Action, payload: dict[str, Any], severity: Severity | None
) -> NormalizedAlert:
    details = payload.get("custom_details")
    client = text(event.get("client"))
    links = listed(event.get("links"))
    link_url = next((u for u in (http_url(dig(link, "href")) for link in links[:10]) if u), None)
    metadata: dict[str, object] = {
        "source": text(payload.get("source")),
        "component": text(payload.get("component")),
        "group": text(payload.get("group")),
        "class": text(payload.get("class")),
        "severity": text(payload.get("severity")),
        "client": client,
    }
    if isinstance(details, dict):
        metadata |= {f"details.{k}": v for k, v in list(details.items())[:DETAILS_IN_METADATA]}
    summary = text(payload.get("summary"))
    return NormalizedAlert(
        source="pagerduty",
        action=action,
        title=summary or f"PagerDuty {action}",
        description=_description(payload, details),
        severity=severity,
        dedup_key=text(event.get("dedup_key")),
        source_url=http_url(event.get("client_url")) or link_url,
        service_hint=service_hint(dig(details, "service_id")),
        metadata=compact(metadata),
        summary=f"PagerDuty event {action}" + (f" from {client}" if client else ""),
        raw_details={k: v for k, v in event.items() if k != "routing_key"},
        occurred_at=iso_time(payload.get("timestamp")),
        routing_key=event.get("routing_key") if isinstance(event.get("routing_key"), str) else None,
        details=details if isinstance(details, dict) else {"custom_details": details} if details is not None else {},
        runbook_url=_runbook(links, details),
    )


def _runbook(links: list[Any], details: object) -> str | None:
    for link in links[:10]:
        if "runbook" in (text(dig(link, "text")) or "").lower():
            found = http_url(dig(link, "href"))
            if found:
                return found
    return http_url(dig(details, "runbook_url"))


def _description(payload: Mapping[str, Any], details: object) -> str | None:
    lines = [
        f"{label}: {value}"
        for label, value in (
            ("Source", text(payload.get("source"))),
            ("Component", text(payload.get("component"))),
            ("Group", text(payload.get("group"))),
            ("Class", text(payload.get("class"))),
        )
        if value
    ]
    if isinstance(details, str) and details.strip():
        lines.append(details.strip())
    elif details is not None and not isinstance(details, str):
        try:
            lines.append(json.dumps(details, indent=2, sort_keys=True, ensure_ascii=False, default=str)[:8000])
        except (TypeError, ValueError, RecursionError):
            lines.append(str(details)[:8000])
    return "\n".join(lines) or None
