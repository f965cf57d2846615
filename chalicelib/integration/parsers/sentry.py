"""Sentry integration-platform webhooks (resource in `Sentry-Hook-Resource`) and the legacy plugin.

- issue: created/unresolved -> trigger, resolved -> resolve, assigned/archived (and others) -> note;
  dedup key `data.issue.id`; level fatal SEV0, error SEV1, warning SEV2, info SEV3, debug/sample SEV4
  (chalicelib.severity's one table, with Sentry's `sample`).
- event_alert: triggered -> trigger; dedup key `data.event.issue_id` (the same key as the issue
  resource, so an issue `resolved` closes it); the `service_id` event tag is the service hint.
- metric_alert: critical -> trigger SEV1, warning -> trigger SEV2, resolved -> resolve; dedup key
  `metric_alert:<data.metric_alert.id>`. Critical is SEV1, not SEV0: a metric threshold is a
  symptom over time, and SEV0 stays for fatal errors.
- comment: a note on the issue (`data.issue_id`). installation, error and unknown resources: ignore.
- No resource header: the legacy per-project WebHooks plugin body (`id`, `project`, `level`, ...).

Details: the issue's other fields; an event's tags, extra data and contexts; a metric alert's rule.
The signature (`signing.verify_sentry`) is checked separately, when a client secret is set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Final

from chalicelib.errors import InvalidPayload
from chalicelib.integration.normalized import Action, NormalizedAlert, get_header
from chalicelib.integration.parsers._common import (
    compact,
    dig,
    first_text,
    http_url,
    iso_time,
    json_type,
    load_json_object,
    mapped,
    obj,
    service_hint,
    text,
)

RESOURCE_HEADER: Final = "Sentry-Hook-Resource"
REQUEST_ID_HEADER: Final = "Request-ID"
METRIC_TRIGGERS: Final = ("critical", "warning")
# Beyond what is mapped, what a responder reads: the issue's or event's own fields Sentry sends.
ISSUE_MAPPED: Final = frozenset(
    {"id", "shortId", "level", "culprit", "metadata", "assignedTo", "title", "web_url", "permalink", "firstSeen"}
)
EVENT_DETAILS: Final = ("tags", "extra", "contexts", "user", "request", "fingerprint", "platform", "sdk")
ISSUE_ACTIONS: Final[Mapping[str, Action]] = {
    "created": "trigger",
    "unresolved": "trigger",
    "resolved": "resolve",
    "assigned": "note",
    "archived": "note",
    "ignored": "note",
}
IGNORED_RESOURCES: Final = frozenset({"installation", "error"})
TAGS_IN_METADATA: Final = 15


def parse_sentry(headers: Mapping[str, str] | None, body: bytes | str) -> NormalizedAlert:
    payload = load_json_object(body)
    resource = (get_header(headers, RESOURCE_HEADER) or "").lower()
    delivery = get_header(headers, REQUEST_ID_HEADER)
    if not resource:
        if "id" in payload and payload.keys() & {"project", "url", "message", "event", "level"}:
            return _plugin(payload)
        raise InvalidPayload(f"Missing {RESOURCE_HEADER} header, and the body is not a Sentry WebHooks plugin payload.")
    handler = _HANDLERS.get(resource)
    if handler is None:
        return NormalizedAlert(
            source="sentry",
            action="ignore",
            title=f"Sentry {resource} webhook",
            summary=f"Sentry {resource} webhook ({text(payload.get('action')) or 'no action'}) ignored",
            delivery_id=delivery,
            metadata={"resource": resource},
        )
    data = payload.get("data")
    if data is not None and not isinstance(data, dict):
        raise InvalidPayload(f"'data' must be an object, not {json_type(data)}.")
    action = text(payload.get("action"))
    if action is not None:
        action = action.lower()
    alert = handler(action, obj(data), payload)
    return replace(alert, delivery_id=delivery) if delivery else alert


def _actor(payload: Mapping[str, Any]) -> str | None:
    return first_text(dig(payload, "actor", "name"), dig(payload, "actor", "id"))


def _tags(value: object) -> dict[str, str]:
    """Sentry tags: [[key, value], ...] (also [{key, value}, ...] in some versions)."""
    tags: dict[str, str] = {}
    if not isinstance(value, list):
        return tags
    for item in value[:100]:
        if isinstance(item, list) and len(item) == 2:
            key, val = text(item[0]), text(item[1])
        elif isinstance(item, dict):
            key, val = text(item.get("key")), text(item.get("value"))
        else:
            continue
        if key and val and key not in tags:
            tags[key] = val
    return tags


def _tag_metadata(tags: Mapping[str, str]) -> dict[str, str]:
    return {f"tags.{k}": v for k, v in list(tags.items())[:TAGS_IN_METADATA]}


def _issue(action: str | None, data: dict[str, Any], payload: dict[str, Any]) -> NormalizedAlert:
    issue = data.get("issue")
    if not isinstance(issue, dict):
        raise InvalidPayload("'data.issue' is required for an issue webhook.")
    issue_id = text(issue.get("id"))
    if issue_id is None:
        raise InvalidPayload("'data.issue.id' is required for an issue webhook.")
    short_id = text(issue.get("shortId"))
    level = text(issue.get("level"))
    culprit = text(issue.get("culprit"))
    error_type, error_value = text(dig(issue, "metadata", "type")), text(dig(issue, "metadata", "value"))
    lines = [f"{error_type}: {error_value}" if error_type and error_value else error_value or error_type]
    lines.append(f"in {culprit}" if culprit else None)
    assignee = first_text(dig(issue, "assignedTo", "name"), dig(issue, "assignedTo", "email"))
    label = short_id or issue_id
    summary = f"Sentry issue {label} {action or 'updated'}"
    if action == "assigned" and assignee:
        summary += f" to {assignee}"
    actor = _actor(payload)
    if actor:
        summary += f" by {actor}"
    metadata = {
        "issue_id": issue_id,
        "short_id": short_id,
        "culprit": culprit,
        "level": level,
        "project": first_text(dig(issue, "project", "slug"), dig(issue, "project", "name")),
        "status": text(issue.get("status")),
        "count": text(issue.get("count")),
        "user_count": text(issue.get("userCount")),
        "platform": text(issue.get("platform")),
        "assigned_to": assignee,
        "actor": actor,
    }
    return NormalizedAlert(
        source="sentry",
        action=ISSUE_ACTIONS.get(action or "", "note"),
        title=text(issue.get("title")) or error_value or "",
        description="\n".join(line for line in lines if line) or None,
        severity=mapped("sentry", level),
        dedup_key=issue_id,
        source_url=http_url(issue.get("web_url")) or http_url(issue.get("permalink")),
        metadata=compact(metadata),
        summary=summary,
        raw_details=issue,
        occurred_at=iso_time(issue.get("firstSeen")),
        details={k: v for k, v in issue.items() if k not in ISSUE_MAPPED},
    )


def _event_alert(action: str | None, data: dict[str, Any], payload: dict[str, Any]) -> NormalizedAlert:
    event = data.get("event")
    if not isinstance(event, dict):
        raise InvalidPayload("'data.event' is required for an event_alert webhook.")
    tags = _tags(event.get("tags"))
    level = text(event.get("level")) or tags.get("level")
    rule = text(data.get("triggered_rule"))
    metadata = {
        "event_id": text(event.get("event_id")),
        "issue_id": text(event.get("issue_id")),
        "level": level,
        "environment": text(event.get("environment")) or tags.get("environment"),
        "release": text(event.get("release")) or tags.get("release"),
        "culprit": text(event.get("culprit")),
        "triggered_rule": rule,
        **_tag_metadata(tags),
    }
    title = first_text(event.get("title"), event.get("message"), dig(event, "metadata", "title"))
    return NormalizedAlert(
        source="sentry",
        action="trigger" if action in (None, "triggered") else "note",
        title=title or "",
        description=text(event.get("message")) if text(event.get("message")) != title else None,
        severity=mapped("sentry", level),
        dedup_key=text(event.get("issue_id")),
        source_url=http_url(event.get("web_url")) or http_url(event.get("url")),
        service_hint=service_hint(tags.get("service_id"), tags.get("service")),
        metadata=compact(metadata),
        summary=f"Sentry alert rule {rule!r} triggered" if rule else "Sentry event alert triggered",
        raw_details={k: v for k, v in event.items() if k not in ("entries", "contexts", "sdk", "_meta")},
        occurred_at=iso_time(event.get("datetime")),
        details=_event_details(event, tags),
    )


def _metric_alert(action: str | None, data: dict[str, Any], payload: dict[str, Any]) -> NormalizedAlert:
    alert = data.get("metric_alert")
    if not isinstance(alert, dict):
        raise InvalidPayload("'data.metric_alert' is required for a metric_alert webhook.")
    alert_id = text(alert.get("id"))
    if alert_id is None:
        raise InvalidPayload("'data.metric_alert.id' is required for a metric_alert webhook.")
    kind: Action = "resolve" if action == "resolved" else "trigger" if action in METRIC_TRIGGERS else "note"
    title = first_text(data.get("description_title"), alert.get("title"), dig(alert, "alert_rule", "name"))
    return NormalizedAlert(
        source="sentry",
        action=kind,
        title=title or "Sentry metric alert",
        description=text(data.get("description_text")),
        severity=mapped("sentry_metric", action) if action in METRIC_TRIGGERS else None,
        dedup_key=f"metric_alert:{alert_id}",
        source_url=http_url(data.get("web_url")),
        metadata={
            k: v
            for k, v in {
                "metric_alert_id": alert_id,
                "alert_rule": text(dig(alert, "alert_rule", "name")),
                "status": action,
            }.items()
            if v
        },
        summary=f"Sentry metric alert {action or 'update'}",
        raw_details=alert,
        occurred_at=iso_time(alert.get("date_started")),
        details={k: v for k, v in alert.items() if k not in ("id", "title", "date_started")},
    )


def _comment(action: str | None, data: dict[str, Any], payload: dict[str, Any]) -> NormalizedAlert:
    comment = text(data.get("comment"))
    actor = _actor(payload)
    return NormalizedAlert(
        source="sentry",
        action="note",
        title="Sentry comment",
        description=comment,
        dedup_key=text(data.get("issue_id")),
        metadata={k: v for k, v in {"actor": actor, "comment_id": text(data.get("comment_id"))}.items() if v},
        summary=f"Sentry comment {action or 'update'}" + (f" by {actor}" if actor else ""),
    )


_HANDLERS: Final[dict[str, Callable[[str | None, dict[str, Any], dict[str, Any]], NormalizedAlert]]] = {
    "issue": _issue,
    "event_alert": _event_alert,
    "metric_alert": _metric_alert,
    "comment": _comment,
}


def _ignored(resource: str) -> Callable[[str | None, dict[str, Any], dict[str, Any]], NormalizedAlert]:
    def handler(action: str | None, data: dict[str, Any], payload: dict[str, Any]) -> NormalizedAlert:
        return NormalizedAlert(
            source="sentry",
            action="ignore",
            title=f"Sentry {resource} webhook",
            summary=f"Sentry {resource} {action or 'webhook'} acknowledged and ignored",
        )

    return handler


for _resource in IGNORED_RESOURCES:
    _HANDLERS[_resource] = _ignored(_resource)


def _plugin(payload: dict[str, Any]) -> NormalizedAlert:
    event = obj(payload.get("event"))
    tags = _tags(event.get("tags"))
    level = text(payload.get("level")) or text(event.get("level"))
    culprit = text(payload.get("culprit"))
    message = text(payload.get("message"))
    title = first_text(event.get("title"), message, culprit)
    rules = payload.get("triggering_rules")
    metadata = {
        "issue_id": text(payload.get("id")),
        "project": text(payload.get("project")),
        "project_name": text(payload.get("project_name")),
        "level": level,
        "culprit": culprit,
        "triggering_rules": ", ".join(r for r in (text(x) for x in rules[:10]) if r)
        if isinstance(rules, list)
        else None,
        **_tag_metadata(tags),
    }
    return NormalizedAlert(
        source="sentry",
        action="trigger",
        title=title or "",
        description="\n".join(x for x in (message if message != title else None, culprit and f"in {culprit}") if x)
        or None,
        severity=mapped("sentry", level),
        dedup_key=text(payload.get("id")),
        source_url=http_url(payload.get("url")),
        service_hint=service_hint(tags.get("service_id"), tags.get("service")),
        metadata=compact(metadata),
        summary=f"Sentry alert for {text(payload.get('project_name')) or text(payload.get('project')) or 'a project'}",
        raw_details={k: v for k, v in payload.items() if k != "event"} | {"event_tags": tags},
        details=_event_details(event, tags),
    )


def _event_details(event: dict[str, Any], tags: dict[str, str]) -> dict[str, Any]:
    details: dict[str, Any] = {"tags": tags} if tags else {}
    details |= {key: event[key] for key in EVENT_DETAILS if key != "tags" and event.get(key)}
    return details
