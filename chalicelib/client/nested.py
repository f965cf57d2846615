"""The parts of an object that have operations of their own: a user's contact methods and
notification rules, a schedule's overrides, a status page's sections, groups, components and
templates. Each is read fresh and brought to the document's state; extras go only with prune."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.client import canonical
from chalicelib.client import document as doc
from chalicelib.client.bodies import Ids
from chalicelib.client.convert import DEFAULT_LABELS
from chalicelib.client.http import Api, ClientError


def _method_key(kind: str, address: str) -> tuple[str, str]:
    return (kind, address.lower() if kind == "email" else address)


def _implied(method: dict[str, Any], user: doc.User) -> bool:
    """The methods every user has: the account email, and Slack when the user has a Slack id."""
    return bool(method.get("follows_account_email")) or (
        method["type"] == "slack" and method["address"] == user.slack_user_id
    )


def contact_methods(api: Api, user_path: str, user: doc.User, *, prune: bool) -> None:
    path = f"{user_path}/contact-methods"
    existing = {_method_key(m["type"], m["address"]): m for m in api.all(path)}
    wanted = set()
    for method in user.contact_methods or []:
        key = _method_key(method.type, method.address)
        wanted.add(key)
        found = existing.get(key)
        if found is None:
            api.post(path, {"type": method.type, "address": method.address, "label": method.label})
        elif _implied(found, user):
            continue
        elif found["label"] != (method.label or DEFAULT_LABELS[method.type]):
            api.patch(f"{path}/{found['id']}", {"label": method.label})
    if prune:
        for key, found in existing.items():
            if key not in wanted and not _implied(found, user):
                api.delete(f"{path}/{found['id']}")


def notification_rules(api: Api, user_path: str, user: doc.User) -> None:
    rules = user.notification_rules
    assert rules is not None
    methods = {_method_key(m["type"], m["address"]): m["id"] for m in api.all(f"{user_path}/contact-methods")}

    def steps(urgency: str) -> list[dict[str, Any]]:
        found = []
        for step in getattr(rules, urgency):
            method_id = methods.get(_method_key(step.type, step.address))
            if method_id is None:
                raise ClientError(f"user {user.email}: no {step.type} contact method {step.address!r}")
            found.append({"contact_method_id": method_id, "delay_minutes": step.delay_minutes})
        return found

    api.put(f"{user_path}/notification-rules", {"high": steps("high"), "low": steps("low")})


def overrides(api: Api, schedule_path: str, schedule: doc.Schedule, ids: Ids, *, now: datetime, prune: bool) -> None:
    present = api.get(schedule_path).get("overrides", [])

    def key(user_id: str, start: str | None, end: str | None) -> tuple[str, str | None, str | None]:
        return (user_id, start, end)

    existing = {
        key(
            o["user_id"],
            canonical.utc(datetime.fromisoformat(o["start"])),
            canonical.utc(datetime.fromisoformat(o["end"])),
        ): o
        for o in present
        if datetime.fromisoformat(o["end"]) > now
    }
    wanted = set()
    for override in schedule.overrides or []:
        if override.end <= now:
            continue
        user_id = ids.get("users", override.user)
        found = key(user_id, canonical.utc(override.start), canonical.utc(override.end))
        wanted.add(found)
        if found not in existing:
            api.post(f"{schedule_path}/overrides", {"user_id": user_id, "start": found[1], "end": found[2]})
    if prune:
        for found, override in existing.items():
            if found not in wanted:
                api.delete(f"{schedule_path}/overrides/{override['override_id']}")


def status_parts(api: Api, page_path: str, page: doc.StatusPage, *, prune: bool) -> None:
    """Sections, then groups, components and templates; deletes (prune) in the reverse order,
    since a section or group must be empty before it goes."""
    sections = {s["name"].casefold(): s for s in api.all(f"{page_path}/sections")}
    for section in page.sections:
        found = sections.get(section.name.casefold())
        if found is None:
            sections[section.name.casefold()] = api.post(f"{page_path}/sections", {"name": section.name})
        elif found["name"] != section.name:
            api.patch(f"{page_path}/sections/{found['id']}", {"name": section.name})
    groups = {(g["section_id"], g["name"].casefold()): g for g in api.all(f"{page_path}/groups")}
    places: dict[str, tuple[str, str | None]] = {}  # component name -> (section id, group id)
    for section in page.sections:
        section_id = sections[section.name.casefold()]["id"]
        for component in section.components:
            places[component.name.casefold()] = (section_id, None)
        for group in section.groups:
            found = groups.get((section_id, group.name.casefold()))
            if found is None:
                found = api.post(f"{page_path}/groups", {"section_id": section_id, "name": group.name})
                groups[(section_id, group.name.casefold())] = found
            elif found["name"] != group.name:
                api.patch(f"{page_path}/groups/{found['id']}", {"name": group.name})
            for component in group.components:
                places[component.name.casefold()] = (section_id, found["id"])
    names = {c.name.casefold(): c.name for s in page.sections for c in s.components}
    names.update({c.name.casefold(): c.name for s in page.sections for g in s.groups for c in g.components})
    components = {c["name"].casefold(): c for c in api.all(f"{page_path}/components")}
    for key, (section_id, group_id) in places.items():
        found = components.get(key)
        if found is None:
            body = {"section_id": section_id, "group_id": group_id, "name": names[key]}
            components[key] = api.post(f"{page_path}/components", body)
            continue
        change: dict[str, Any] = {}
        if found["name"] != names[key]:
            change["name"] = names[key]
        if found["section_id"] != section_id:
            change["section_id"] = section_id
        if found.get("group_id") != group_id:
            change["group_id"] = group_id
        if change:
            api.patch(f"{page_path}/components/{found['id']}", change)
    _templates(api, page_path, page, {key: c["id"] for key, c in components.items()}, prune=prune)
    if prune:
        for key, found in components.items():
            if key not in places:
                api.delete(f"{page_path}/components/{found['id']}")
        kept_groups = {(sections[s.name.casefold()]["id"], g.name.casefold()) for s in page.sections for g in s.groups}
        for group_key, found in groups.items():
            if group_key not in kept_groups:
                api.delete(f"{page_path}/groups/{found['id']}")
        kept_sections = {s.name.casefold() for s in page.sections}
        for section_key, found in sections.items():
            if section_key not in kept_sections:
                api.delete(f"{page_path}/sections/{found['id']}")


def _templates(api: Api, page_path: str, page: doc.StatusPage, component_ids: dict[str, str], *, prune: bool) -> None:
    path = f"{page_path}/templates"
    existing = {t["name"].casefold(): t for t in api.all(path)}
    for template in page.templates:
        body = {
            "name": template.name,
            "title": template.title,
            "body": template.body,
            "status": template.status,
            "impact": template.impact,
            "component_statuses": {
                component_ids[name.casefold()]: status for name, status in template.component_statuses.items()
            },
        }
        found = existing.get(template.name.casefold())
        if found is None:
            api.post(path, body, idempotent=True)
            continue
        changed = {name: value for name, value in body.items() if found.get(name) != value}
        if changed:
            api.patch(f"{path}/{found['id']}", changed)
    if prune:
        wanted = {template.name.casefold() for template in page.templates}
        for key, found in existing.items():
            if key not in wanted:
                api.delete(f"{path}/{found['id']}")
