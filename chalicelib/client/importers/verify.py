"""After an apply: does each imported schedule give the person PagerDuty's own final schedule
gives, over the weeks the reader asked about? Tocsin's answer is read back through its API
(`/schedules/{id}/shifts`), PagerDuty's is the rendered final schedule the reader fetched; both
are asked at every vendor handoff (just after it, half-way, just before the next)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from chalicelib.client.http import Api
from chalicelib.client.importers.accounts import PagerDutyAccount
from chalicelib.client.importers.context import Translation
from chalicelib.client.importers.pagerduty_schedules import when

PROBE = timedelta(minutes=1)


@dataclass
class Check:
    name: str
    vendor_id: str
    probes: int = 0
    differences: list[tuple[datetime, str | None, str | None]] = field(default_factory=list)  # (at, vendor, tocsin)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _who(shifts: list[dict[str, Any]], moment: datetime) -> str | None:
    for shift in shifts:
        start, end = when(shift["start"]), when(shift["end"])
        if start is not None and end is not None and start <= moment < end:
            email = (shift.get("user") or {}).get("email")
            return str(email).lower() if email else None
    return None


def pagerduty(api: Api, account: PagerDutyAccount, translation: Translation) -> list[Check]:
    emails = {str(user["id"]): str(user.get("email") or "").lower() for user in account.users}
    names = {s.source.id: s.name for s in translation.document.schedules or [] if s.source is not None}
    tocsin_ids = {str(s["name"]).casefold(): str(s["id"]) for s in api.all("/api/v1/schedules")}
    checks: list[Check] = []
    for schedule in account.schedules:
        entries = ((schedule.get("final_schedule") or {}).get("rendered_schedule_entries")) or []
        name = names.get(str(schedule["id"]))
        tocsin_id = tocsin_ids.get(name.casefold()) if name else None
        spans: list[tuple[datetime, datetime, object]] = []
        for entry in entries:
            start, end = when(entry.get("start")), when(entry.get("end"))
            if start is not None and end is not None and start < end:
                spans.append((start, end, (entry.get("user") or {}).get("id")))
        if name is None or tocsin_id is None or not spans:
            continue
        since, until = min(s for s, _, _ in spans), max(e for _, e, _ in spans)
        found = api.get(f"/api/v1/schedules/{tocsin_id}/shifts", {"since": _iso(since), "until": _iso(until)})
        shifts = list((found or {}).get("shifts") or [])
        check = Check(name, str(schedule["id"]))
        for start, end, who in spans:
            vendor = emails.get(str(who)) or None
            for moment in (start + PROBE, start + (end - start) / 2, end - PROBE):
                if not start <= moment < end or moment < since:
                    continue
                check.probes += 1
                tocsin = _who(shifts, moment)
                if tocsin != vendor:
                    check.differences.append((moment, vendor, tocsin))
        checks.append(check)
    return checks


def text(checks: list[Check], vendor: str) -> str:
    if not checks:
        return ""
    same = [check for check in checks if not check.differences]
    lines = [
        f"Checked against {vendor}'s own final schedule for the weeks ahead: {len(same)} of {len(checks)} "
        "schedule(s) give the same person at every handoff."
    ]
    for check in checks:
        if check.differences:
            at, theirs, ours = check.differences[0]
            lines.append(
                f"  ! {check.name!r} ({check.vendor_id}): {len(check.differences)} of {check.probes} instants differ, "
                f"first at {_iso(at)}: {vendor} {theirs or 'nobody'}, Tocsin {ours or 'nobody'}"
            )
    return "\n".join(lines) + "\n"


def as_json(checks: list[Check]) -> list[dict[str, Any]]:
    return [
        {
            "schedule": check.name,
            "vendor_id": check.vendor_id,
            "instants": check.probes,
            "differences": [
                {"at": _iso(at), "vendor": theirs, "tocsin": ours} for at, theirs, ours in check.differences
            ],
        }
        for check in checks
    ]
