"""The alert pipeline on moto: alerts as records, grouping, suppression, last alert resolves."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from unittest import mock

import pytest

from chalicelib.alert import listing
from chalicelib.alert import repository as alert_repository
from chalicelib.alert.handlers import resolve_alerts_of_closed_incident
from chalicelib.alert.models import IncidentAlertQuery
from chalicelib.catalog import service as services
from chalicelib.catalog.grouping import AlertGrouping
from chalicelib.eventrule.facts import AlertFacts, RuleDecision
from chalicelib.incident import commands, repository
from chalicelib.integration.ingest import ingest
from chalicelib.integration.normalized import Action, NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.maintenance.in_effect import WindowInEffect
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.kit import factories as make
from tests.service.test_ingest_service import incidents, race


@pytest.fixture
def origin(org: Org) -> AlertOrigin:
    origin: AlertOrigin = make.integration(org, make.service(org, "Checkout"), name="prom")
    return origin


def group_by(origin: AlertOrigin, grouping: AlertGrouping) -> None:
    services.update_service(
        organization_id=origin.organization_id,
        service_ref=str(origin.default_service_key),
        now=NOW,
        alert_grouping=grouping,
    )


def event(key: str | None, action: Action = "trigger", **fields: Any) -> NormalizedAlert:
    fields.setdefault("title", f"Disk full on {key}")
    return NormalizedAlert(source="alertmanager", action=action, dedup_key=key, summary=action, **fields)


def alerts_of(origin: AlertOrigin, number: str) -> list[Any]:
    return listing.incident_alerts(
        organization_id=origin.organization_id, incident_number=number, query=IncidentAlertQuery()
    ).items


def test_every_trigger_is_an_alert_and_dedup_hits_count_on_it(origin: AlertOrigin) -> None:
    first = ingest(
        origin, event("k1", metadata={"labels.env": "prod", "team": "web"}), now=NOW, settings=get_settings()
    )
    assert first.created and first.alert is not None
    again = ingest(origin, event("k1"), now=NOW + timedelta(seconds=5), settings=get_settings())
    assert again.deduplicated and again.alert is not None and again.alert.alert_id == first.alert.alert_id
    assert first.incident is not None
    [stored] = alerts_of(origin, first.incident.incident_number)
    assert (stored.status, int(stored.event_count), stored.last_received_at) == (
        "triggered",
        2,
        NOW + timedelta(seconds=5),
    )
    assert stored.labels == {"env": "prod", "team": "web"}
    assert stored.incident_number == first.incident.incident_number


def test_time_grouping_puts_distinct_keys_on_one_incident_until_the_window_ends(origin: AlertOrigin) -> None:
    group_by(origin, AlertGrouping(type="time", window_minutes=10))
    results = [
        ingest(origin, event(f"k{i}"), now=NOW + timedelta(minutes=i), settings=get_settings()) for i in range(5)
    ]
    assert [r.created for r in results] == [True, False, False, False, False]
    assert all(r.grouped for r in results[1:])
    number = results[0].incident.incident_number if results[0].incident else ""
    assert len(alerts_of(origin, number)) == 5
    incident = repository.get_incident(origin.organization_id, number)
    assert (int(incident.alert_count or 0), int(incident.open_alerts or 0)) == (5, 5)
    later = ingest(
        origin, event("k-late"), now=NOW + timedelta(minutes=10), settings=get_settings()
    )  # the window runs from the first alert
    assert later.created and later.incident is not None and later.incident.incident_number != number


def test_content_grouping_groups_only_equal_fields(origin: AlertOrigin) -> None:
    group_by(origin, AlertGrouping(type="content", fields=("labels.cluster",), window_minutes=None))
    a = ingest(origin, event("a", metadata={"labels.cluster": "eu-1"}), now=NOW, settings=get_settings())
    b = ingest(
        origin, event("b", metadata={"labels.cluster": "eu-1"}), now=NOW + timedelta(hours=5), settings=get_settings()
    )
    c = ingest(
        origin, event("c", metadata={"labels.cluster": "us-1"}), now=NOW + timedelta(hours=5), settings=get_settings()
    )
    assert a.created and b.grouped and c.created
    assert a.incident and b.incident and a.incident.incident_number == b.incident.incident_number


def test_racing_distinct_keys_with_time_grouping_open_one_incident(org: Org, origin: AlertOrigin) -> None:
    group_by(origin, AlertGrouping(type="time", window_minutes=5))
    results = race(
        12, lambda i: ingest(origin, event(f"storm-{i}"), now=NOW + timedelta(milliseconds=i), settings=get_settings())
    )
    assert sum(r.created for r in results) == 1
    numbers = {r.incident.incident_number for r in results if r.incident}
    assert len(numbers) == 1 and len(incidents(org, is_open=True)) == 1
    assert len(alerts_of(origin, numbers.pop())) == 12


def test_the_last_alert_to_resolve_resolves_the_incident(origin: AlertOrigin) -> None:
    group_by(origin, AlertGrouping(type="time", window_minutes=10))
    ingest(origin, event("a"), now=NOW, settings=get_settings())
    opened = ingest(origin, event("b"), now=NOW + timedelta(seconds=1), settings=get_settings())
    assert opened.incident is not None
    number = opened.incident.incident_number
    first = ingest(origin, event("a", "resolve"), now=NOW + timedelta(seconds=2), settings=get_settings())
    assert first.incident is not None and first.incident.status != "resolved"
    assert first.note and "1 other alert" in first.note
    last = ingest(origin, event("b", "resolve"), now=NOW + timedelta(seconds=3), settings=get_settings())
    assert last.incident is not None and last.incident.status == "resolved"
    assert {a.status for a in alerts_of(origin, number)} == {"resolved"}
    again = ingest(origin, event("b", "resolve"), now=NOW + timedelta(seconds=4), settings=get_settings())
    assert again.note == "already resolved"


def test_a_trigger_after_resolution_is_a_new_alert_and_incident(origin: AlertOrigin) -> None:
    first = ingest(origin, event("k"), now=NOW, settings=get_settings())
    ingest(origin, event("k", "resolve"), now=NOW + timedelta(seconds=1), settings=get_settings())
    second = ingest(origin, event("k"), now=NOW + timedelta(seconds=2), settings=get_settings())
    assert second.created and first.alert and second.alert and second.alert.alert_id != first.alert.alert_id


def test_resolving_an_incident_by_hand_ends_its_alerts(origin: AlertOrigin) -> None:
    opened = ingest(origin, event("k"), now=NOW, settings=get_settings())
    assert opened.incident is not None and opened.alert is not None
    number = opened.incident.incident_number
    commands.change_status(
        organization_id=origin.organization_id,
        incident_number=number,
        status="resolved",
        comment=None,
        now=NOW + timedelta(minutes=1),
        principal=origin.principal,
    )
    message = Message(
        "incident.status_changed", origin.organization_id, {"incident_number": number, "category": "resolved"}
    )
    resolve_alerts_of_closed_incident(message, get_settings())
    resolve_alerts_of_closed_incident(message, get_settings())  # a redelivery changes nothing
    stored = alert_repository.get_alert(origin.organization_id, opened.alert.alert_id)
    assert stored is not None and stored.status == "resolved"
    again = ingest(origin, event("k"), now=NOW + timedelta(minutes=2), settings=get_settings())
    assert again.created  # the key's next trigger is a new alert on a new incident


def test_a_trigger_whose_incident_closed_unnoticed_opens_a_new_one(origin: AlertOrigin) -> None:
    """The consumer that resolves alerts has not run: the pipeline finds out and takes its count back."""
    opened = ingest(origin, event("k"), now=NOW, settings=get_settings())
    assert opened.incident is not None and opened.alert is not None
    commands.change_status(
        organization_id=origin.organization_id,
        incident_number=opened.incident.incident_number,
        status="resolved",
        comment=None,
        now=NOW,
        principal=origin.principal,
    )
    again = ingest(origin, event("k"), now=NOW + timedelta(seconds=1), settings=get_settings())
    assert again.created
    old = alert_repository.get_alert(origin.organization_id, opened.alert.alert_id)
    assert old is not None and (old.status, int(old.event_count)) == ("resolved", 1)


def test_maintenance_suppresses_new_alerts_and_counts_their_repeats(org: Org, origin: AlertOrigin) -> None:
    window = WindowInEffect(window_id="mw_1", description="upgrade", end_at=NOW + timedelta(hours=1))
    with mock.patch("chalicelib.integration.triggering.window_in_effect", return_value=window):
        quiet = ingest(origin, event("k"), now=NOW, settings=get_settings())
        repeat = ingest(origin, event("k"), now=NOW + timedelta(seconds=1), settings=get_settings())
    assert quiet.suppressed and quiet.incident is None and quiet.alert is not None
    assert quiet.alert.suppressed_by == {"kind": "maintenance", "window_id": "mw_1"}
    assert repeat.suppressed and repeat.alert is not None and int(repeat.alert.event_count) == 2
    assert incidents(org, is_open=True) == []
    after = ingest(
        origin, event("k"), now=NOW + timedelta(hours=2), settings=get_settings()
    )  # the window is over: it pages
    assert after.created and after.alert is not None and after.alert.alert_id != quiet.alert.alert_id


def test_event_rule_decisions_shape_the_alert(org: Org, origin: AlertOrigin) -> None:
    other = make.service(org, "Payments")
    seen: list[AlertFacts] = []

    def decide(**arguments: Any) -> RuleDecision:
        seen.append(arguments["facts"])
        title = arguments["facts"].title
        if "drop" in title:
            return RuleDecision(dropped=True, matched_rule_ids=("rul_drop",))
        if "quiet" in title:
            return RuleDecision(suppressed=True, matched_rule_ids=("rul_quiet",))
        return RuleDecision(
            severity="SEV1", route_to_service=other.service_id, notes=("Runbook: r/1",), matched_rule_ids=("rul_x",)
        )

    with mock.patch("chalicelib.integration.triggering.decide", side_effect=decide):
        dropped = ingest(origin, event("d", title="please drop me"), now=NOW, settings=get_settings())
        quiet = ingest(origin, event("q", title="quiet please"), now=NOW, settings=get_settings())
        shaped = ingest(
            origin, event("s", title="real", metadata={"labels.env": "prod"}), now=NOW, settings=get_settings()
        )
    assert dropped.dropped and dropped.alert is None and dropped.incident is None
    assert quiet.suppressed and quiet.alert is not None
    assert quiet.alert.suppressed_by == {"kind": "event_rule", "rule_ids": ["rul_quiet"]}
    assert shaped.incident is not None and shaped.incident.severity == "SEV1"
    assert shaped.incident.service_keys == [other.service_key]
    assert "Runbook: r/1" in (shaped.incident.description or "")
    assert seen[-1].labels == {"env": "prod"} and seen[-1].integration_type == "alertmanager"
