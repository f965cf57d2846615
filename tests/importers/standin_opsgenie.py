"""A stand-in for Opsgenie's REST API (v2; Services and Maintenance v1), answering as its
published description says: `Authorization: GenieKey ...`, `data` envelopes with `took` and
`requestId`, `paging.next` on users and services, 401 and 429 bodies; who is on call
(`/v2/schedules/{id}/on-calls?date=`) from tests.importers.vendor_oncall."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Any

from tests.importers import vendor_oncall
from tests.importers.standin import Answer, Query, StandIn, first, page


class OpsgenieStandIn(StandIn):
    def __init__(self, account: dict[str, Any], key: str = "og-test-key", *, services: bool = True) -> None:
        super().__init__()
        self.account = account
        self.key = key
        self.schedules = {s["id"]: s for s in account["schedules"]}
        self.users = {u["id"]: u for u in account["users"]}
        routes = [
            (r"/v2/account", lambda m, q: self._data({"name": "acme", "plan": {"name": "Enterprise"}})),
            (r"/v2/users", self._users),
            (r"/v2/users/([\w-]+)/contacts", lambda m, q: self._data(account["contacts"].get(m.group(1), []))),
            (r"/v2/users/([\w-]+)/notification-rules", self._rules),
            (r"/v2/users/([\w-]+)/notification-rules/([\w-]+)", self._rule),
            (
                r"/v2/teams",
                lambda m, q: self._data([{k: v for k, v in t.items() if k != "members"} for t in account["teams"]]),
            ),
            (r"/v2/teams/([\w-]+)", self._team),
            (r"/v2/teams/([\w-]+)/routing-rules", lambda m, q: self._data(account["routing_rules"].get(m.group(1)))),
            (r"/v2/schedules", self._schedules),
            (r"/v2/schedules/([\w-]+)/overrides", lambda m, q: self._data(account["overrides"].get(m.group(1)))),
            (r"/v2/schedules/([\w-]+)/on-calls", self._on_calls),
            (r"/v2/escalations", lambda m, q: self._data(account["escalations"])),
            (r"/v2/integrations", lambda m, q: self._data(account["integrations"])),
            (
                r"/v1/maintenance",
                lambda m, q: self._data(
                    [{k: v for k, v in x.items() if k != "rules"} for x in account["maintenances"]]
                ),
            ),
            (r"/v1/maintenance/([\w-]+)", self._maintenance),
            (r"/v2/heartbeats", lambda m, q: self._data({"heartbeats": account["heartbeats"]})),
        ]
        if services:
            routes.append((r"/v1/services", self._services))
        for pattern, handler in routes:
            self.route(pattern, handler)

    def authorized(self, header: str | None) -> bool:
        return header == f"GenieKey {self.key}"

    def _envelope(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "took": 0.01, "requestId": str(uuid.uuid4())}

    def unauthorized(self) -> Answer:
        return 401, self._envelope({"message": "Could not authenticate"}), {}

    def rate_limited(self, retry_after: int) -> Answer:
        headers = {"Retry-After": str(retry_after), "X-RateLimit-State": "THROTTLED"}
        return (
            429,
            self._envelope(
                {"message": "You are making too many requests! To avoid errors, we recommend you limit requests."}
            ),
            headers,
        )

    def not_found(self, path: str) -> Answer:
        return 404, self._envelope({"message": f"Could not find {path}"}), {}

    def _data(self, data: Any) -> Answer:
        if data is None:
            return self.not_found("")
        return 200, self._envelope({"data": data}), {}

    def _paged(self, path: str, items: list[Any], query: Query) -> Answer:
        chunk, limit, offset, more = page(items, query, 20)
        paging = {"first": f"{self.base_url}{path}?limit={limit}&offset=0"}
        if more:
            paging["next"] = f"https://api.opsgenie.com{path}?limit={limit}&offset={offset + limit}"
        return 200, self._envelope({"data": chunk, "paging": paging, "totalCount": len(items)}), {}

    def _users(self, _: re.Match[str], query: Query) -> Answer:
        return self._paged("/v2/users", self.account["users"], query)

    def _services(self, _: re.Match[str], query: Query) -> Answer:
        return self._paged("/v1/services", self.account["services"], query)

    def _rules(self, matched: re.Match[str], _: Query) -> Answer:
        rules = self.account["notification_rules"].get(matched.group(1))
        keys = ("id", "name", "actionType", "order", "enabled")
        return self._data([{k: r[k] for k in keys if k in r} for r in rules] if rules is not None else None)

    def _rule(self, matched: re.Match[str], _: Query) -> Answer:
        rules = self.account["notification_rules"].get(matched.group(1)) or []
        return self._data(next((r for r in rules if r["id"] == matched.group(2)), None))

    def _team(self, matched: re.Match[str], _: Query) -> Answer:
        return self._data(next((t for t in self.account["teams"] if t["id"] == matched.group(1)), None))

    def _maintenance(self, matched: re.Match[str], _: Query) -> Answer:
        return self._data(next((x for x in self.account["maintenances"] if x["id"] == matched.group(1)), None))

    def _schedules(self, _: re.Match[str], query: Query) -> Answer:
        expanded = "rotation" in ",".join(query.get("expand", []))
        return self._data(
            [s if expanded else {k: v for k, v in s.items() if k != "rotations"} for s in self.account["schedules"]]
        )

    def _on_calls(self, matched: re.Match[str], query: Query) -> Answer:
        schedule = self.schedules.get(matched.group(1))
        if schedule is None:
            return self.not_found("")
        moment = vendor_oncall.parse(first(query, "date")) or datetime.now(UTC)
        names = vendor_oncall.og_on_call(schedule, self.account["overrides"][schedule["id"]], moment)
        parent = {"id": schedule["id"], "name": schedule["name"], "enabled": True}
        if first(query, "flat") == "true":
            return self._data({"_parent": parent, "onCallRecipients": names})
        by_name = {u["username"]: u for u in self.account["users"]}
        participants = [{"id": by_name[n]["id"], "name": n, "type": "user"} for n in names]
        return self._data({"_parent": parent, "onCallParticipants": participants})
