"""Urgency on moto: services' rules stored and read back, incidents' urgency at creation and on a
severity change, records stored before the fields existed."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.catalog import service as services
from chalicelib.catalog.urgency import DEFAULT_RULE, SupportHours, UrgencyRule
from chalicelib.directory.tables import ServiceRecord
from chalicelib.errors import ValidationFailed
from chalicelib.incident import commands, listing, repository
from chalicelib.incident import service as incidents
from chalicelib.incident.models import IncidentListQuery
from chalicelib.incident.presenters import incident_v1
from chalicelib.incident.tables import IncidentRecord
from chalicelib.integration import admin
from chalicelib.integration.ingest import ingest
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org

# NOW is Sunday 2026-11-22 12:00Z; the Monday after, 10:00 and 20:00 in Berlin (CET, +01:00).
MONDAY_OFFICE = NOW + timedelta(days=1) - timedelta(hours=3)  # 09:00Z = 10:00 CET
MONDAY_EVENING = NOW + timedelta(days=1) + timedelta(hours=7)  # 19:00Z = 20:00 CET
OFFICE_HOURS = SupportHours(
    time_zone="Europe/Berlin", days=("mon", "tue", "wed", "thu", "fri"), start="09:00", end="17:00"
)


def principal(org: Org) -> Principal:
    return Principal(
        organization_id=org.organization_id,
        credential_kind="api_key",
        scopes=frozenset(ALL_SCOPES),
        key_id="k1",
        display_name="robot (API key)",
    )


def new_service(org: Org, name: str, rule: UrgencyRule | None = None) -> services.Service:
    return services.create_service(organization_id=org.organization_id, name=name, now=NOW, urgency_rule=rule)


def open_incident(org: Org, service: services.Service, severity: str, now: Any = NOW) -> IncidentRecord:
    return incidents.create_incident(
        organization_id=org.organization_id,
        request=incidents.NewIncident(title="Checkout down", service_keys=[service.service_key], severity=severity),
        now=now,
        actor="tester",
        settings=get_settings(),
    )


def change_severity(org: Org, incident: IncidentRecord, severity: str, now: Any) -> IncidentRecord:
    return commands.update_incident(
        organization_id=org.organization_id,
        incident_number=incident.incident_number,
        changes={"severity": severity},
        now=now,
        principal=principal(org),
    )


def stored(org: Org, incident: IncidentRecord) -> IncidentRecord:
    return repository.get_incident(org.organization_id, incident.incident_number)


# --- services --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "rule",
    [
        UrgencyRule("high"),
        UrgencyRule("low"),
        UrgencyRule("severity_based"),
        UrgencyRule("high", OFFICE_HOURS),
        UrgencyRule("severity_based", SupportHours("UTC", ("sat", "sun"), "22:00", "06:00")),
    ],
)
def test_a_service_keeps_the_rule_it_was_created_with(org: Org, rule: UrgencyRule) -> None:
    created = new_service(org, "Checkout", rule)
    assert created.urgency_rule == rule
    assert (
        services.get_service(organization_id=org.organization_id, service_ref=created.service_id).urgency_rule == rule
    )
    assert ServiceRecord.get(org.organization_id, created.service_key).urgency_rule == rule.to_dict()


def test_a_service_created_without_a_rule_gets_and_stores_the_default(org: Org) -> None:
    created = new_service(org, "Checkout")
    assert created.urgency_rule == DEFAULT_RULE
    assert ServiceRecord.get(org.organization_id, created.service_key).urgency_rule == {
        "type": "severity_based",
        "support_hours": None,
    }


def test_a_service_stored_before_urgency_rules_reads_as_the_default(org: Org) -> None:
    created = new_service(org, "Checkout", UrgencyRule("high"))
    record = ServiceRecord.get(org.organization_id, created.service_key)
    record.update(actions=[ServiceRecord.urgency_rule.remove()])
    assert ServiceRecord.get(org.organization_id, created.service_key).urgency_rule is None
    found = services.get_services(organization_id=org.organization_id, service_keys=[created.service_key])
    assert found[created.service_key].urgency_rule == DEFAULT_RULE
    assert open_incident(org, created, "SEV1").urgency == "high"
    assert open_incident(org, created, "SEV2").urgency == "low"


def test_update_replaces_the_rule(org: Org) -> None:
    created = new_service(org, "Checkout", UrgencyRule("high", OFFICE_HOURS))
    updated = services.update_service(
        organization_id=org.organization_id, service_ref=created.service_key, now=NOW, urgency_rule=UrgencyRule("low")
    )
    assert updated.urgency_rule == UrgencyRule("low")
    # Other changes leave the rule alone.
    renamed = services.update_service(
        organization_id=org.organization_id, service_ref=created.service_key, now=NOW, name="Checkout API"
    )
    assert renamed.urgency_rule == UrgencyRule("low")


@pytest.mark.parametrize(
    ("hours", "field"),
    [
        (SupportHours("Mars/Olympus", ("mon",), "09:00", "17:00"), "urgency_rule.support_hours.time_zone"),
        (SupportHours("UTC", (), "09:00", "17:00"), "urgency_rule.support_hours.days"),
        (SupportHours("UTC", ("mon",), "25:00", "17:00"), "urgency_rule.support_hours.start"),
        (SupportHours("UTC", ("mon",), "09:00", "09:00"), "urgency_rule.support_hours.end"),
    ],
)
def test_a_bad_rule_is_refused_and_nothing_is_written(org: Org, hours: SupportHours, field: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        new_service(org, "Checkout", UrgencyRule("high", hours))
    assert [item["field"] for item in raised.value.details["fields"]] == [field]
    assert services.list_services(organization_id=org.organization_id) == []

    kept = new_service(org, "Search", UrgencyRule("low"))
    with pytest.raises(ValidationFailed):
        services.update_service(
            organization_id=org.organization_id,
            service_ref=kept.service_key,
            now=NOW,
            name="Renamed",
            urgency_rule=UrgencyRule("high", hours),
        )
    unchanged = services.get_service(organization_id=org.organization_id, service_ref=kept.service_key)
    assert (unchanged.name, unchanged.urgency_rule) == ("Search", UrgencyRule("low"))


# --- incidents ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "severity", "now", "expected"),
    [
        (UrgencyRule("severity_based"), "SEV1", NOW, "high"),
        (UrgencyRule("severity_based"), "SEV2", NOW, "low"),
        (UrgencyRule("high"), "SEV4", NOW, "high"),
        (UrgencyRule("low"), "SEV0", NOW, "low"),
        (UrgencyRule("high", OFFICE_HOURS), "SEV4", MONDAY_OFFICE, "high"),
        (UrgencyRule("high", OFFICE_HOURS), "SEV0", MONDAY_EVENING, "low"),
        (UrgencyRule("severity_based", OFFICE_HOURS), "SEV0", NOW, "low"),  # Sunday
    ],
)
def test_an_incident_opens_with_its_services_urgency(
    org: Org, rule: UrgencyRule, severity: str, now: Any, expected: str
) -> None:
    incident = open_incident(org, new_service(org, "Checkout", rule), severity, now)
    assert incident.urgency == expected
    assert stored(org, incident).urgency == expected
    assert incident_v1(stored(org, incident)).urgency == expected


def test_the_first_service_decides(org: Org) -> None:
    loud = new_service(org, "Loud", UrgencyRule("high"))
    quiet = new_service(org, "Quiet", UrgencyRule("low"))
    first_loud = incidents.create_incident(
        organization_id=org.organization_id,
        request=incidents.NewIncident(title="x", service_keys=[loud.service_key, quiet.service_key], severity="SEV4"),
        now=NOW,
        actor="tester",
        settings=get_settings(),
    )
    assert first_loud.urgency == "high"


def test_a_severity_change_recomputes_urgency_at_the_time_of_the_change(org: Org) -> None:
    service = new_service(org, "Checkout", UrgencyRule("severity_based", OFFICE_HOURS))
    incident = open_incident(org, service, "SEV3", MONDAY_OFFICE)
    assert incident.urgency == "low"
    raised = change_severity(org, incident, "SEV1", MONDAY_OFFICE + timedelta(minutes=5))
    assert raised.urgency == "high"
    assert stored(org, incident).urgency == "high"
    entry = repository.get_with_timeline(org.organization_id, incident.incident_number).timeline[0]
    assert (entry.event_type, entry.description) == ("severity_changed", "Urgency changed from low to high.")
    # The same severity again outside support hours: no change, nothing recomputed.
    assert change_severity(org, incident, "SEV1", MONDAY_EVENING).urgency == "high"
    # Another severity outside support hours: low.
    assert change_severity(org, incident, "SEV0", MONDAY_EVENING).urgency == "low"


def test_a_later_change_of_the_services_rule_leaves_open_incidents_alone(org: Org) -> None:
    service = new_service(org, "Checkout", UrgencyRule("severity_based"))
    incident = open_incident(org, service, "SEV3")
    services.update_service(
        organization_id=org.organization_id, service_ref=service.service_key, now=NOW, urgency_rule=UrgencyRule("high")
    )
    assert stored(org, incident).urgency == "low"
    # A severity change recomputes under the rule the incident was opened with.
    assert change_severity(org, incident, "SEV4", NOW + timedelta(minutes=1)).urgency == "low"
    assert change_severity(org, incident, "SEV1", NOW + timedelta(minutes=2)).urgency == "high"
    # New incidents follow the new rule.
    assert open_incident(org, service, "SEV4").urgency == "high"


def _strip_urgency(org: Org, incident: IncidentRecord) -> None:
    """Make the incident look as one stored before urgency existed."""
    record = stored(org, incident)
    record.update(actions=[IncidentRecord.urgency.remove(), IncidentRecord.urgency_rule.remove()])
    assert stored(org, incident).urgency is None


@pytest.mark.parametrize(
    ("severity", "expected"), [("SEV0", "high"), ("SEV1", "high"), ("SEV2", "low"), ("SEV4", "low")]
)
def test_an_incident_stored_before_urgency_reads_as_its_severitys(org: Org, severity: str, expected: str) -> None:
    incident = open_incident(org, new_service(org, "Checkout", UrgencyRule("low")), severity)
    _strip_urgency(org, incident)
    assert incident_v1(stored(org, incident)).urgency == expected


def test_a_severity_change_on_an_old_incident_is_severity_based(org: Org) -> None:
    incident = open_incident(org, new_service(org, "Checkout", UrgencyRule("low")), "SEV3")
    _strip_urgency(org, incident)
    assert change_severity(org, incident, "SEV1", NOW + timedelta(minutes=1)).urgency == "high"
    assert stored(org, incident).urgency == "high"


def test_the_list_filters_by_urgency(org: Org) -> None:
    high = open_incident(org, new_service(org, "Loud", UrgencyRule("high")), "SEV4")
    low = open_incident(org, new_service(org, "Quiet", UrgencyRule("low")), "SEV0")
    old = open_incident(org, new_service(org, "Old", UrgencyRule("low")), "SEV1")
    _strip_urgency(org, old)  # reads as high: SEV1

    def numbers(*urgency: str) -> set[str]:
        query = IncidentListQuery.model_validate({"urgency": list(urgency)})
        page = listing.list_incidents(organization_id=org.organization_id, query=query)
        return {record.incident_number for record in page.items}

    assert numbers("high") == {high.incident_number, old.incident_number}
    assert numbers("low") == {low.incident_number}
    assert numbers("high", "low") == {high.incident_number, low.incident_number, old.incident_number}


def test_an_alert_opens_an_incident_with_its_services_urgency(org: Org) -> None:
    service = new_service(org, "Checkout", UrgencyRule("high", OFFICE_HOURS))
    issued = admin.create_integration(
        organization_id=org.organization_id,
        integration_type="alertmanager",
        name="prom",
        now=NOW,
        default_service_key=service.service_key,
        settings=get_settings(),
    )
    integration = admin.find_by_routing_key(issued.routing_key, settings=get_settings())
    assert integration is not None

    def trigger(key: str, now: Any) -> IncidentRecord:
        alert = NormalizedAlert(
            source="alertmanager", action="trigger", title="Disk full", dedup_key=key, summary="x", severity="SEV3"
        )
        result = ingest(AlertOrigin.of(integration), alert, now=now, settings=get_settings())
        assert result.incident is not None and result.created
        return result.incident

    assert trigger("office", MONDAY_OFFICE).urgency == "high"
    assert trigger("evening", MONDAY_EVENING).urgency == "low"
