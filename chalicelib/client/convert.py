"""From the API's answers to the document's objects: server ids become the names they stand for."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.client import document as doc

DEFAULT_LABELS: dict[str, str] = {"email": "Email", "slack": "Slack", "sms": "SMS", "voice": "Voice call"}


class Names:
    """Server id -> document name (users: email), per section, filled as sections are read."""

    def __init__(self) -> None:
        self._names: dict[tuple[str, str], str] = {}
        self._aliases: dict[tuple[str, str], str] = {}
        self._order: dict[str, list[str]] = {}

    def add(self, section: str, object_id: str, item: doc.Keyed) -> None:
        name = getattr(item, "email", None) or getattr(item, "name", None)
        if isinstance(name, str):
            self._names[(section, object_id)] = name
        self._order.setdefault(section, []).append(object_id)

    def alias(self, section: str, other_id: str, object_id: str) -> None:
        self._aliases[(section, other_id)] = object_id

    def name(self, section: str, object_id: str | None) -> str | None:
        if object_id is None:
            return None
        object_id = self._aliases.get((section, object_id), object_id)
        if section == "services" and object_id.upper().startswith("SER-"):
            object_id = object_id.upper()
        return self._names.get((section, object_id))

    def named(self, section: str, object_id: str) -> str:
        """The name, or the id itself when it names nothing known (kept visible rather than dropped)."""
        return self.name(section, object_id) or object_id

    def ids(self, section: str) -> list[str]:
        return list(self._order.get(section, []))


def when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def source(vendor: str, external_id: str) -> doc.Source:
    return doc.Source(vendor=vendor, id=external_id)


def _label(method: dict[str, Any]) -> str | None:
    label = method.get("label")
    return None if not label or label == DEFAULT_LABELS.get(method["type"]) else str(label)


def user_of(raw: dict[str, Any]) -> doc.User:
    slack = raw.get("slack_user_id")
    implied = {("email", str(raw["email"]).lower()), ("slack", slack)}
    methods = [
        doc.ContactMethod(type=m["type"], address=m["address"], label=_label(m))
        for m in raw.get("methods", [])
        if not m.get("follows_account_email") and (m["type"], m["address"]) not in implied
    ]
    rules = raw.get("rules") or {}
    return doc.User(
        email=raw["email"],
        name=raw.get("name") or raw["email"],
        role=raw.get("role") or "responder",
        slack_user_id=slack,
        active=bool(raw.get("is_active", True)),
        contact_methods=sorted(methods, key=lambda m: (m.type, m.address)),
        notification_rules=doc.NotificationRules(
            high=[_step(step) for step in rules.get("high", [])],
            low=[_step(step) for step in rules.get("low", [])],
        ),
    )


def _step(step: dict[str, Any]) -> doc.RuleStep:
    return doc.RuleStep(type=step["type"], address=step["address"], delay_minutes=step["delay_minutes"])


def team_of(raw: dict[str, Any], names: Names) -> doc.Team:
    return doc.Team(
        name=raw["name"],
        description=raw.get("description"),
        members=sorted({names.named("users", member) for member in raw.get("member_ids", [])}),
        active=bool(raw.get("is_active", True)),
    )


def schedule_of(raw: dict[str, Any], names: Names, now: datetime) -> doc.Schedule:
    layers = [
        doc.Layer(
            name=layer["name"],
            members=[names.named("users", member) for member in layer["members"]],
            rotation=layer["rotation"],
            rotation_hours=layer.get("rotation_hours"),
            handoff_time=layer["handoff_time"],
            start=layer["start"],
            end=layer.get("end"),
            restrictions=[doc.Restriction.model_validate(r) for r in layer.get("restrictions", [])],
        )
        for layer in raw["layers"]
    ]
    overrides = [
        doc.Override(user=names.named("users", o["user_id"]), start=o["start"], end=o["end"])
        for o in raw.get("overrides", [])
        if (when(o["end"]) or now) > now
    ]
    return doc.Schedule(
        name=raw["name"],
        time_zone=raw["time_zone"],
        team=names.name("teams", raw.get("team_id")),
        handoff_notice_lead_minutes=raw.get("handoff_notice_lead_minutes", 0),
        layers=layers,
        overrides=sorted(overrides, key=lambda o: (o.start, o.end, o.user)),
    )


def policy_of(raw: dict[str, Any], names: Names) -> doc.EscalationPolicy:
    def target(t: dict[str, Any]) -> doc.Target:
        if t["kind"] == "user":
            return doc.Target(user=names.named("users", t["id"]))
        return doc.Target(schedule=names.named("schedules", t["id"]))

    return doc.EscalationPolicy(
        name=raw["name"],
        repeat_count=raw.get("repeat_count", 0),
        levels=[
            doc.Level(delay_minutes=level["delay_minutes"], targets=[target(t) for t in level["targets"]])
            for level in raw["levels"]
        ],
    )


def service_of(raw: dict[str, Any], names: Names) -> doc.Service:
    grouping = {k: v for k, v in (raw.get("alert_grouping") or {}).items() if v is not None}
    return doc.Service(
        name=raw["name"],
        description=raw.get("description"),
        team=names.name("teams", raw.get("team_id")),
        escalation_policy=names.name("escalation_policies", raw.get("escalation_policy_id")),
        default_severity=raw.get("default_severity"),
        urgency_rule=doc.UrgencyRule.model_validate(raw.get("urgency_rule") or {}),
        alert_grouping=doc.AlertGrouping.model_validate(grouping),
        active=bool(raw.get("is_active", True)),
    )


def integration_of(raw: dict[str, Any], names: Names) -> doc.Integration:
    return doc.Integration(
        name=raw["name"],
        type=raw["type"],
        service=names.name("services", raw.get("default_service")),
        signing=bool(raw.get("signing")),
        ip_allowlist=list(raw.get("ip_allowlist") or []),
        expected_topic_arn=raw.get("expected_topic_arn"),
    )


def rule_of(raw: dict[str, Any], integration: str | None, names: Names) -> doc.EventRule:
    conditions = []
    for c in raw.get("conditions", []):
        service = names.name("services", c.get("value")) if c["field"] == "service_id" else None
        if service is not None and c["op"] == "equals":
            conditions.append(doc.Condition(field="service", op="equals", value=service))
        else:
            conditions.append(doc.Condition(field=c["field"], op=c["op"], value=c.get("value")))
    actions = raw.get("actions") or {}
    route = actions.get("route_to_service")
    return doc.EventRule(
        description=raw.get("description"),
        integration=integration,
        conditions=conditions,
        actions=doc.Actions(
            suppress=bool(actions.get("suppress")),
            drop=bool(actions.get("drop")),
            severity=actions.get("severity"),
            route_to_service=names.named("services", route) if route else None,
            note=actions.get("note"),
        ),
        continue_=bool(raw.get("continue")),
    )


def window_of(raw: dict[str, Any], names: Names) -> doc.MaintenanceWindow:
    return doc.MaintenanceWindow(
        description=raw.get("description"),
        services=sorted(names.named("services", s) for s in raw.get("service_ids", [])),
        start=raw["start"],
        end=raw["end"],
    )


def heartbeat_of(raw: dict[str, Any], names: Names) -> doc.Heartbeat:
    return doc.Heartbeat(
        name=raw["name"],
        service=names.named("services", raw.get("service_id") or raw["service_key"]),
        interval_seconds=raw["interval_seconds"],
        grace_seconds=raw.get("grace_seconds", 0),
        description=raw.get("description"),
        enabled=bool(raw.get("enabled", True)),
    )


def status_page_of(raw: dict[str, Any]) -> doc.StatusPage:
    components = raw.get("components", [])
    component_names = {c["id"]: c["name"] for c in components}

    def in_place(section_id: str, group_id: str | None) -> list[doc.Component]:
        return [
            doc.Component(name=c["name"])
            for c in components
            if c["section_id"] == section_id and c.get("group_id") == group_id
        ]

    sections = [
        doc.Section(
            name=section["name"],
            components=in_place(section["id"], None),
            groups=[
                doc.ComponentGroup(name=group["name"], components=in_place(section["id"], group["id"]))
                for group in raw.get("groups", [])
                if group["section_id"] == section["id"]
            ],
        )
        for section in raw.get("sections", [])
    ]
    templates = [
        doc.IncidentTemplate(
            name=t["name"],
            title=t["title"],
            body=t["body"],
            status=t.get("status"),
            impact=t.get("impact"),
            component_statuses={
                component_names.get(cid, cid): status for cid, status in (t.get("component_statuses") or {}).items()
            },
        )
        for t in raw.get("templates", [])
    ]
    return doc.StatusPage(
        name=raw["name"], slug=raw["slug"], sections=sections, templates=sorted(templates, key=lambda t: t.name)
    )


def suffixed(item: doc.Keyed, count: int) -> doc.Keyed:
    """The same object under a key of its own: " (n)" after its name, or its description."""
    if hasattr(item, "name"):
        return item.model_copy(update={"name": f"{item.name} ({count})"})
    if hasattr(item, "description"):
        return item.model_copy(update={"description": f"{item.description or 'duplicate'} ({count})"})
    return item


def ordered(section: str, items: list[Any]) -> list[Any]:
    """The export's order: by key, except event rules, which keep each list's order (the
    organization's list first, then each integration's by name)."""
    if section == "event_rules":
        return sorted(items, key=lambda r: (r.integration is not None, (r.integration or "").casefold()))
    if section == "maintenance_windows":
        return sorted(items, key=lambda w: (w.start, w.key()))
    return sorted(items, key=lambda item: item.key())
