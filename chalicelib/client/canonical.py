"""What the planner compares: each object as plain data in one canonical form, so two objects
that mean the same compare equal (times in UTC, emails lower-cased, sets sorted, defaults filled,
the methods every user has left out) and whatever the API cannot show is left out (secrets).

Nested collections the document may leave partly unsaid (a user's contact methods, a schedule's
overrides, a status page's parts) compare as "the document's items are there" unless pruning,
when they must be exactly the document's."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime
from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.convert import DEFAULT_LABELS

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def utc(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _address(kind: str, address: str) -> str:
    return address.lower() if kind == "email" else address


class Ref:
    """A reference by name, as compared (`fold`: case-folded, as the server matches names) or as
    shown. `renamed` maps, per section, an object's key in the organization to its name in the
    document: a reference to an object the document renames (found by its source) is then the
    same reference, not a change."""

    def __init__(self, *, fold: bool = True, renamed: dict[str, dict[str, str]] | None = None) -> None:
        self.fold = fold
        self.renamed = renamed or {}

    def __call__(self, section: str, name: str | None) -> str | None:
        if name is None:
            return None
        name = self.renamed.get(section, {}).get(name.lower() if section == "users" else name.casefold(), name)
        if section == "users":
            return name.lower()
        return name.casefold() if self.fold else name


def _ip(entry: str) -> str:
    try:
        return str(ipaddress.ip_network(entry.strip(), strict=False))
    except ValueError:
        return entry  # the server names it in its 400


def _user(user: doc.User) -> dict[str, Any]:
    implied = {("email", user.email.lower()), ("slack", user.slack_user_id)}
    fields: dict[str, Any] = {
        "email": user.email.lower(),
        "name": user.name,
        "role": user.role,
        "slack_user_id": user.slack_user_id,
        "active": user.active,
    }
    if user.contact_methods is not None:
        methods = {
            (m.type, _address(m.type, m.address)): m.label or DEFAULT_LABELS[m.type] for m in user.contact_methods
        }
        fields["contact_methods"] = sorted(
            [{"type": t, "address": a, "label": label} for (t, a), label in methods.items() if (t, a) not in implied],
            key=lambda m: (m["type"], m["address"]),
        )
    if user.notification_rules is not None:
        rules = user.notification_rules
        fields["notification_rules"] = {
            urgency: [
                {"type": s.type, "address": _address(s.type, s.address), "delay_minutes": s.delay_minutes}
                for s in sorted(getattr(rules, urgency), key=lambda s: s.delay_minutes)
            ]
            for urgency in ("high", "low")
        }
    return fields


def _schedule(schedule: doc.Schedule, now: datetime, ref: Ref) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "name": schedule.name,
        "time_zone": schedule.time_zone,
        "team": ref("teams", schedule.team),
        "handoff_notice_lead_minutes": schedule.handoff_notice_lead_minutes,
        "layers": [
            {
                **layer.model_dump(mode="json", exclude={"start", "end", "members"}),
                "members": [ref("users", m) for m in layer.members],
                "start": utc(layer.start),
                "end": utc(layer.end),
            }
            for layer in schedule.layers
        ],
    }
    if schedule.overrides is not None:
        fields["overrides"] = sorted(
            (
                {"user": ref("users", o.user), "start": utc(o.start), "end": utc(o.end)}
                for o in schedule.overrides
                if o.end > now
            ),
            key=lambda o: (o["start"], o["end"], o["user"]),
        )
    return fields


def _policy(policy: doc.EscalationPolicy, ref: Ref) -> dict[str, Any]:
    return {
        "name": policy.name,
        "repeat_count": policy.repeat_count,
        "levels": [
            {
                "delay_minutes": level.delay_minutes,
                "targets": [
                    {"user": ref("users", t.user)} if t.user is not None else {"schedule": ref("schedules", t.schedule)}
                    for t in level.targets
                ],
            }
            for level in policy.levels
        ],
    }


def _service(service: doc.Service, ref: Ref) -> dict[str, Any]:
    rule = service.urgency_rule.model_dump(mode="json")
    if rule["support_hours"] is not None:
        days = set(rule["support_hours"]["days"])
        rule["support_hours"]["days"] = [day for day in WEEKDAYS if day in days]
    grouping = service.alert_grouping
    return {
        "name": service.name,
        "description": service.description,
        "team": ref("teams", service.team),
        "escalation_policy": ref("escalation_policies", service.escalation_policy),
        "default_severity": service.default_severity,
        "urgency_rule": rule,
        "alert_grouping": {
            "type": grouping.type,
            "window_minutes": grouping.window_minutes if grouping.type != "none" else None,
            "fields": list(grouping.fields or []) if grouping.type == "content" else None,
        },
        "active": service.active,
    }


def _integration(integration: doc.Integration, ref: Ref) -> dict[str, Any]:
    allowlist = list(dict.fromkeys(_ip(entry) for entry in integration.ip_allowlist))
    return {
        "name": integration.name,
        "type": integration.type,
        "service": ref("services", integration.service),
        "signing": integration.signing,
        "ip_allowlist": allowlist,
        "expected_topic_arn": integration.expected_topic_arn,
    }


def _rule(rule: doc.EventRule, ref: Ref) -> dict[str, Any]:
    actions = rule.actions.model_dump(mode="json")
    if actions["route_to_service"]:
        actions["route_to_service"] = ref("services", actions["route_to_service"])
    actions["note"] = actions["note"] or None
    return {
        "description": rule.description or None,
        "conditions": [
            {"field": c.field, "op": c.op, "value": ref("services", c.value) if c.field == "service" else c.value}
            for c in rule.conditions
        ],
        "actions": actions,
        "continue": rule.continue_,
    }


def _window(window: doc.MaintenanceWindow, ref: Ref) -> dict[str, Any]:
    return {
        "description": window.description or None,
        "services": sorted(
            {str(ref("services", n)).casefold(): ref("services", n) for n in window.services}.values(),
            key=lambda name: str(name).casefold(),
        ),
        "start": utc(window.start),
        "end": utc(window.end),
    }


def _heartbeat(heartbeat: doc.Heartbeat, ref: Ref) -> dict[str, Any]:
    return {**heartbeat.model_dump(mode="json", exclude={"source"}), "service": ref("services", heartbeat.service)}


def status_parts(page: doc.StatusPage) -> dict[str, Any]:
    """A page's parts as flat sorted lists keyed by name: sections, groups (section, name),
    components (name, section, group), templates."""
    components = []
    for section in page.sections:
        components += [{"name": c.name, "section": section.name, "group": None} for c in section.components]
        for group in section.groups:
            components += [{"name": c.name, "section": section.name, "group": group.name} for c in group.components]
    return {
        "sections": sorted(section.name for section in page.sections),
        "groups": sorted([s.name, g.name] for s in page.sections for g in s.groups),
        "components": sorted(components, key=lambda c: c["name"].casefold()),
        "templates": sorted((t.model_dump(mode="json") for t in page.templates), key=lambda t: t["name"].casefold()),
    }


def _status_page(page: doc.StatusPage) -> dict[str, Any]:
    return {"name": page.name, "slug": page.slug, **status_parts(page)}


def fields(item: doc.Keyed, now: datetime, ref: Ref | None = None) -> dict[str, Any]:
    """The object as plain data; references through `ref` (default: as compared)."""
    ref = ref or Ref()
    if isinstance(item, doc.User):
        return _user(item)
    if isinstance(item, doc.Team):
        members = sorted({str(ref("users", m)) for m in item.members})
        return {"name": item.name, "description": item.description, "members": members, "active": item.active}
    if isinstance(item, doc.Schedule):
        return _schedule(item, now, ref)
    if isinstance(item, doc.EscalationPolicy):
        return _policy(item, ref)
    if isinstance(item, doc.Service):
        return _service(item, ref)
    if isinstance(item, doc.Integration):
        return _integration(item, ref)
    if isinstance(item, doc.EventRule):
        return _rule(item, ref)
    if isinstance(item, doc.MaintenanceWindow):
        return _window(item, ref)
    if isinstance(item, doc.Heartbeat):
        return _heartbeat(item, ref)
    if isinstance(item, doc.StatusPage):
        return _status_page(item)
    raise TypeError(f"not a document object: {type(item).__name__}")


# Nested lists that compare as "the document's items are there" unless pruning: field -> item key.
PARTIAL: dict[str, Any] = {
    "contact_methods": lambda m: (m["type"], m["address"]),
    "overrides": lambda o: (o["start"], o["end"], o["user"]),
    "sections": lambda name: name.casefold(),
    "groups": lambda pair: (pair[0].casefold(), pair[1].casefold()),
    "components": lambda c: c["name"].casefold(),
    "templates": lambda t: t["name"].casefold(),
}


def compared(desired: dict[str, Any], current: dict[str, Any], *, prune: bool) -> dict[str, Any]:
    """`current` as the comparison sees it: fields the document leaves unmanaged dropped, and
    without prune, nested items the document does not name left out."""
    seen = {name: value for name, value in current.items() if name in desired}
    if prune:
        return seen
    for name, key in PARTIAL.items():
        if name in seen and isinstance(seen[name], list):
            wanted = {key(item) for item in desired[name]}
            seen[name] = [item for item in seen[name] if key(item) in wanted]
    return seen
