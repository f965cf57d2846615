"""Reading a PagerDuty account with the official client (`pagerduty.RestApiV2Client`, pagerduty
7.x): users with their contact methods and notification rules, teams and members, schedules (in
full, with overrides from now on and the vendor's own final schedule for the weeks ahead),
escalation policies, services with their integrations, and open maintenance windows.

The client pages (offset, limit, more) itself. Its 429 handling waits on its own schedule; here
the wait is PagerDuty's Retry-After instead (bounded), and a 401 is one clear message."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pagerduty

from chalicelib.client.importers import trust
from chalicelib.client.importers.accounts import PagerDutyAccount
from chalicelib.client.importers.vendor_http import MAX_RATE_LIMITED, VendorError, VendorUnavailable, retry_after

Progress = Callable[[str], None]
FINAL_SCHEDULE_WEEKS = 5  # the vendor's own answer for the weeks an import is checked against
OVERRIDES_DAYS = 365


def _quiet(_: str) -> None:
    return None


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Client(pagerduty.RestApiV2Client):
    """The official client, waiting out a 429 for as long as PagerDuty's Retry-After says."""

    def __init__(self, token: str, base_url: str, sleep: Callable[[float], None] = time.sleep, **kw: Any) -> None:
        super().__init__(token, base_url=base_url, **kw)
        self.wait = sleep
        self.sleep_timer = 0.0  # the client's own back-off adds nothing to Retry-After
        self.rate_limited = 0
        self.waited: list[float] = []

    def postprocess(self, response: Any, suffix: str | None = None) -> None:
        super().postprocess(response, suffix)
        if response.status_code != 429:
            self.rate_limited = 0
            return
        self.rate_limited += 1
        if self.rate_limited > MAX_RATE_LIMITED:
            raise VendorError(f"PagerDuty: still rate limited (429) after {MAX_RATE_LIMITED} waits")
        seconds = retry_after(response.headers, self.rate_limited - 1)
        self.waited.append(seconds)
        self.wait(seconds)


def client(token: str, base_url: str, sleep: Callable[[float], None] = time.sleep, **kw: Any) -> Client:
    """A client for `base_url` (https://api.pagerduty.com, https://api.eu.pagerduty.com, a
    stand-in), trusting the CAs the environment names (chalicelib.client.importers.trust)."""
    kw.setdefault("verify", trust.context())
    try:
        made = Client(token, base_url.rstrip("/"), sleep, **kw)
    except pagerduty.UrlError as error:
        raise VendorError(f"PagerDuty: {error} (given {base_url!r})") from error
    made.max_http_attempts = 3
    made.max_network_attempts = 2
    return made


class PagerDutyReader:
    def __init__(self, api: Client, *, now: datetime, progress: Progress = _quiet) -> None:
        self.api = api
        self.now = now
        self.progress = progress
        self.account = PagerDutyAccount()

    def read(self) -> PagerDutyAccount:
        steps: list[tuple[str, Callable[[], None]]] = [
            ("users", self._users),
            ("teams", self._teams),
            ("schedules", self._schedules),
            ("escalation_policies", self._policies),
            ("services", self._services),
            ("maintenance_windows", self._windows),
        ]
        for name, step in steps:
            self.progress(f"pagerduty: reading {name.replace('_', ' ')}")
            try:
                step()
            except VendorUnavailable as error:
                self.account.unavailable[name] = str(error)
        return self.account

    # --- the client, its errors made ours ----------------------------------------------------

    def _call(self, what: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except VendorError:
            raise
        except pagerduty.HttpError as error:
            status = error.response.status_code if error.response is not None else 0
            if status == 401:
                raise VendorError(
                    "PagerDuty refused the API token (401): check --pagerduty-token or PAGERDUTY_API_TOKEN, and "
                    "--pagerduty-url for an EU account (https://api.eu.pagerduty.com)"
                ) from error
            if status in (403, 404):
                raise VendorUnavailable(f"{what}: {status}") from error
            raise VendorError(f"PagerDuty: {what}: {error}") from error
        except pagerduty.Error as error:
            raise VendorError(f"PagerDuty: {what}: {error}") from error

    def _all(self, path: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return list(self._call(f"GET {path}", lambda: list(self.api.iter_all(path, params=params))))

    def _one(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._call(f"GET {path}", lambda: self.api.rget(path, params=params))

    def _optional(self, what: str, path: str, params: dict[str, Any] | None = None) -> Any:
        try:
            return self._one(path, params)
        except VendorUnavailable as error:
            self.account.unavailable.setdefault(what, str(error))
            return None

    # --- each section ------------------------------------------------------------------------

    def _users(self) -> None:
        users = self._all("/users", {"include[]": ["contact_methods", "notification_rules"]})
        for index, user in enumerate(users, start=1):
            if index % 10 == 0:
                self.progress(f"pagerduty: users {index}/{len(users)}")
            user_id = str(user["id"])
            if not all("address" in m for m in user.get("contact_methods") or []):
                user["contact_methods"] = self._optional("contact methods", f"/users/{user_id}/contact_methods") or []
            if not all("urgency" in r for r in user.get("notification_rules") or []):
                found = self._optional("notification rules", f"/users/{user_id}/notification_rules")
                user["notification_rules"] = found or []
            self.account.users.append(user)

    def _teams(self) -> None:
        for team in self._all("/teams"):
            try:
                team["members"] = self._all(f"/teams/{team['id']}/members")
            except VendorUnavailable as error:
                self.account.unavailable.setdefault("team members", str(error))
                team["members"] = []
            self.account.teams.append(team)

    def _schedules(self) -> None:
        since, until = self.now, self.now + timedelta(weeks=FINAL_SCHEDULE_WEEKS)
        listed = self._all("/schedules")
        for index, summary in enumerate(listed, start=1):
            self.progress(f"pagerduty: schedule {index}/{len(listed)} {summary.get('name', '')}")
            schedule_id = str(summary["id"])
            params = {"since": _iso(since), "until": _iso(until)}
            schedule = self._one(f"/schedules/{schedule_id}", params)
            override_window = {"since": _iso(self.now), "until": _iso(self.now + timedelta(days=OVERRIDES_DAYS))}
            found = self._optional("schedule overrides", f"/schedules/{schedule_id}/overrides", override_window)
            schedule["overrides"] = found or []
            self.account.schedules.append(schedule)

    def _policies(self) -> None:
        self.account.escalation_policies = self._all("/escalation_policies")

    def _services(self) -> None:
        for service in self._all("/services", {"include[]": ["integrations"]}):
            full = []
            for item in service.get("integrations") or []:
                if str(item.get("type", "")).endswith("_reference"):
                    path = f"/services/{service['id']}/integrations/{item['id']}"
                    item = self._optional("integrations", path, {"include[]": ["vendors"]}) or item
                full.append(item)
            service["integrations"] = full
            self.account.services.append(service)

    def _windows(self) -> None:
        seen: set[str] = set()
        for kind in ("ongoing", "future"):
            for window in self._all("/maintenance_windows", {"filter": kind}):
                if str(window["id"]) not in seen:
                    seen.add(str(window["id"]))
                    self.account.maintenance_windows.append(window)
