"""Alerts for the console's alert tests, through the one alert pipeline (`ingest`): a Checkout
service grouping by time (15 minutes) fed by Alertmanager, a Search service without grouping fed
by a custom integration, and one alert suppressed by a maintenance window."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from unittest import mock

from chalicelib import clock
from chalicelib.catalog import service as services
from chalicelib.catalog.grouping import AlertGrouping
from chalicelib.integration import admin
from chalicelib.integration.ingest import ingest
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.maintenance.in_effect import WindowInEffect
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org


@dataclass(frozen=True)
class AlertWorld:
    checkout_key: str
    search_key: str
    checkout_incident: str  # opened by db1's alert at NOW - 30 min; db2's joined it (time grouping)
    search_incident: str  # opened by the latency alert at NOW - 5 min
    db1_alert: str  # resolved at NOW - 10 min
    db2_alert: str  # triggered, 2 events
    latency_alert: str
    suppressed_alert: str  # maintenance window mw_upgrade, at NOW - 40 min
    prom: AlertOrigin  # Alertmanager into Checkout


def origin_for(org: Org, integration_type: str, name: str, service_key: str) -> AlertOrigin:
    issued = admin.create_integration(
        organization_id=org.organization_id,
        integration_type=integration_type,
        name=name,
        now=NOW,
        default_service_key=service_key,
        settings=get_settings(),
    )
    found = admin.find_by_routing_key(issued.routing_key, settings=get_settings())
    assert found is not None
    return AlertOrigin.of(found)


def event(key: str, title: str, action: Any = "trigger", **fields: Any) -> NormalizedAlert:
    return NormalizedAlert(source="alertmanager", action=action, dedup_key=key, title=title, summary=title, **fields)


def build_alerts(org: Org) -> AlertWorld:
    clock.freeze(NOW)
    organization_id = org.organization_id
    checkout = services.create_service(
        organization_id=organization_id,
        name="Checkout",
        now=NOW,
        alert_grouping=AlertGrouping(type="time", window_minutes=15),
    )
    search = services.create_service(organization_id=organization_id, name="Search", now=NOW)
    prom = origin_for(org, "alertmanager", "prom", checkout.service_key)
    probe = origin_for(org, "custom", "probe", search.service_key)

    window = WindowInEffect(window_id="mw_upgrade", description="upgrade", end_at=NOW)
    with mock.patch("chalicelib.integration.triggering.window_in_effect", return_value=window):
        quiet = ingest(
            prom, event("reboot", "Planned reboot of db3"), now=NOW - timedelta(minutes=40), settings=get_settings()
        )
    db1 = ingest(
        prom,
        event(
            "db1",
            "Disk full on db1",
            metadata={"labels.env": "prod", "labels.host": "db1"},
            source_url="https://grafana.example/d/disk",
            description="95% used on /var",
            details={"owner": "<b>storage</b>", "disk": {"mount": "/var", "used": 0.95}},
        ),
        now=NOW - timedelta(minutes=30),
        settings=get_settings(),
    )
    db2 = ingest(prom, event("db2", "Disk full on db2"), now=NOW - timedelta(minutes=25), settings=get_settings())
    ingest(prom, event("db2", "Disk full on db2"), now=NOW - timedelta(minutes=20), settings=get_settings())
    ingest(
        prom,
        event("db1", "Disk full on db1", action="resolve"),
        now=NOW - timedelta(minutes=10),
        settings=get_settings(),
    )
    latency = ingest(
        probe,
        NormalizedAlert(source="custom", action="trigger", dedup_key="p99", title="Search p99 above 2 s"),
        now=NOW - timedelta(minutes=5),
        settings=get_settings(),
    )
    assert db1.incident is not None and latency.incident is not None
    assert quiet.alert and db1.alert and db2.alert and latency.alert and quiet.suppressed
    assert db2.incident is not None and db2.incident.incident_number == db1.incident.incident_number
    return AlertWorld(
        checkout_key=checkout.service_key,
        search_key=search.service_key,
        checkout_incident=db1.incident.incident_number,
        search_incident=latency.incident.incident_number,
        db1_alert=db1.alert.alert_id,
        db2_alert=db2.alert.alert_id,
        latency_alert=latency.alert.alert_id,
        suppressed_alert=quiet.alert.alert_id,
        prom=prom,
    )
