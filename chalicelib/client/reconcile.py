"""Applying a plan through the API, one action at a time, in the plan's order.

Every step can be run again: a create that went through before a failure is found by name on the
next run (which plans afresh from what the organization is then), an update sends what it wants
rather than a delta, nested parts are compared with a fresh read before each write. So an apply
that stops part-way (a refusal, a lost connection) is finished by running it again."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chalicelib.client import bodies, nested
from chalicelib.client import document as doc
from chalicelib.client.http import Api, ApiError, ClientError
from chalicelib.client.planner import Action, Plan
from chalicelib.client.state import Current

Progress = Callable[[str], None]

COLLECTIONS: dict[str, str] = {
    "users": "/api/v1/users",
    "teams": "/api/v1/teams",
    "schedules": "/api/v1/schedules",
    "escalation_policies": "/api/v1/escalation-policies",
    "services": "/api/v1/services",
    "integrations": "/api/v1/integrations",
    "event_rules": "/api/v1/event-rules",
    "maintenance_windows": "/api/v1/maintenance-windows",
    "heartbeats": "/api/v1/heartbeats",
    "status_pages": "/api/v1/status-pages",
}
# Creates that honour Idempotency-Key (a retried POST replays the first answer).
IDEMPOTENT_CREATES = frozenset({"event_rules", "maintenance_windows"})
# Writes whose conditional version we send: a change someone made since the read is a 409, not lost.
VERSIONED = frozenset({"schedules", "escalation_policies", "maintenance_windows", "heartbeats"})
DEACTIVATED = frozenset({"users", "teams", "services"})


@dataclass
class Issued:
    """What a create showed once: an integration's URL and key, a heartbeat's ping URL."""

    section: str
    name: str
    values: dict[str, str]


@dataclass
class Outcome:
    done: list[Action] = field(default_factory=list)
    issued: list[Issued] = field(default_factory=list)


class ApplyFailed(ClientError):
    def __init__(self, action: Action, error: Exception, done: int, total: int) -> None:
        self.action = action
        self.done = done
        super().__init__(
            f"{action.op} {action.kind.replace('_', ' ')} {action.label!r} failed: {error}\n"
            f"{done} of {total} changes were made. Fix the cause and run the apply again: it finishes the job."
        )


def _quiet(_: str) -> None:
    return None


class Applier:
    def __init__(
        self,
        api: Api,
        current: Current,
        *,
        now: datetime,
        prune: bool = False,
        environ: dict[str, str] | None = None,
        progress: Progress = _quiet,
    ) -> None:
        self.api = api
        self.current = current
        self.now = now
        self.prune = prune
        self.environ = dict(os.environ) if environ is None else environ
        self.progress = progress
        self.ids = bodies.Ids(current.ids)
        self.outcome = Outcome()

    def apply(self, plan: Plan) -> Outcome:
        changes = plan.changes
        for index, action in enumerate(changes, start=1):
            self.progress(f"[{index}/{len(changes)}] {action.op} {action.kind.replace('_', ' ')} {action.label}")
            try:
                self._run(action)
            except ClientError as error:
                raise ApplyFailed(action, error, index - 1, len(changes)) from error
            self.outcome.done.append(action)
        return self.outcome

    def _run(self, action: Action) -> None:
        if action.op == "create":
            assert action.desired is not None
            self._create(action.section, action.desired, action.position)
        elif action.op == "update":
            assert action.desired is not None and action.current_key is not None
            self._update(action)
        elif action.op == "delete":
            self._delete(action)

    # --- paths --------------------------------------------------------------------------------

    def _item_path(self, section: str, key: str) -> str:
        object_id = self.ids.known[(section, key)]
        if section == "event_rules":
            raw = self.current.raw.get((section, key), {})
            return self._rules_path(raw.get("integration_id")) + f"/{object_id}"
        return f"{COLLECTIONS[section]}/{object_id}"

    @staticmethod
    def _rules_path(integration_id: str | None) -> str:
        return f"/api/v1/integrations/{integration_id}/event-rules" if integration_id else "/api/v1/event-rules"

    # --- create -------------------------------------------------------------------------------

    def _create(self, section: str, item: doc.Keyed, position: int | None) -> None:
        body = bodies.full(section, item, self.ids, self.environ)
        deactivate = section in DEACTIVATED and body.pop("is_active", True) is False
        path = COLLECTIONS[section]
        if isinstance(item, doc.EventRule):
            integration_id = self.ids.maybe("integrations", item.integration)
            path = self._rules_path(integration_id)
            body["position"] = position
        if isinstance(item, doc.StatusPage):
            body = {"name": item.name, "slug": item.slug}
        created = self.api.post(path, body, idempotent=section in IDEMPOTENT_CREATES)
        object_id = str(created["service_id"] if section == "services" else created["id"])
        self.ids.set(section, item.key(), object_id)
        item_path = f"{COLLECTIONS[section]}/{object_id}" if section != "event_rules" else f"{path}/{object_id}"
        if deactivate:
            self.api.patch(item_path, {"is_active": False})
        self._issued(section, item, created)
        self._nested(section, item, item_path, created=True, changed=set())
        if item.source is not None:
            self._record(item, object_id)

    def _issued(self, section: str, item: doc.Keyed, created: dict[str, Any]) -> None:
        if section not in ("integrations", "heartbeats"):
            return  # nothing else shows a secret once
        shown = {
            name: str(created[name])
            for name in ("url", "routing_key", "signing_secret", "ping_url")
            if created.get(name)
        }
        if shown:
            self.outcome.issued.append(Issued(section, getattr(item, "name", item.key()), shown))

    # --- update -------------------------------------------------------------------------------

    def _update(self, action: Action) -> None:
        section, item, old_key = action.section, action.desired, action.current_key
        assert item is not None and old_key is not None
        object_id = self.ids.known[(section, old_key)]
        self.ids.set(section, item.key(), object_id)
        path = self._item_path(section, old_key)
        changed = {change.field for change in action.changes}
        body = bodies.patch(section, item, sorted(changed), self.ids)
        if "position" in changed:
            body["position"] = action.position
        if body:
            version = self.current.raw.get((section, old_key), {}).get("version")
            if section in VERSIONED and version is not None:
                body["version"] = version
            self.api.patch(path, body)
        self._nested(section, item, path, created=False, changed=changed)
        if "source" in changed and item.source is not None:
            self._record(item, object_id)

    def _nested(self, section: str, item: doc.Keyed, path: str, *, created: bool, changed: set[str]) -> None:
        """The parts an object's own PATCH does not carry, compared with a fresh read."""
        if isinstance(item, doc.User):
            if item.contact_methods is not None and (created or "contact_methods" in changed):
                nested.contact_methods(self.api, path, item, prune=self.prune)
            if item.notification_rules is not None and (created or "notification_rules" in changed):
                nested.notification_rules(self.api, path, item)
        elif isinstance(item, doc.Schedule):
            if item.overrides is not None and (created or "overrides" in changed):
                nested.overrides(self.api, path, item, self.ids, now=self.now, prune=self.prune)
        elif isinstance(item, doc.StatusPage) and (created or changed - {"name", "slug", "source"}):
            nested.status_parts(self.api, path, item, prune=self.prune)

    # --- delete -------------------------------------------------------------------------------

    def _delete(self, action: Action) -> None:
        key = action.current_key or action.key
        path = self._item_path(action.section, key)
        if action.section in DEACTIVATED:
            body: dict[str, Any] = {"is_active": False}
            if action.detach_policy:
                body["escalation_policy_id"] = None
            self.api.patch(path, body)
        else:
            self.api.delete(path)
        for ref_id in self.current.ref_ids.get((action.section, key), []):
            try:
                self.api.delete(f"/api/v1/external-refs/{ref_id}")
            except ApiError as error:
                if error.status != 404:
                    raise

    # --- the import ledger --------------------------------------------------------------------

    def _record(self, item: doc.Keyed, object_id: str) -> None:
        assert item.source is not None
        self.api.post(
            "/api/v1/external-refs",
            {"kind": item.kind, "vendor": item.source.vendor, "external_id": item.source.id, "tocsin_id": object_id},
        )
