"""Helpers for the pure importer tests: the reader's shape of each vendor account (as the stand-ins
serve it), a translation, and Tocsin's own on-call engine run on a translated schedule."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.importers import opsgenie_translate, pagerduty_translate
from chalicelib.client.importers.accounts import OpsgenieAccount, PagerDutyAccount
from chalicelib.client.importers.context import Context, Existing, Translation
from chalicelib.oncall import rotation
from chalicelib.oncall import schedule as domain
from tests.importers import account, opsgenie_account, pagerduty_account, vendor_oncall


def pagerduty_read(now: datetime, size: account.Size = account.FULL) -> tuple[PagerDutyAccount, dict[str, Any]]:
    served = pagerduty_account.account(now, size)
    schedules = [{**s, "overrides": served["overrides"][s["id"]]} for s in served["schedules"]]
    account = PagerDutyAccount(
        users=served["users"],
        teams=served["teams"],
        schedules=schedules,
        escalation_policies=served["escalation_policies"],
        services=served["services"],
        maintenance_windows=served["maintenance_windows"],
    )
    return account, served


def with_final(
    account: PagerDutyAccount, served: dict[str, Any], since: datetime, until: datetime, *, calendar: bool = True
) -> PagerDutyAccount:
    """The account's schedules with PagerDuty's rendered final schedule over [since, until)."""
    for schedule in account.schedules:
        overrides = served["overrides"][schedule["id"]]
        edges = [vendor_oncall.parse(o[key]) for o in overrides for key in ("start", "end")]
        found = vendor_oncall.entries(
            lambda moment, s=schedule, o=overrides: vendor_oncall.pd_on_call(s, o, moment, calendar=calendar),
            since,
            until,
            [edge for edge in edges if edge is not None],
        )
        schedule["final_schedule"] = {
            "rendered_schedule_entries": [
                {"start": start.isoformat(), "end": end.isoformat(), "user": {"id": who}} for start, end, who in found
            ]
        }
    return account


def opsgenie_read(now: datetime, size: account.Size = account.FULL) -> tuple[OpsgenieAccount, dict[str, Any]]:
    served = opsgenie_account.account(now, size)
    schedules = [{**s, "overrides": served["overrides"][s["id"]]} for s in served["schedules"]]
    teams = [{**t, "routingRules": served["routing_rules"][t["id"]]} for t in served["teams"]]
    users = [
        {**u, "contacts": served["contacts"][u["id"]], "notificationRules": served["notification_rules"][u["id"]]}
        for u in served["users"]
    ]
    account = OpsgenieAccount(
        users=users,
        teams=teams,
        schedules=schedules,
        escalations=served["escalations"],
        services=served["services"],
        integrations=served["integrations"],
        maintenances=served["maintenances"],
        heartbeats=served["heartbeats"],
    )
    return account, served


def translate_pagerduty(account: PagerDutyAccount, now: datetime, existing: Existing | None = None) -> Translation:
    return pagerduty_translate.translate(account, Context("pagerduty", now, existing or Existing()))


def translate_opsgenie(account: OpsgenieAccount, now: datetime, existing: Existing | None = None) -> Translation:
    return opsgenie_translate.translate(account, Context("opsgenie", now, existing or Existing()))


def tocsin_schedule(schedule: doc.Schedule) -> domain.Schedule:
    """The document's schedule as Tocsin's domain model, people named by email."""
    return domain.Schedule(
        schedule_id="s",
        name=schedule.name,
        time_zone=schedule.time_zone,
        layers=tuple(
            domain.Layer(
                layer_id=f"l{index}",
                name=layer.name,
                members=tuple(layer.members),
                rotation=layer.rotation,
                handoff_time=layer.handoff_time,
                start=layer.start,
                rotation_hours=layer.rotation_hours,
                end=layer.end,
                restrictions=tuple(
                    domain.Restriction(r.kind, r.start, r.end, r.start_day, r.end_day) for r in layer.restrictions
                ),
            )
            for index, layer in enumerate(schedule.layers)
        ),
        overrides=tuple(
            domain.Override(f"o{index}", o.user, o.start, o.end) for index, o in enumerate(schedule.overrides or [])
        ),
    )


def tocsin_on_call(schedule: doc.Schedule, moment: datetime) -> str | None:
    shift = rotation.on_call_at(tocsin_schedule(schedule), moment)
    return shift.user_id if shift else None
