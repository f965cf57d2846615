"""Component history on moto: every status change and every maintenance hold is recorded in the
same transaction as the change, and the uptime document is computed from it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from chalicelib.errors import NotFound
from chalicelib.settings import get_settings
from chalicelib.statuspage import history, incidents, pages, public, scheduled_maintenance, structure
from chalicelib.statuspage.repository import item_id
from chalicelib.statuspage.tables import HISTORY_PREFIX, StatusPageItem
from chalicelib.statuspage.uptime_public import document
from tests.conftest import NOW


@pytest.fixture
def page(org):
    created = pages.create_page(organization_id=org.organization_id, name="Acme", slug="acme", now=NOW)
    section = structure.create_section(page_id=created.page_id, name="Core", now=NOW)
    api = structure.create_component(
        page_id=created.page_id, section_id=item_id(section), group_id=None, name="API", status="operational", now=NOW
    )
    web = structure.create_component(
        page_id=created.page_id, section_id=item_id(section), group_id=None, name="Web", status="operational", now=NOW
    )
    return created.page_id, item_id(api), item_id(web)


def recorded(page_id):
    items = list(StatusPageItem.query(page_id, StatusPageItem.item_key.startswith(HISTORY_PREFIX)))
    return [
        (item.change, item.component_id or item.component_ids, item.previous_status or item.maintenance_id, item.status)
        for item in items
    ]


def statuses(page_id, component_id):
    return [(previous, status) for change, cid, previous, status in recorded(page_id) if cid == component_id]


def test_creating_a_component_records_its_first_status(page):
    page_id, api, web = page
    assert recorded(page_id) == [("status", api, None, "operational"), ("status", web, None, "operational")]


def test_a_component_patch_records_a_change_of_status_only(page):
    page_id, api, _ = page
    structure.update_component(page_id=page_id, component_id=api, now=NOW, name="Public API")
    structure.update_component(page_id=page_id, component_id=api, now=NOW, status="operational")  # no change
    structure.update_component(page_id=page_id, component_id=api, now=NOW, status="major_outage")
    structure.update_component(
        page_id=page_id, component_id=api, now=NOW + timedelta(minutes=5), status="partial_outage"
    )
    assert statuses(page_id, api) == [
        (None, "operational"),
        ("operational", "major_outage"),
        ("major_outage", "partial_outage"),
    ]


def test_a_lost_race_writes_no_history_and_the_retry_records_the_winner_as_previous(page, monkeypatch):
    page_id, api, _ = page
    real = history.save_with_history
    calls = []

    def racing(item, entries):
        calls.append(len(entries))
        if len(calls) == 1:  # another writer gets in between our read and our write
            structure.update_component(page_id=page_id, component_id=api, now=NOW, status="degraded_performance")
        return real(item, entries)

    monkeypatch.setattr(history, "save_with_history", racing)
    structure.update_component(page_id=page_id, component_id=api, now=NOW, status="major_outage")
    assert calls == [1, 1, 1]  # ours, the racer's, our retry
    assert statuses(page_id, api) == [
        (None, "operational"),
        ("operational", "degraded_performance"),
        ("degraded_performance", "major_outage"),
    ]


def test_a_stale_save_writes_neither_the_item_nor_its_history(page):
    page_id, api, _ = page
    stale = StatusPageItem.get(page_id, "A#CMP#" + api)
    structure.update_component(page_id=page_id, component_id=api, now=NOW, status="major_outage")
    before = recorded(page_id)
    stale.status = "partial_outage"
    change = history.status_change(page_id, api, previous="operational", status="partial_outage", now=NOW)
    assert history.save_with_history(stale, [change]) is False
    assert recorded(page_id) == before
    assert StatusPageItem.get(page_id, "A#CMP#" + api).status == "major_outage"


def test_incident_component_statuses_are_recorded_with_the_incident(page, org):
    page_id, api, web = page
    incident = incidents.create_incident(
        organization_id=org.organization_id,
        page_id=page_id,
        title="Down",
        status="investigating",
        impact="major",
        body="Looking.",
        component_ids=[api, web],
        incident_number=None,
        now=NOW,
        component_statuses={api: "major_outage", web: "operational"},  # web unchanged: nothing recorded
        settings=get_settings(),
    )
    incidents.add_update(
        page_id=page_id,
        incident_id=item_id(incident),
        status="resolved",
        body="Fixed.",
        now=NOW + timedelta(hours=1),
        component_statuses={api: "operational"},
        settings=get_settings(),
    )
    assert statuses(page_id, api) == [
        (None, "operational"),
        ("operational", "major_outage"),
        ("major_outage", "operational"),
    ]
    assert statuses(page_id, web) == [(None, "operational")]


def test_an_incident_whose_components_changed_meanwhile_retries_without_double_history(page, org, monkeypatch):
    page_id, api, _ = page
    real = incidents.require_structure
    reads = []

    def racing(page_id_):
        found = real(page_id_)
        reads.append(1)
        if len(reads) == 2:  # after the attempt read the structure, an operator changes the component
            structure.update_component(page_id=page_id, component_id=api, now=NOW, status="degraded_performance")
        return found

    monkeypatch.setattr(incidents, "require_structure", racing)
    incidents.create_incident(
        organization_id=org.organization_id,
        page_id=page_id,
        title="Down",
        status="investigating",
        impact="major",
        body="Looking.",
        component_ids=[api],
        incident_number=None,
        now=NOW,
        component_statuses={api: "major_outage"},
        settings=get_settings(),
    )
    assert statuses(page_id, api) == [
        (None, "operational"),
        ("operational", "degraded_performance"),
        ("degraded_performance", "major_outage"),
    ]


def maintenance_marks(page_id):
    return [(change, ids, mid) for change, ids, mid, _ in recorded(page_id) if change != "status"]


def test_maintenance_records_when_it_holds_and_releases_components(page):
    page_id, api, web = page
    window = scheduled_maintenance.create_window(
        page_id=page_id,
        title="Upgrade",
        scheduled_start=NOW + timedelta(hours=1),
        scheduled_end=NOW + timedelta(hours=2),
        component_ids=[api],
        now=NOW,
        settings=get_settings(),
    )
    mid = item_id(window)
    assert maintenance_marks(page_id) == []  # scheduled: holds nothing yet
    scheduled_maintenance.run_scheduler(now=NOW + timedelta(hours=1), settings=get_settings())
    scheduled_maintenance.update_window(
        page_id=page_id,
        maintenance_id=mid,
        now=NOW + timedelta(hours=1, minutes=10),
        component_ids=[web],
        settings=get_settings(),
    )
    scheduled_maintenance.update_window(
        page_id=page_id,
        maintenance_id=mid,
        now=NOW + timedelta(hours=1, minutes=20),
        title="Big upgrade",
        settings=get_settings(),
    )
    scheduled_maintenance.run_scheduler(now=NOW + timedelta(hours=2), settings=get_settings())
    assert maintenance_marks(page_id) == [
        ("maintenance_began", [api], mid),
        ("maintenance_ended", [api], mid),
        ("maintenance_began", [web], mid),
        ("maintenance_ended", [web], mid),
    ]


def test_a_window_starting_at_once_or_cancelled_in_progress_is_recorded(page):
    page_id, api, web = page
    window = scheduled_maintenance.create_window(
        page_id=page_id,
        title="Now",
        scheduled_start=NOW - timedelta(minutes=1),
        scheduled_end=NOW + timedelta(hours=1),
        component_ids=[api, web],
        now=NOW,
        settings=get_settings(),
    )
    scheduled_maintenance.update_window(
        page_id=page_id, maintenance_id=item_id(window), now=NOW, status="cancelled", settings=get_settings()
    )
    mid = item_id(window)
    assert maintenance_marks(page_id) == [
        ("maintenance_began", [api, web], mid),
        ("maintenance_ended", [api, web], mid),
    ]


def test_the_uptime_document_reads_the_history(page):
    page_id, api, web = page
    structure.update_component(page_id=page_id, component_id=api, now=NOW + timedelta(hours=3), status="major_outage")
    structure.update_component(page_id=page_id, component_id=api, now=NOW + timedelta(hours=9), status="operational")
    scheduled_maintenance.create_window(
        page_id=page_id,
        title="Upgrade",
        scheduled_start=NOW + timedelta(days=1),
        scheduled_end=NOW + timedelta(days=1, hours=1),
        component_ids=[web],
        now=NOW,
        settings=get_settings(),
    )
    scheduled_maintenance.run_scheduler(now=NOW + timedelta(days=1), settings=get_settings())
    view = public.load_view("acme")
    assert view is not None
    found = document(view, NOW + timedelta(days=1, minutes=30, seconds=17))
    assert (found["days"], found["start_date"], found["end_date"]) == (90, "2026-08-26", "2026-11-23")
    assert found["down_weights"] == {"major_outage": 1.0, "partial_outage": 0.3}
    first, second = found["components"]
    assert (first["component_id"], first["name"], second["name"]) == (api, "API", "Web")
    assert len(first["days"]) == 90 and first["days"][0] == {
        "date": "2026-08-26",
        "uptime_percent": None,
        "worst_status": None,
    }
    # Created at noon on the 22nd: 12 h measured, 6 h of them down.
    assert first["days"][-2] == {"date": "2026-11-22", "uptime_percent": 50.0, "worst_status": "major_outage"}
    assert first["days"][-1] == {"date": "2026-11-23", "uptime_percent": 100.0, "worst_status": "operational"}
    assert second["days"][-1] == {"date": "2026-11-23", "uptime_percent": 100.0, "worst_status": "under_maintenance"}
    # 12 h + 12 h 30 min measured (now is cut to the minute), 6 h down.
    assert first["uptime_percent"] == 75.51
    assert second["uptime_percent"] == 100.0


def test_deleting_a_page_removes_its_history(page, org):
    page_id, *_ = page
    pages.delete_page(organization_id=org.organization_id, page_id=page_id)
    assert recorded(page_id) == []
    with pytest.raises(NotFound):
        structure.list_structure(page_id=page_id)
