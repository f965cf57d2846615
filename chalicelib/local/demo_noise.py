"""Demo data for noise control (docs/NOISE_CONTROL.md): a service that groups its alerts, event
rules, a maintenance window tonight and a heartbeat. Idempotent, like the rest of the demo: each
piece is looked up by name first; only the heartbeat's ping URL is new on every start (it is
shown once, so the demo regenerates it to put it in demo.json)."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import Any

from chalicelib.catalog import service as services
from chalicelib.catalog.grouping import AlertGrouping
from chalicelib.catalog.service import Service
from chalicelib.eventrule import service as event_rules
from chalicelib.eventrule.rules import Actions
from chalicelib.heartbeat import service as heartbeats
from chalicelib.maintenance import service as maintenance
from chalicelib.settings import get_settings

GROUPING = AlertGrouping(type="time", window_minutes=10)
ORGANIZATION_RULE = "Staging never pages"
INTEGRATION_RULE = "Alertmanager's Watchdog is not a problem"
# The alert name is a label: a real Watchdog's title is its summary annotation ("An alert that
# should always be firing to certify that Alertmanager is working properly."), so a rule on the
# title never matched it and the demo's Watchdog paged (issue 26).
WATCHDOG_CONDITION = ("labels.alertname", "equals", "Watchdog")
WINDOW_DESCRIPTION = "Billing database upgrade (demo)"
HEARTBEAT_NAME = "Nightly invoice run"


def seed_noise_control(
    organization_id: str, grouped: Service, alertmanager_integration_id: str | None, now: datetime
) -> dict[str, Any]:
    if grouped.alert_grouping != GROUPING:
        services.update_service(
            organization_id=organization_id, service_ref=grouped.service_key, now=now, alert_grouping=GROUPING
        )
    _seed_rules(organization_id, alertmanager_integration_id, now)
    window_id = _seed_window(organization_id, grouped, now)
    heartbeat = _seed_heartbeat(organization_id, grouped, now)
    return {
        "grouped_service": {"service_id": grouped.service_id, "alert_grouping": GROUPING.to_dict()},
        "maintenance_window_id": window_id,
        "heartbeat": heartbeat,
    }


def _seed_rules(organization_id: str, alertmanager_integration_id: str | None, now: datetime) -> None:
    existing = {rule.description for rule in event_rules.list_rules(organization_id=organization_id)}
    if ORGANIZATION_RULE not in existing:
        event_rules.create_rule(
            organization_id=organization_id,
            now=now,
            conditions=[("labels.env", "equals", "staging")],
            actions=Actions(suppress=True, note="Staging alerts are recorded, never paged."),
            description=ORGANIZATION_RULE,
        )
    if alertmanager_integration_id is None:
        return
    placed = {
        rule.description: rule
        for rule in event_rules.list_rules(organization_id=organization_id, integration_id=alertmanager_integration_id)
    }
    found = placed.get(INTEGRATION_RULE)
    if found is None:
        event_rules.create_rule(
            organization_id=organization_id,
            integration_id=alertmanager_integration_id,
            now=now,
            conditions=[WATCHDOG_CONDITION],
            actions=Actions(drop=True),
            description=INTEGRATION_RULE,
        )
    elif [(c.field, c.op, c.value) for c in found.conditions] != [WATCHDOG_CONDITION]:
        # A demo seeded before the fix keeps its data: only the rule's condition is corrected.
        event_rules.update_rule(
            organization_id=organization_id,
            integration_id=alertmanager_integration_id,
            rule_id=found.rule_id,
            now=now,
            conditions=[WATCHDOG_CONDITION],
        )


def _seed_window(organization_id: str, grouped: Service, now: datetime) -> str:
    """Tonight 02:00-03:00 UTC (tomorrow's, once tonight's has begun)."""
    open_windows = maintenance.list_windows(organization_id=organization_id, now=now, state="open")
    found = next((w for w in open_windows if w.description == WINDOW_DESCRIPTION), None)
    if found is not None:
        return found.window_id
    start = datetime.combine(now.date() + timedelta(days=1), time(2), tzinfo=now.tzinfo)
    window = maintenance.create_window(
        organization_id=organization_id,
        service_refs=[grouped.service_key],
        start=start,
        end=start + timedelta(hours=1),
        now=now,
        description=WINDOW_DESCRIPTION,
    )
    return window.window_id


def _seed_heartbeat(organization_id: str, grouped: Service, now: datetime) -> dict[str, Any]:
    found = next(
        (h for h in heartbeats.list_heartbeats(organization_id=organization_id) if h.name == HEARTBEAT_NAME), None
    )
    if found is None:
        issued = heartbeats.create_heartbeat(
            organization_id=organization_id,
            name=HEARTBEAT_NAME,
            service_ref=grouped.service_key,
            interval_seconds=24 * 3600,
            grace_seconds=3600,
            now=now,
            description="Pings when the nightly invoice run finishes.",
            settings=get_settings(),
        )
    else:
        issued = heartbeats.regenerate_ping_url(
            organization_id=organization_id, heartbeat_id=found.heartbeat_id, now=now, settings=get_settings()
        )
    return {"id": issued.record.heartbeat_id, "name": HEARTBEAT_NAME, "ping_url": issued.ping_url}
