"""From the document's objects to the API's request bodies: names become the ids they stand for."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalicelib.client import canonical
from chalicelib.client import document as doc
from chalicelib.client.http import ClientError

Resolve = Callable[[str, str], str]  # (section, name) -> server id


class Ids:
    """(section, key) -> server id: the organization's, then each object the apply creates."""

    def __init__(self, known: dict[tuple[str, str], str]) -> None:
        self.known = dict(known)

    def set(self, section: str, key: str, object_id: str) -> None:
        self.known[(section, key)] = object_id

    def get(self, section: str, name: str) -> str:
        found = self.known.get((section, name.lower() if section == "users" else name.casefold()))
        if found is None:
            raise ClientError(f"no {section.replace('_', ' ').rstrip('s')} named {name!r} in the organization")
        return found

    def maybe(self, section: str, name: str | None) -> str | None:
        return self.get(section, name) if name is not None else None


def user(item: doc.User) -> dict[str, Any]:
    return {"name": item.name, "email": item.email, "role": item.role, "slack_user_id": item.slack_user_id}


def team(item: doc.Team, ids: Ids) -> dict[str, Any]:
    members = list(dict.fromkeys(ids.get("users", email) for email in item.members))
    return {"name": item.name, "description": item.description, "member_ids": members}


def layers(item: doc.Schedule, ids: Ids) -> list[dict[str, Any]]:
    return [
        {
            "name": layer.name,
            "members": [ids.get("users", email) for email in layer.members],
            "rotation": layer.rotation,
            "rotation_hours": layer.rotation_hours,
            "handoff_time": layer.handoff_time,
            "start": canonical.utc(layer.start),
            "end": canonical.utc(layer.end),
            "restrictions": [r.model_dump(mode="json") for r in layer.restrictions],
        }
        for layer in item.layers
    ]


def schedule(item: doc.Schedule, ids: Ids) -> dict[str, Any]:
    return {
        "name": item.name,
        "time_zone": item.time_zone,
        "team_id": ids.maybe("teams", item.team),
        "layers": layers(item, ids),
        "handoff_notice_lead_minutes": item.handoff_notice_lead_minutes,
    }


def policy(item: doc.EscalationPolicy, ids: Ids) -> dict[str, Any]:
    def target(t: doc.Target) -> dict[str, str]:
        if t.user is not None:
            return {"kind": "user", "id": ids.get("users", t.user)}
        return {"kind": "schedule", "id": ids.get("schedules", t.schedule or "")}

    return {
        "name": item.name,
        "repeat_count": item.repeat_count,
        "levels": [
            {"delay_minutes": level.delay_minutes, "targets": [target(t) for t in level.targets]}
            for level in item.levels
        ],
    }


def urgency_rule(item: doc.Service) -> dict[str, Any]:
    return item.urgency_rule.model_dump(mode="json")


def alert_grouping(item: doc.Service) -> dict[str, Any]:
    grouping = item.alert_grouping
    body: dict[str, Any] = {"type": grouping.type}
    if grouping.type != "none" and grouping.window_minutes is not None:
        body["window_minutes"] = grouping.window_minutes
    if grouping.type == "content":
        body["fields"] = list(grouping.fields or [])
    return body


def service(item: doc.Service, ids: Ids) -> dict[str, Any]:
    return {
        "name": item.name,
        "description": item.description,
        "team_id": ids.maybe("teams", item.team),
        "default_severity": item.default_severity,
        "escalation_policy_id": ids.maybe("escalation_policies", item.escalation_policy),
        "urgency_rule": urgency_rule(item),
        "alert_grouping": alert_grouping(item),
    }


def integration(item: doc.Integration, ids: Ids, environ: dict[str, str] | None) -> dict[str, Any]:
    """`environ` holds the secrets a create sends; None for a PATCH (a secret is set on creation only)."""
    body: dict[str, Any] = {
        "type": item.type,
        "name": item.name,
        "default_service": ids.maybe("services", item.service),
        "signing": item.signing,
        "ip_allowlist": list(item.ip_allowlist),
        "expected_topic_arn": item.expected_topic_arn,
    }
    if item.client_secret_env and environ is not None:
        secret = environ.get(item.client_secret_env)
        if not secret:
            raise ClientError(
                f"integration {item.name!r}: the environment variable {item.client_secret_env} is not set"
            )
        body["client_secret"] = secret
    return body


def rule(item: doc.EventRule, ids: Ids) -> dict[str, Any]:
    conditions = []
    for condition in item.conditions:
        if condition.field == "service":
            conditions.append(
                {"field": "service_id", "op": "equals", "value": ids.get("services", condition.value or "")}
            )
        else:
            body = {"field": condition.field, "op": condition.op}
            if condition.value is not None:
                body["value"] = condition.value
            conditions.append(body)
    actions = item.actions.model_dump(mode="json", exclude_none=True)
    if item.actions.route_to_service:
        actions["route_to_service"] = ids.get("services", item.actions.route_to_service)
    return {"description": item.description, "conditions": conditions, "actions": actions, "continue": item.continue_}


def window(item: doc.MaintenanceWindow, ids: Ids) -> dict[str, Any]:
    return {
        "service_ids": [ids.get("services", name) for name in item.services],
        "start": canonical.utc(item.start),
        "end": canonical.utc(item.end),
        "description": item.description,
    }


def heartbeat(item: doc.Heartbeat, ids: Ids) -> dict[str, Any]:
    return {
        "name": item.name,
        "service": ids.get("services", item.service),
        "interval_seconds": item.interval_seconds,
        "grace_seconds": item.grace_seconds,
        "description": item.description,
        "enabled": item.enabled,
    }


# PATCH bodies take the fields that changed, named as the API names them.
PATCH_FIELDS: dict[str, dict[str, str]] = {
    "users": {
        "name": "name",
        "email": "email",
        "role": "role",
        "slack_user_id": "slack_user_id",
        "active": "is_active",
    },
    "teams": {"name": "name", "description": "description", "members": "member_ids", "active": "is_active"},
    "schedules": {
        "name": "name",
        "time_zone": "time_zone",
        "team": "team_id",
        "layers": "layers",
        "handoff_notice_lead_minutes": "handoff_notice_lead_minutes",
    },
    "escalation_policies": {"name": "name", "repeat_count": "repeat_count", "levels": "levels"},
    "services": {
        "name": "name",
        "description": "description",
        "team": "team_id",
        "escalation_policy": "escalation_policy_id",
        "default_severity": "default_severity",
        "urgency_rule": "urgency_rule",
        "alert_grouping": "alert_grouping",
        "active": "is_active",
    },
    "integrations": {
        "name": "name",
        "service": "default_service",
        "ip_allowlist": "ip_allowlist",
        "expected_topic_arn": "expected_topic_arn",
    },
    "event_rules": {
        "description": "description",
        "conditions": "conditions",
        "actions": "actions",
        "continue": "continue",
    },
    "maintenance_windows": {"description": "description", "services": "service_ids", "start": "start", "end": "end"},
    "heartbeats": {
        "name": "name",
        "description": "description",
        "interval_seconds": "interval_seconds",
        "grace_seconds": "grace_seconds",
        "enabled": "enabled",
    },
    "status_pages": {"name": "name", "slug": "slug"},
}


def full(section: str, item: doc.Keyed, ids: Ids, environ: dict[str, str] | None) -> dict[str, Any]:
    """The whole body of `item` as its create takes it (users: `is_active` added for PATCH use)."""
    if isinstance(item, doc.User):
        return {**user(item), "is_active": item.active}
    if isinstance(item, doc.Team):
        return {**team(item, ids), "is_active": item.active}
    if isinstance(item, doc.Schedule):
        return schedule(item, ids)
    if isinstance(item, doc.EscalationPolicy):
        return policy(item, ids)
    if isinstance(item, doc.Service):
        return {**service(item, ids), "is_active": item.active}
    if isinstance(item, doc.Integration):
        return integration(item, ids, environ)
    if isinstance(item, doc.EventRule):
        return rule(item, ids)
    if isinstance(item, doc.MaintenanceWindow):
        return window(item, ids)
    if isinstance(item, doc.Heartbeat):
        return heartbeat(item, ids)
    if isinstance(item, doc.StatusPage):
        return {"name": item.name, "slug": item.slug}
    raise TypeError(f"not a document object: {type(item).__name__}")


def patch(section: str, item: doc.Keyed, changed: list[str], ids: Ids) -> dict[str, Any]:
    """The PATCH body for the changed document fields the API can change (empty: nothing to send)."""
    names = PATCH_FIELDS[section]
    whole = full(section, item, ids, None)
    return {names[name]: whole[names[name]] for name in changed if name in names}
