"""Alert ingest on moto: dedup under racing deliveries, resolve racing trigger, and record_alert."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.errors import DeliveryRejected
from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord, list_partition
from chalicelib.integration.ingest import IngestResult, dedup_id, ingest
from chalicelib.integration.normalized import Action, NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.integration.tables import AlertDedupRecord, IntegrationRecord
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.kit import factories as make


@pytest.fixture
def svc(org: Org) -> Any:
    return make.service(org, "Checkout")


@pytest.fixture
def integration(org: Org, svc: Any) -> IntegrationRecord:
    from chalicelib.integration import admin

    issued = admin.create_integration(
        organization_id=org.organization_id,
        integration_type="alertmanager",
        name="prom",
        now=NOW,
        default_service_key=svc.service_key,
        settings=get_settings(),
    )
    found = admin.find_by_routing_key(issued.routing_key, settings=get_settings())
    assert found is not None
    return found


def alert(action: Action = "trigger", dedup_key: str | None = "group-1", **fields: Any) -> NormalizedAlert:
    return NormalizedAlert(
        source="alertmanager", action=action, title="Disk full", dedup_key=dedup_key, summary=action, **fields
    )


def race(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Start `count` calls together; every call must succeed."""
    barrier = threading.Barrier(count)

    def run(index: int) -> Any:
        barrier.wait()
        return work(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return [future.result() for future in [pool.submit(run, i) for i in range(count)]]


def incidents(org: Org, *, is_open: bool) -> list[IncidentRecord]:
    return list(IncidentRecord.by_list.query(list_partition(org.organization_id, is_open=is_open)))


def test_sixteen_racing_triggers_with_one_key_open_one_incident(org: Org, integration: IntegrationRecord) -> None:
    results: list[IngestResult] = race(
        16,
        lambda i: ingest(AlertOrigin.of(integration), alert(), now=NOW + timedelta(seconds=i), settings=get_settings()),
    )
    created = [r for r in results if r.created]
    assert len(created) == 1
    assert sum(r.deduplicated for r in results) == 15
    numbers = {r.incident.incident_number for r in results if r.incident}
    assert numbers == {created[0].incident.incident_number}  # type: ignore[union-attr]
    [opened] = incidents(org, is_open=True)
    assert opened.alert_count == 16
    claim = AlertDedupRecord.get(dedup_id(AlertOrigin.of(integration), "group-1"))
    assert claim.incident_number == opened.incident_number


def test_without_dedup_key_every_trigger_opens_an_incident(org: Org, integration: IntegrationRecord) -> None:
    results = race(
        8, lambda i: ingest(AlertOrigin.of(integration), alert(dedup_key=None), now=NOW, settings=get_settings())
    )
    assert all(r.created and not r.deduplicated for r in results)
    numbers = {r.incident.incident_number for r in results}
    assert len(numbers) == 8
    assert {i.incident_number for i in incidents(org, is_open=True)} == numbers
    assert all(i.alert_count == 1 for i in incidents(org, is_open=True))


def test_resolve_racing_triggers_never_leaves_two_open_incidents(org: Org, integration: IntegrationRecord) -> None:
    actions: list[Action] = ["resolve", "trigger", "trigger", "resolve", "trigger", "trigger"]
    for round_ in range(3):
        ingest(AlertOrigin.of(integration), alert(), now=NOW, settings=get_settings())
        race(
            len(actions),
            lambda i: ingest(
                AlertOrigin.of(integration), alert(actions[i]), now=NOW + timedelta(seconds=i), settings=get_settings()
            ),
        )
        open_now = incidents(org, is_open=True)
        assert len(open_now) <= 1, round_
        claim = AlertDedupRecord.get(dedup_id(AlertOrigin.of(integration), "group-1"))
        if open_now:
            assert claim.incident_number == open_now[0].incident_number
        # Settle: resolve whatever is open, so the next round starts from a resolved key.
        ingest(AlertOrigin.of(integration), alert("resolve"), now=NOW, settings=get_settings())
        assert incidents(org, is_open=True) == []
    total = len(incidents(org, is_open=False))
    assert total >= 3  # at least one incident per round, never reopened


def test_a_resolved_incident_is_not_reopened(org: Org, integration: IntegrationRecord) -> None:
    notes: tuple[Action, ...] = ("resolve", "acknowledge", "note")
    for action in notes:  # nothing behind the key yet: accepted, nothing changes
        result = ingest(AlertOrigin.of(integration), alert(action), now=NOW, settings=get_settings())
        assert (result.incident, result.created) == (None, False)
    without_default = dataclasses.replace(AlertOrigin.of(integration), default_service_key=None)
    with pytest.raises(DeliveryRejected) as unknown:
        ingest(without_default, alert(service_hint="SER-99999"), now=NOW, settings=get_settings())
    assert unknown.value.code == "INVALID_PAYLOAD"
    assert incidents(org, is_open=True) == []
    first = ingest(AlertOrigin.of(integration), alert(), now=NOW, settings=get_settings())
    resolved = ingest(AlertOrigin.of(integration), alert("resolve"), now=NOW, settings=get_settings())
    assert resolved.incident.status == "resolved"  # type: ignore[union-attr]
    assert (
        ingest(AlertOrigin.of(integration), alert("resolve"), now=NOW, settings=get_settings()).note
        == "already resolved"
    )
    acknowledged = ingest(AlertOrigin.of(integration), alert("acknowledge"), now=NOW, settings=get_settings())
    assert acknowledged.incident.acknowledged_at is None  # type: ignore[union-attr]
    second = ingest(AlertOrigin.of(integration), alert(), now=NOW, settings=get_settings())
    assert second.created and second.incident.incident_number != first.incident.incident_number  # type: ignore[union-attr]
    assert repository.get_incident(org.organization_id, first.incident.incident_number).status == "resolved"  # type: ignore[union-attr]


def test_record_alert(org: Org, integration: IntegrationRecord) -> None:
    opened = ingest(AlertOrigin.of(integration), alert(), now=NOW, settings=get_settings()).incident
    assert opened is not None
    counted = repository.record_alert(org.organization_id, opened.incident_number, now=NOW, summary="again")
    assert counted is not None
    assert (counted.alert_count, counted.last_alert_summary, counted.version) == (2, "again", opened.version + 1)
    ingest(AlertOrigin.of(integration), alert("resolve"), now=NOW, settings=get_settings())
    assert repository.record_alert(org.organization_id, opened.incident_number, now=NOW, summary="late") is None
    assert repository.get_incident(org.organization_id, opened.incident_number).alert_count == 2
    assert repository.record_alert(org.organization_id, "INC-2026-9999", now=NOW, summary="none") is None


def test_an_unknown_or_inactive_service_goes_to_the_default_with_a_warning(
    org: Org, integration: IntegrationRecord, svc: Any
) -> None:
    from chalicelib.catalog import service as services

    retired = services.create_service(organization_id=org.organization_id, name="Retired", now=NOW)
    services.update_service(
        organization_id=org.organization_id, service_ref=retired.service_id, now=NOW, is_active=False
    )
    origin = AlertOrigin.of(integration)
    for hint in ("SER-99999", retired.service_id):
        result = ingest(origin, alert(dedup_key=hint, service_hint=hint), now=NOW, settings=get_settings())
        assert result.created and result.incident is not None
        assert result.incident.service_keys == [svc.service_key]
        assert result.warnings == (
            f"Unknown or inactive service {hint!r}; routed to the integration's default service 'Checkout'.",
        )
    # A service that exists is used as named, without a warning.
    named = ingest(origin, alert(dedup_key="named", service_hint=svc.service_id), now=NOW, settings=get_settings())
    assert named.created and named.warnings == ()
    # The default service itself inactive: nothing to fall back to, refused.
    services.update_service(organization_id=org.organization_id, service_ref=svc.service_id, now=NOW, is_active=False)
    with pytest.raises(DeliveryRejected) as refused:
        ingest(origin, alert(dedup_key="late", service_hint="SER-99999"), now=NOW, settings=get_settings())
    assert refused.value.code == "INVALID_PAYLOAD" and "SER-99999" in refused.value.message


def test_rules_past_their_time_budget_add_their_warning_after_the_services(
    org: Org, integration: IntegrationRecord, svc: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.eventrule import evaluate as evaluation
    from chalicelib.eventrule.rules import Actions, Condition, Rule, rule_to_item
    from chalicelib.eventrule.tables import EventRuleSetRecord, list_key

    quiet = Rule(
        rule_id="evr_" + "1" * 32,
        conditions=(Condition("title", "contains", "disk"),),
        actions=Actions(suppress=True),
        continues=False,
        description=None,
        version=1,
        created_at=NOW,
    )
    rule_set = EventRuleSetRecord(org.organization_id, list_key(None))  # the organization's list
    rule_set.rules_json = json.dumps([rule_to_item(quiet)])
    rule_set.updated_at = NOW
    rule_set.save()
    origin = AlertOrigin.of(integration)
    assert ingest(origin, alert(dedup_key="before"), now=NOW, settings=get_settings()).suppressed
    monkeypatch.setattr(evaluation, "EVALUATION_BUDGET_SECONDS", -1.0)  # every evaluation is already late
    late = ingest(origin, alert(dedup_key="late", service_hint="SER-99999"), now=NOW, settings=get_settings())
    assert late.created and not late.suppressed
    assert late.warnings == (
        "Unknown or inactive service 'SER-99999'; routed to the integration's default service 'Checkout'.",
        evaluation.over_budget_warning(-1.0),
    )
    # A repeat on the open alert evaluates no rule: nothing to warn about.
    repeat = ingest(origin, alert(dedup_key="late"), now=NOW, settings=get_settings())
    assert repeat.deduplicated and repeat.warnings == ()
