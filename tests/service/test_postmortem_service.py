"""Postmortem service on moto: one per incident (also under racing creates), prefill, timeline entry,
status moves, optimistic locking, legacy records."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.errors import Conflict, NotFound, TransitionNotAllowed
from chalicelib.incident import commands, repository
from chalicelib.incident import service as incidents
from chalicelib.postmortem import service
from chalicelib.postmortem.tables import PostmortemRecord, incident_guard_key
from chalicelib.settings import get_settings
from chalicelib.store import owner_of
from tests.conftest import NOW, Org
from tests.kit import factories as make


@pytest.fixture
def incident(org: Org) -> Any:
    svc = make.service(org, "Checkout")
    return incidents.create_incident(
        organization_id=org.organization_id,
        request=incidents.NewIncident(title="Checkout down", service_keys=[svc.service_key]),
        now=NOW,
        actor="tester",
        settings=get_settings(),
    )


def robot(org: Org) -> Principal:
    return Principal(
        organization_id=org.organization_id,
        credential_kind="api_key",
        scopes=frozenset(ALL_SCOPES),
        key_id="k1",
        display_name="robot (API key)",
    )


def create(org: Org, number: str, **content: Any) -> PostmortemRecord:
    return service.create_postmortem(
        organization_id=org.organization_id,
        incident_number=number,
        level="standard",
        content=content,
        response_timeline_overrides={},
        now=NOW + timedelta(days=1),
        actor="author",
    )


def postmortem_entries(org: Org, number: str) -> list[Any]:
    timeline = repository.get_with_timeline(org.organization_id, number).timeline
    return [entry for entry in timeline if entry.event_type == "postmortem_created"]


def test_create_numbers_prefills_and_adds_the_timeline_entry(org: Org, incident: Any) -> None:
    oid, number = org.organization_id, incident.incident_number
    who = robot(org)
    commands.acknowledge(organization_id=oid, incident_number=number, principal=who, now=NOW + timedelta(minutes=12))
    for minutes, status in ((20, "identified"), (30, "monitoring"), (65, "resolved")):
        commands.change_status(
            organization_id=oid,
            incident_number=number,
            status=status,
            comment=None,
            now=NOW + timedelta(minutes=minutes),
            principal=who,
        )
    created = create(org, number, summary="Card payments failed", impact={"duration": "<b>1h</b>"})

    assert (created.postmortem_number, created.status, created.level, created.version) == (
        "PM-2026-0001",
        "draft",
        "standard",
        1,
    )
    assert created.response_timeline == {
        "time_to_acknowledge": "12m",
        "time_to_identify": "20m",
        "time_to_resolve": "1h 5m",
    }
    assert created.impact_html == '<dl class="postmortem-impact"><dt>Duration</dt><dd>&lt;b&gt;1h&lt;/b&gt;</dd></dl>'
    assert "<dd>12m</dd>" in (created.response_timeline_html or "")
    assert (created.timeline, created.timeline_html) == (None, None)

    [entry] = postmortem_entries(org, number)
    assert entry.title == "Postmortem PM-2026-0001 created"
    assert entry.details == {"postmortem_id": created.postmortem_id, "postmortem_number": "PM-2026-0001"}
    assert entry.user == "author"

    by_incident = service.get_postmortem_for_incident(organization_id=oid, incident_number=number)
    assert by_incident.postmortem_id == created.postmortem_id
    assert by_incident.summary == "Card payments failed"


def test_prefill_is_null_where_the_incident_has_no_moment_and_overrides_win(org: Org, incident: Any) -> None:
    created = service.create_postmortem(
        organization_id=org.organization_id,
        incident_number=incident.incident_number,
        level="light",
        content={},
        response_timeline_overrides={"time_to_identify": "about 3m", "time_to_resolve": None},
        now=NOW,
        actor="author",
    )
    assert created.response_timeline == {
        "time_to_acknowledge": None,
        "time_to_identify": "about 3m",
        "time_to_resolve": None,
    }


def test_a_second_create_is_409_and_writes_nothing(org: Org, incident: Any) -> None:
    first = create(org, incident.incident_number)
    with pytest.raises(Conflict) as refused:
        create(org, incident.incident_number)
    assert refused.value.details == {"incident_number": incident.incident_number, "postmortem_id": first.postmortem_id}
    assert len(postmortem_entries(org, incident.incident_number)) == 1


def test_unknown_incident_is_404_and_writes_nothing(org: Org) -> None:
    with pytest.raises(NotFound):
        create(org, "INC-2026-9999")
    assert owner_of(organization_id=org.organization_id, unique_key=incident_guard_key("INC-2026-9999")) is None
    with pytest.raises(NotFound):
        service.get_postmortem_for_incident(organization_id=org.organization_id, incident_number="INC-2026-9999")


def test_concurrent_creates_yield_one_postmortem_and_conflicts(
    org: Org, incident: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the early read, every racer reaches the transaction: the guard item alone must decide.
    monkeypatch.setattr(service, "_refuse_second", lambda organization_id, incident_number: None)
    number = incident.incident_number
    start = threading.Barrier(4)

    def racer(_: int) -> str:
        start.wait()
        try:
            return create(org, number).postmortem_id
        except Conflict:
            return "conflict"

    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(racer, range(4)))

    winners = [outcome for outcome in outcomes if outcome != "conflict"]
    assert len(winners) == 1
    assert outcomes.count("conflict") == 3
    assert (
        service.get_postmortem_for_incident(organization_id=org.organization_id, incident_number=number).postmortem_id
        == winners[0]
    )
    assert len(postmortem_entries(org, number)) == 1


def test_status_moves_and_published_is_final(org: Org, incident: Any) -> None:
    oid = org.organization_id
    pid = create(org, incident.incident_number).postmortem_id

    def update(when_minutes: int = 0, **changes: Any) -> PostmortemRecord:
        return service.update_postmortem(
            organization_id=oid, postmortem_id=pid, changes=changes, now=NOW + timedelta(minutes=when_minutes)
        )

    with pytest.raises(TransitionNotAllowed):
        update(status="published")
    assert update(status="in_review").status == "in_review"
    assert update(status="draft").status == "draft"
    same = update(status="draft")  # no change: no write
    assert same.version == 3
    reviewed = update(
        1,
        status="in_review",
        action_items=[{"text": "Alert on 5xx", "owner_email": None, "due_date": None, "status": "pending"}],
    )
    assert (reviewed.version, reviewed.updated_at) == (4, NOW + timedelta(minutes=1))
    assert "Alert on 5xx" in (reviewed.action_items_html or "")
    published = update(status="published")
    assert published.status == "published"
    with pytest.raises(Conflict):
        update(summary="too late")
    with pytest.raises(TransitionNotAllowed):
        update(status="draft")
    assert update(status="published").version == published.version


def test_null_clears_a_structured_field_and_its_html(org: Org, incident: Any) -> None:
    pid = create(org, incident.incident_number, timeline=[{"timestamp": "12:00", "description": "paged"}]).postmortem_id
    assert service.get_postmortem(organization_id=org.organization_id, postmortem_id=pid).timeline_html
    cleared = service.update_postmortem(
        organization_id=org.organization_id, postmortem_id=pid, changes={"timeline": None}, now=NOW
    )
    assert (cleared.timeline, cleared.timeline_html) == (None, None)


def test_versioned_updates_refuse_stale_writes_and_unversioned_ones_lose_nothing(org: Org, incident: Any) -> None:
    oid = org.organization_id
    pid = create(org, incident.incident_number).postmortem_id
    service.update_postmortem(
        organization_id=oid, postmortem_id=pid, changes={"summary": "a"}, now=NOW, expected_version=1
    )
    with pytest.raises(Conflict) as stale:
        service.update_postmortem(
            organization_id=oid, postmortem_id=pid, changes={"summary": "b"}, now=NOW, expected_version=1
        )
    assert stale.value.details == {"expected_version": 1, "current_version": 2}

    fields = ["summary", "root_cause", "resolution", "five_whys", "detection_path", "monitoring_gaps"]
    start = threading.Barrier(len(fields))

    def write(field: str) -> None:
        start.wait()
        service.update_postmortem(organization_id=oid, postmortem_id=pid, changes={field: field}, now=NOW)

    with ThreadPoolExecutor(max_workers=len(fields)) as pool:
        list(pool.map(write, fields))
    stored = service.get_postmortem(organization_id=oid, postmortem_id=pid)
    assert [getattr(stored, field) for field in fields] == fields
    assert stored.version == 2 + len(fields)


def test_update_of_an_unknown_postmortem_is_404(org: Org) -> None:
    with pytest.raises(NotFound):
        service.update_postmortem(
            organization_id=org.organization_id, postmortem_id="nope", changes={"summary": "x"}, now=NOW
        )


def test_legacy_import_keeps_html_strings_and_counts_as_the_one_postmortem(org: Org, incident: Any) -> None:
    oid = org.organization_id
    created_at = NOW - timedelta(days=400)
    record = service.import_legacy_postmortem(
        organization_id=oid,
        incident_number=incident.incident_number,
        fields={
            "level": "full",
            "status": "published",
            "impact": "<p>Checkout down</p>",
            "timeline": "<ul><li>x</li></ul>",
        },
        created_at=created_at,
        now=NOW,
        actor="admin",
    )
    assert record.postmortem_number == f"PM-{created_at.year}-0001"
    stored = service.get_postmortem(organization_id=oid, postmortem_id=record.postmortem_id)
    assert (stored.impact, stored.impact_html, stored.timeline, stored.imported) == (
        "<p>Checkout down</p>",
        None,
        "<ul><li>x</li></ul>",
        "legacy",
    )
    assert stored.created_at == created_at
    [entry] = postmortem_entries(org, incident.incident_number)
    assert entry.title == f"Postmortem {record.postmortem_number} imported"
    with pytest.raises(Conflict):
        create(org, incident.incident_number)


def test_a_structured_patch_replaces_a_legacy_string_and_renders_its_html(org: Org, incident: Any) -> None:
    oid = org.organization_id
    record = service.import_legacy_postmortem(
        organization_id=oid,
        incident_number=incident.incident_number,
        fields={"status": "in_review", "impact": "<p>old</p>", "action_items": "<ul><li>old</li></ul>"},
        created_at=NOW,
        now=NOW,
        actor="admin",
    )
    patched = service.update_postmortem(
        organization_id=oid,
        postmortem_id=record.postmortem_id,
        changes={
            "impact": {"duration": "2h", "users_affected": None, "services_affected": None, "revenue_impact": None}
        },
        now=NOW,
    )
    assert patched.impact == {
        "duration": "2h",
        "users_affected": None,
        "services_affected": None,
        "revenue_impact": None,
    }
    assert patched.impact_html == '<dl class="postmortem-impact"><dt>Duration</dt><dd>2h</dd></dl>'
    assert (patched.action_items, patched.action_items_html) == ("<ul><li>old</li></ul>", None)


def test_the_list_is_the_organizations_own_newest_first_and_filters_by_status(org: Org, incident: Any) -> None:
    from tests.conftest import make_org

    svc_key = incident.service_keys[0]
    second = incidents.create_incident(
        organization_id=org.organization_id,
        request=incidents.NewIncident(title="Search slow", service_keys=[svc_key]),
        now=NOW,
        actor="tester",
        settings=get_settings(),
    )
    first_pm = create(org, incident.incident_number)
    second_pm = service.create_postmortem(
        organization_id=org.organization_id,
        incident_number=second.incident_number,
        level="light",
        content={},
        response_timeline_overrides={},
        now=NOW + timedelta(days=2),
        actor="author",
    )
    service.update_postmortem(
        organization_id=org.organization_id,
        postmortem_id=first_pm.postmortem_id,
        changes={"status": "in_review"},
        now=NOW,
    )
    listed = service.list_postmortems(organization_id=org.organization_id)
    assert [p.postmortem_number for p in listed] == [second_pm.postmortem_number, first_pm.postmortem_number]
    in_review = service.list_postmortems(organization_id=org.organization_id, status="in_review")
    assert [p.postmortem_id for p in in_review] == [first_pm.postmortem_id]
    assert service.list_postmortems(organization_id=make_org("Other").organization_id) == []
