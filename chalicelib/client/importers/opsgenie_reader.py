"""Reading an Opsgenie account through its REST API (v2; Services and Maintenance are v1).

Lists are read page by page where Opsgenie pages them (users); each team, schedule, user and
maintenance is completed with the parts served apart (members, routing rules, overrides,
contacts, notification rules and their steps, maintenance rules). A part Opsgenie does not offer
(404) or not to this key (403) is left out and listed, never guessed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalicelib.client.importers.accounts import OpsgenieAccount
from chalicelib.client.importers.vendor_http import OpsgenieClient, VendorUnavailable

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


class OpsgenieReader:
    def __init__(self, client: OpsgenieClient, progress: Progress = _quiet) -> None:
        self.client = client
        self.progress = progress
        self.account = OpsgenieAccount()

    def read(self) -> OpsgenieAccount:
        try:
            self.client.get("/v2/account")  # a refused key fails here, before anything else
        except VendorUnavailable:
            pass  # a key without access to the account's details still reads the rest
        steps: list[tuple[str, Callable[[], None]]] = [
            ("users", self._users),
            ("teams", self._teams),
            ("schedules", self._schedules),
            ("escalations", self._escalations),
            ("services", self._services),
            ("integrations", self._integrations),
            ("maintenance", self._maintenance),
            ("heartbeats", self._heartbeats),
        ]
        for name, step in steps:
            self.progress(f"opsgenie: reading {name}")
            try:
                step()
            except VendorUnavailable as error:
                self.account.unavailable[name] = str(error)
        return self.account

    def _optional(self, what: str, path: str, params: dict[str, Any] | None = None) -> Any:
        """A part of an object, or None (listed as unavailable) when Opsgenie does not serve it."""
        try:
            return self.client.data(path, params)
        except VendorUnavailable as error:
            self.account.unavailable.setdefault(what, str(error))
            return None

    def _users(self) -> None:
        for index, user in enumerate(self.client.each("/v2/users"), start=1):
            if index % 10 == 0:
                self.progress(f"opsgenie: users {index}")
            user_id = str(user["id"])
            user["contacts"] = self._optional("contacts", f"/v2/users/{user_id}/contacts") or []
            rules = []
            for meta in self._optional("notification rules", f"/v2/users/{user_id}/notification-rules") or []:
                full = self._optional("notification rules", f"/v2/users/{user_id}/notification-rules/{meta['id']}")
                rules.append(full if isinstance(full, dict) else meta)
            user["notificationRules"] = rules
            self.account.users.append(user)

    def _teams(self) -> None:
        for team in self.client.data("/v2/teams") or []:
            team_id = str(team["id"])
            detail = self._optional("team members", f"/v2/teams/{team_id}")
            if isinstance(detail, dict):
                team = {**team, **detail}
            team["routingRules"] = self._optional("routing rules", f"/v2/teams/{team_id}/routing-rules")
            self.account.teams.append(team)

    def _schedules(self) -> None:
        for schedule in self.client.data("/v2/schedules", {"expand": "rotation"}) or []:
            schedule_id = str(schedule["id"])
            if "rotations" not in schedule:  # a list without them: the schedule itself, else its rotations
                detail = self._optional("schedule rotations", f"/v2/schedules/{schedule_id}")
                rotations = detail.get("rotations") if isinstance(detail, dict) else None
                if rotations is None:
                    rotations = self._optional("schedule rotations", f"/v2/schedules/{schedule_id}/rotations")
                schedule["rotations"] = rotations or []
            schedule["overrides"] = self._optional("schedule overrides", f"/v2/schedules/{schedule_id}/overrides") or []
            self.account.schedules.append(schedule)

    def _escalations(self) -> None:
        self.account.escalations = list(self.client.data("/v2/escalations") or [])

    def _services(self) -> None:
        self.account.services = list(self.client.each("/v1/services"))

    def _integrations(self) -> None:
        self.account.integrations = list(self.client.data("/v2/integrations") or [])

    def _maintenance(self) -> None:
        for item in self.client.data("/v1/maintenance", {"type": "non-expired"}) or []:
            if item.get("status") in ("past", "cancelled"):
                continue
            detail = self._optional("maintenance rules", f"/v1/maintenance/{item['id']}")
            self.account.maintenances.append({**item, **detail} if isinstance(detail, dict) else item)

    def _heartbeats(self) -> None:
        found = self.client.data("/v2/heartbeats") or {}
        self.account.heartbeats = list(found.get("heartbeats") or []) if isinstance(found, dict) else list(found)
