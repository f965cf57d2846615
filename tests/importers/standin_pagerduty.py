"""A stand-in for PagerDuty's REST API v2 over HTTPS (the official client takes nothing else),
answering as its published description says: `Authorization: Token token=...`, classic paging
(limit, offset, more), entity wrappers, `include[]`, 401 and 429 bodies; who is on call
(`/oncalls`, a schedule's `final_schedule` for since/until) from tests.importers.vendor_oncall."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.importers import vendor_oncall
from tests.importers.standin import Answer, Query, StandIn, first, page
from tests.importers.tls import Tls

DEFAULT_LIMIT = 25


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class PagerDutyStandIn(StandIn):
    def __init__(
        self, account: dict[str, Any], tls: Tls, token: str = "pd-test-token", now: datetime | None = None
    ) -> None:
        super().__init__(tls=tls)
        self.account = account
        self.now = now  # what "ongoing" and "future" windows are measured from (None: the clock)
        self.token = token
        self.users = {u["id"]: u for u in account["users"]}
        self.schedules = {s["id"]: s for s in account["schedules"]}
        self.services = {s["id"]: s for s in account["services"]}
        for pattern, handler in (
            (r"/users", self._users),
            (r"/users/(\w+)/contact_methods", self._contact_methods),
            (r"/users/(\w+)/notification_rules", self._notification_rules),
            (r"/teams", self._teams),
            (r"/teams/(\w+)/members", self._members),
            (r"/schedules", self._schedules),
            (r"/schedules/(\w+)", self._schedule),
            (r"/schedules/(\w+)/overrides", self._overrides),
            (r"/escalation_policies", self._policies),
            (r"/services", self._services),
            (r"/services/(\w+)/integrations/(\w+)", self._integration),
            (r"/maintenance_windows", self._windows),
            (r"/oncalls", self._oncalls),
        ):
            self.route(pattern, handler)

    def authorized(self, header: str | None) -> bool:
        return header == f"Token token={self.token}"

    def unauthorized(self) -> Answer:
        return 401, {"error": {"message": "Unauthorized", "code": 2006}}, {}

    def not_found(self, path: str) -> Answer:
        return 404, {"error": {"message": "Not Found", "code": 2100}}, {}

    # --- lists ---------------------------------------------------------------------------------

    def _list(self, wrapper: str, items: list[Any], query: Query) -> Answer:
        chunk, limit, offset, more = page(items, query, DEFAULT_LIMIT)
        return 200, {wrapper: chunk, "limit": limit, "offset": offset, "more": more, "total": None}, {}

    def _users(self, _: re.Match[str], query: Query) -> Answer:
        included = set(query.get("include[]", []))
        users = []
        for user in self.account["users"]:
            shown = dict(user)
            if "contact_methods" not in included:
                shown["contact_methods"] = [
                    {"id": m["id"], "type": f"{m['type']}_reference"} for m in user["contact_methods"]
                ]
            if "notification_rules" not in included:
                shown["notification_rules"] = [
                    {"id": r["id"], "type": "assignment_notification_rule_reference"}
                    for r in user["notification_rules"]
                ]
            users.append(shown)
        return self._list("users", users, query)

    def _contact_methods(self, matched: re.Match[str], _: Query) -> Answer:
        user = self.users.get(matched.group(1))
        return (200, {"contact_methods": user["contact_methods"]}, {}) if user else self.not_found("")

    def _notification_rules(self, matched: re.Match[str], _: Query) -> Answer:
        user = self.users.get(matched.group(1))
        return (200, {"notification_rules": user["notification_rules"]}, {}) if user else self.not_found("")

    def _teams(self, _: re.Match[str], query: Query) -> Answer:
        return self._list(
            "teams", [{k: v for k, v in t.items() if k != "members"} for t in self.account["teams"]], query
        )

    def _members(self, matched: re.Match[str], query: Query) -> Answer:
        team = next((t for t in self.account["teams"] if t["id"] == matched.group(1)), None)
        return self._list("members", team["members"], query) if team else self.not_found("")

    def _policies(self, _: re.Match[str], query: Query) -> Answer:
        return self._list("escalation_policies", self.account["escalation_policies"], query)

    def _services(self, _: re.Match[str], query: Query) -> Answer:
        included = "integrations" in query.get("include[]", [])
        services = []
        for service in self.account["services"]:
            shown = dict(service)
            if not included:
                shown["integrations"] = [
                    {"id": i["id"], "type": f"{i['type']}_reference", "summary": i["name"]}
                    for i in service["integrations"]
                ]
            services.append(shown)
        return self._list("services", services, query)

    def _integration(self, matched: re.Match[str], _: Query) -> Answer:
        service = self.services.get(matched.group(1))
        found = next((i for i in (service or {}).get("integrations", []) if i["id"] == matched.group(2)), None)
        return (200, {"integration": found}, {}) if found else self.not_found("")

    def _windows(self, _: re.Match[str], query: Query) -> Answer:
        now = self.now or datetime.now(UTC)
        kind = first(query, "filter", "all")
        windows = []
        for window in self.account["maintenance_windows"]:
            start, end = vendor_oncall.parse(window["start_time"]), vendor_oncall.parse(window["end_time"])
            assert start is not None and end is not None
            state = "past" if end <= now else ("future" if start > now else "ongoing")
            if kind in ("all", state) or (kind == "open" and state != "past"):
                windows.append(window)
        return self._list("maintenance_windows", windows, query)

    # --- schedules and who is on call ------------------------------------------------------------

    def _schedules(self, _: re.Match[str], query: Query) -> Answer:
        summaries = [
            {"id": s["id"], "type": "schedule", "name": s["name"], "time_zone": s["time_zone"]}
            for s in self.account["schedules"]
        ]
        return self._list("schedules", summaries, query)

    def final(self, schedule_id: str, since: datetime, until: datetime) -> list[tuple[datetime, datetime, str]]:
        schedule = self.schedules[schedule_id]
        overrides = self.account["overrides"][schedule_id]
        edges = [vendor_oncall.parse(o[key]) for o in overrides for key in ("start", "end")]
        edges += [vendor_oncall.parse(layer[key]) for layer in schedule["schedule_layers"] for key in ("start", "end")]
        return vendor_oncall.entries(
            lambda moment: vendor_oncall.pd_on_call(schedule, overrides, moment),
            since,
            until,
            [edge for edge in edges if edge is not None],
        )

    def _window(self, query: Query) -> tuple[datetime, datetime]:
        since = vendor_oncall.parse(first(query, "since")) or datetime.now(UTC)
        until = vendor_oncall.parse(first(query, "until")) or since + timedelta(weeks=1)
        return since, until

    def _schedule(self, matched: re.Match[str], query: Query) -> Answer:
        schedule = self.schedules.get(matched.group(1))
        if schedule is None:
            return self.not_found("")
        shown = dict(schedule)
        if first(query, "since") or first(query, "until"):
            since, until = self._window(query)
            shown["final_schedule"] = {
                "name": "Final Schedule",
                "rendered_schedule_entries": [
                    {"start": _iso(start), "end": _iso(end), "user": {"id": who, "type": "user_reference"}}
                    for start, end, who in self.final(schedule["id"], since, until)
                ],
            }
        return 200, {"schedule": shown}, {}

    def _overrides(self, matched: re.Match[str], query: Query) -> Answer:
        if matched.group(1) not in self.schedules:
            return self.not_found("")
        since, until = self._window(query)
        found = [
            o
            for o in self.account["overrides"][matched.group(1)]
            if vendor_oncall.parse(o["end"]) > since and vendor_oncall.parse(o["start"]) < until  # type: ignore[operator]
        ]
        return 200, {"overrides": found}, {}

    def _oncalls(self, _: re.Match[str], query: Query) -> Answer:
        """Who is on call through each schedule over [since, until] (an instant when equal)."""
        since, until = self._window(query)
        wanted = query.get("schedule_ids[]") or list(self.schedules)
        found = []
        for schedule_id in wanted:
            if schedule_id not in self.schedules:
                continue
            hi = until if until > since else since + timedelta(seconds=1)
            for start, end, who in self.final(schedule_id, since, hi):
                found.append(
                    {
                        "user": {"id": who, "type": "user_reference", "summary": self.users[who]["name"]},
                        "schedule": {"id": schedule_id, "type": "schedule_reference"},
                        "escalation_level": 1,
                        "start": _iso(start),
                        "end": _iso(end),
                    }
                )
        return self._list("oncalls", found, query)
