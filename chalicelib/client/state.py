"""The organization as it is, read through the API into the document's shape (`tocsin config
export` prints it; the planner compares a document with it).

Server ids stay out of the document: `Current.ids` maps each object's (section, key) to its id,
and `Current.raw` keeps what the server answered (versions, nested ids) for the applier. Objects
that are history rather than setup are left out: revoked integrations, maintenance windows that
are over, overrides that have ended. Two objects with one name (the server allows it for some
kinds) get " (2)", " (3)" after the name, oldest first, and a warning."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chalicelib.client import convert
from chalicelib.client.document import SECTIONS, Document, Keyed
from chalicelib.client.http import Api, ApiError

Key = tuple[str, str]  # (section, object key)
Progress = Callable[[str], None]


@dataclass
class Current:
    document: Document
    ids: dict[Key, str] = field(default_factory=dict)
    raw: dict[Key, dict[str, Any]] = field(default_factory=dict)
    # (section, key) -> every (vendor, vendor id) the import ledger records for the object
    sources: dict[Key, set[tuple[str, str]]] = field(default_factory=dict)
    # ledger entry ids per object, removed with the object on --prune
    ref_ids: dict[Key, list[str]] = field(default_factory=dict)
    ledger_readable: bool = True
    warnings: list[str] = field(default_factory=list)
    organization: str = ""

    def known(self, section: str, key: str) -> bool:
        return (section, key) in self.ids

    def active(self, section: str, key: str) -> bool:
        raw = self.raw.get((section, key), {})
        return bool(raw.get("is_active", True))


def _quiet(_: str) -> None:
    return None


class Reader:
    def __init__(self, api: Api, now: datetime, progress: Progress = _quiet) -> None:
        self.api = api
        self.now = now
        self.progress = progress
        self.names = convert.Names()

    def read(self) -> Current:
        verified = self.api.get("/api/v1/auth/verify")
        sections: dict[str, list[tuple[Keyed, dict[str, Any]]]] = {}
        readers: list[tuple[str, Callable[[], list[tuple[Keyed, dict[str, Any]]]]]] = [
            ("users", self._users),
            ("teams", self._teams),
            ("schedules", self._schedules),
            ("escalation_policies", self._policies),
            ("services", self._services),
            ("integrations", self._integrations),
            ("event_rules", self._event_rules),
            ("maintenance_windows", self._windows),
            ("heartbeats", self._heartbeats),
            ("status_pages", self._status_pages),
        ]
        current = Current(Document(version=1), organization=str(verified.get("organization_name") or ""))
        for section, read in readers:
            self.progress(f"reading {section.replace('_', ' ')}")
            found = read()
            sections[section] = _distinct(section, found, current.warnings)
            for item, raw in sections[section]:
                self.names.add(section, raw["id"], item)
        self._ledger(current, sections)
        for section, _ in SECTIONS:
            items = [item for item, _ in sections[section]]
            setattr(current.document, section, convert.ordered(section, items))
            for item, raw in sections[section]:
                current.ids[(section, item.key())] = str(raw["id"])
                current.raw[(section, item.key())] = raw
        return current

    # --- each section ---------------------------------------------------------------------------

    def _users(self) -> list[tuple[Keyed, dict[str, Any]]]:
        found: list[tuple[Keyed, dict[str, Any]]] = []
        for raw in self.api.all("/api/v1/users"):
            if not raw.get("email"):
                continue  # a person without an email cannot be named in a document
            path = f"/api/v1/users/{raw['id']}"
            raw = {**raw, "methods": self.api.all(path + "/contact-methods")}
            raw["rules"] = self.api.get(path + "/notification-rules")
            found.append((convert.user_of(raw), raw))
        return found

    def _teams(self) -> list[tuple[Keyed, dict[str, Any]]]:
        return [(convert.team_of(raw, self.names), raw) for raw in self.api.all("/api/v1/teams")]

    def _schedules(self) -> list[tuple[Keyed, dict[str, Any]]]:
        return [(convert.schedule_of(raw, self.names, self.now), raw) for raw in self.api.all("/api/v1/schedules")]

    def _policies(self) -> list[tuple[Keyed, dict[str, Any]]]:
        found = self.api.all("/api/v1/escalation-policies")
        return [(convert.policy_of(raw, self.names), raw) for raw in found]

    def _services(self) -> list[tuple[Keyed, dict[str, Any]]]:
        found: list[tuple[Keyed, dict[str, Any]]] = []
        for raw in self.api.all("/api/v1/services"):
            raw = {**raw, "id": raw["service_id"]}
            found.append((convert.service_of(raw, self.names), raw))
            self.names.alias("services", raw["service_key"], raw["service_id"])
        return found

    def _integrations(self) -> list[tuple[Keyed, dict[str, Any]]]:
        found = self.api.all("/api/v1/integrations")
        return [(convert.integration_of(raw, self.names), raw) for raw in found if raw.get("state") == "active"]

    def _event_rules(self) -> list[tuple[Keyed, dict[str, Any]]]:
        found: list[tuple[Keyed, dict[str, Any]]] = []
        lists: list[tuple[str | None, str]] = [(None, "/api/v1/event-rules")]
        for listed in self.names.ids("integrations"):
            lists.append((listed, f"/api/v1/integrations/{listed}/event-rules"))
        for integration_id, path in lists:
            owner = self.names.name("integrations", integration_id) if integration_id else None
            for raw in self.api.all(path):
                found.append((convert.rule_of(raw, owner, self.names), raw))
        return found

    def _windows(self) -> list[tuple[Keyed, dict[str, Any]]]:
        found = self.api.all("/api/v1/maintenance-windows", {"state": "open"})
        return [(convert.window_of(raw, self.names), raw) for raw in found]

    def _heartbeats(self) -> list[tuple[Keyed, dict[str, Any]]]:
        found = self.api.all("/api/v1/heartbeats")
        return [(convert.heartbeat_of(raw, self.names), raw) for raw in found]

    def _status_pages(self) -> list[tuple[Keyed, dict[str, Any]]]:
        found: list[tuple[Keyed, dict[str, Any]]] = []
        for raw in self.api.all("/api/v1/status-pages"):
            path = f"/api/v1/status-pages/{raw['id']}"
            raw = {**raw}
            for part in ("sections", "groups", "components", "templates"):
                raw[part] = self.api.all(f"{path}/{part}")
            found.append((convert.status_page_of(raw), raw))
        return found

    def _ledger(self, current: Current, sections: dict[str, list[tuple[Keyed, dict[str, Any]]]]) -> None:
        try:
            entries = self.api.all("/api/v1/external-refs")
        except ApiError as error:
            if error.status not in (403, 404):
                raise
            current.ledger_readable = False
            current.warnings.append(
                "the import ledger is not readable with this key (the admin scope): sources are left out"
            )
            return
        by_id: dict[tuple[str, str], Keyed] = {}
        for section, items in sections.items():
            for item, raw in items:
                by_id[(item.kind, str(raw["id"]))] = item
                if section == "services":
                    by_id[(item.kind, str(raw["service_key"]))] = item
        for entry in entries:
            named = by_id.get((entry["kind"], entry["tocsin_id"]))
            if named is None:
                continue  # the object is gone: a stale entry, overwritten when the source is imported again
            key = (_section_of(named), named.key())
            current.sources.setdefault(key, set()).add((entry["vendor"], entry["external_id"]))
            current.ref_ids.setdefault(key, []).append(entry["id"])
        for key, sources in current.sources.items():
            vendor, external_id = min(sources)
            item = next(i for i, _ in sections[key[0]] if i.key() == key[1])
            item.source = convert.source(vendor, external_id)


def _section_of(item: Keyed) -> str:
    return next(section for section, model in SECTIONS if isinstance(item, model))


def _distinct(
    section: str, found: list[tuple[Keyed, dict[str, Any]]], warnings: list[str]
) -> list[tuple[Keyed, dict[str, Any]]]:
    """Keys made unique, the order kept: a later object (by creation, then id) sharing a key gets " (n)"."""
    by_age = sorted(range(len(found)), key=lambda i: (str(found[i][1].get("created_at") or ""), str(found[i][1]["id"])))
    seen: dict[str, int] = {}
    kept = list(found)
    for index in by_age:
        item, raw = found[index]
        key = item.key()
        count = seen.get(key, 0) + 1
        seen[key] = count
        if count > 1:
            renamed = convert.suffixed(item, count)
            warnings.append(
                f"two {section.replace('_', ' ')} share the key {key!r}: {raw['id']} is shown as "
                f"{renamed.key()!r}; rename one of them"
            )
            kept[index] = (renamed, raw)
    return kept
