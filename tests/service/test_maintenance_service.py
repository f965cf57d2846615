"""Maintenance windows on moto: `window_in_effect` at its boundaries (exactly at start, at end,
several windows, other services, another organization), one Query per call, and the window and
its per-service items always written together (create, update, delete, a lost race)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from pynamodb.connection.base import Connection

from chalicelib.catalog import service as services
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.maintenance import repository
from chalicelib.maintenance import service as maintenance
from chalicelib.maintenance.in_effect import window_in_effect
from chalicelib.maintenance.tables import MaintenanceMembershipRecord
from chalicelib.store import RetryableConflict
from tests.conftest import NOW, Org, make_org

HOUR = timedelta(hours=1)
TINY = timedelta(microseconds=1)


@pytest.fixture
def world(org: Org) -> dict[str, Any]:
    oid = org.organization_id
    db = services.create_service(organization_id=oid, name="Database", now=NOW)
    web = services.create_service(organization_id=oid, name="Web", now=NOW)
    return {"oid": oid, "db": db, "web": web}


def _window(world: dict[str, Any], *names: str, start: Any, end: Any, now: Any = NOW, **extra: Any) -> Any:
    refs = [world[name].service_key for name in names] or [world["db"].service_key]
    return maintenance.create_window(
        organization_id=world["oid"], service_refs=refs, start=start, end=end, now=now, **extra
    )


def _in_effect(world: dict[str, Any], name: str, at: Any) -> Any:
    return window_in_effect(organization_id=world["oid"], service_key=world[name].service_key, now=at)


def _memberships() -> set[tuple[str, str, str]]:
    return {
        (m.service_partition.split("#")[1], m.window_id, m.end_and_window) for m in MaintenanceMembershipRecord.scan()
    }


# --- window_in_effect ------------------------------------------------------------------------------


def test_no_window_no_maintenance(world: dict[str, Any]) -> None:
    assert _in_effect(world, "db", NOW) is None


def test_boundaries_start_included_end_excluded(world: dict[str, Any]) -> None:
    start, end = NOW + HOUR, NOW + 3 * HOUR
    window = _window(world, "db", start=start, end=end, description="Disk swap")
    assert _in_effect(world, "db", start - TINY) is None
    found = _in_effect(world, "db", start)
    assert found is not None
    assert (found.window_id, found.description, found.start_at, found.end_at) == (
        window.window_id,
        "Disk swap",
        start,
        end,
    )
    assert _in_effect(world, "db", end - TINY) is not None
    assert _in_effect(world, "db", end) is None
    assert _in_effect(world, "db", end + HOUR) is None


def test_only_the_windows_services_and_organization(world: dict[str, Any]) -> None:
    window = _window(world, "db", start=NOW, end=NOW + HOUR)
    assert _in_effect(world, "web", NOW) is None
    # Another organization with a service of the very same key: its own windows only.
    other = make_org("Other")
    same_key = services.create_service(
        organization_id=other.organization_id, name="Database", now=NOW, service_key=world["db"].service_key
    )
    assert window_in_effect(organization_id=other.organization_id, service_key=same_key.service_key, now=NOW) is None
    assert _in_effect(world, "db", NOW).window_id == window.window_id


def test_several_windows_the_one_ending_last_wins(world: dict[str, Any]) -> None:
    short = _window(world, "db", start=NOW, end=NOW + HOUR)
    long = _window(world, "db", "web", start=NOW, end=NOW + 5 * HOUR)
    later = _window(world, "db", start=NOW + 2 * HOUR, end=NOW + 9 * HOUR)  # not started at NOW
    assert _in_effect(world, "db", NOW).window_id == long.window_id
    assert _in_effect(world, "db", NOW + 2 * HOUR).window_id == later.window_id
    assert _in_effect(world, "web", NOW + HOUR).window_id == long.window_id
    assert _in_effect(world, "db", NOW + 5 * HOUR).window_id == later.window_id
    maintenance.delete_window(organization_id=world["oid"], window_id=long.window_id, now=NOW + HOUR / 2)
    assert _in_effect(world, "db", NOW + HOUR / 2).window_id == short.window_id


def test_one_query_per_call(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for hours in range(1, 5):
        _window(world, "db", start=NOW + hours * HOUR, end=NOW + (hours + 1) * HOUR)
    calls: list[str] = []
    original = Connection.dispatch

    def dispatch(self: Connection, operation_name: str, operation_kwargs: Any) -> Any:
        calls.append(operation_name)
        return original(self, operation_name, operation_kwargs)

    monkeypatch.setattr(Connection, "dispatch", dispatch)
    assert _in_effect(world, "db", NOW + 2 * HOUR) is not None
    assert calls == ["Query"]


# --- writes keep window and memberships together ----------------------------------------------------


def test_create_writes_one_membership_per_service(world: dict[str, Any]) -> None:
    window = _window(world, "db", "web", start=NOW - HOUR, end=NOW + HOUR)
    assert window.start == NOW  # a start in the past means now
    assert window.version == 1
    assert {(key, wid) for key, wid, _ in _memberships()} == {
        (world["db"].service_key, window.window_id),
        (world["web"].service_key, window.window_id),
    }


def test_unknown_services_are_named(world: dict[str, Any]) -> None:
    with pytest.raises(ValidationFailed) as raised:
        maintenance.create_window(
            organization_id=world["oid"],
            service_refs=["SER-00001", "SER-00042", "svc_zzzzzzzzzz"],
            start=NOW,
            end=NOW + HOUR,
            now=NOW,
        )
    assert raised.value.details == {
        "fields": [
            {"field": "service_ids.1", "message": "no such service in this organization: SER-00042"},
            {"field": "service_ids.2", "message": "no such service in this organization: svc_zzzzzzzzzz"},
        ]
    }
    assert "SER-00042" in raised.value.message and "svc_zzzzzzzzzz" in raised.value.message
    assert _memberships() == set()


def test_a_service_named_twice_counts_once(world: dict[str, Any]) -> None:
    db = world["db"]
    window = maintenance.create_window(
        organization_id=world["oid"],
        service_refs=[db.service_id.lower(), db.service_key, world["web"].service_id],
        start=NOW,
        end=NOW + HOUR,
        now=NOW,
    )
    assert window.service_keys == (db.service_key, world["web"].service_key)


def test_update_moves_and_replaces_memberships(world: dict[str, Any]) -> None:
    window = _window(world, "db", start=NOW + HOUR, end=NOW + 2 * HOUR)
    updated = maintenance.update_window(
        organization_id=world["oid"],
        window_id=window.window_id,
        now=NOW,
        start=NOW + 3 * HOUR,
        end=NOW + 4 * HOUR,
        service_refs=[world["web"].service_id],
        description="Moved",
    )
    assert (updated.start, updated.end, updated.service_keys, updated.version) == (
        NOW + 3 * HOUR,
        NOW + 4 * HOUR,
        (world["web"].service_key,),
        2,
    )
    assert [key for key, _, _ in _memberships()] == [world["web"].service_key]
    assert _in_effect(world, "db", NOW + HOUR) is None
    assert _in_effect(world, "web", NOW + 3 * HOUR).description == "Moved"


def test_update_rules(world: dict[str, Any]) -> None:
    ongoing = _window(world, "db", start=NOW, end=NOW + HOUR)
    with pytest.raises(Conflict):
        maintenance.update_window(organization_id=world["oid"], window_id=ongoing.window_id, now=NOW, start=NOW + HOUR)
    extended = maintenance.update_window(
        organization_id=world["oid"], window_id=ongoing.window_id, now=NOW + HOUR / 2, end=NOW + 2 * HOUR
    )
    assert extended.end == NOW + 2 * HOUR
    with pytest.raises(ValidationFailed):  # an end already behind
        maintenance.update_window(
            organization_id=world["oid"], window_id=ongoing.window_id, now=NOW + HOUR, end=NOW + HOUR / 2
        )
    with pytest.raises(Conflict):  # past windows are history
        maintenance.update_window(
            organization_id=world["oid"], window_id=ongoing.window_id, now=NOW + 3 * HOUR, description="late"
        )
    with pytest.raises(NotFound):
        maintenance.update_window(organization_id=world["oid"], window_id="mw_" + "0" * 32, now=NOW, description="x")


def test_a_stale_version_is_a_conflict_and_writes_nothing(world: dict[str, Any]) -> None:
    window = _window(world, "db", start=NOW + HOUR, end=NOW + 2 * HOUR)
    maintenance.update_window(organization_id=world["oid"], window_id=window.window_id, now=NOW, description="one")
    before = _memberships()
    with pytest.raises(Conflict) as raised:
        maintenance.update_window(
            organization_id=world["oid"],
            window_id=window.window_id,
            now=NOW,
            expected_version=1,
            service_refs=[world["web"].service_key],
        )
    assert raised.value.details == {"expected_version": 1, "current_version": 2}
    assert _memberships() == before


def test_a_lost_race_writes_neither_window_nor_memberships(world: dict[str, Any]) -> None:
    window = _window(world, "db", start=NOW + HOUR, end=NOW + 2 * HOUR)
    stale = repository.get_record(world["oid"], window.window_id, consistent=True)
    maintenance.update_window(organization_id=world["oid"], window_id=window.window_id, now=NOW, description="won")
    before = _memberships()
    old = repository.memberships_of(stale, NOW)
    stale.ends_at = NOW + 5 * HOUR
    stale.service_keys = [world["web"].service_key]  # type: ignore[assignment]
    with pytest.raises(RetryableConflict):
        repository.commit(window=stale, before=old, after=repository.memberships_of(stale, NOW))
    assert _memberships() == before
    assert maintenance.get_window(organization_id=world["oid"], window_id=window.window_id).description == "won"


def test_racing_updates_without_a_version_both_land(world: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    window = _window(world, "db", start=NOW + HOUR, end=NOW + 2 * HOUR)
    original = repository.get_record
    raced = []

    def get_record(organization_id: str, window_id: str, *, consistent: bool = False) -> Any:
        record = original(organization_id, window_id, consistent=consistent)
        if consistent and not raced:  # another writer lands between this read and its write
            raced.append(True)
            maintenance.update_window(organization_id=organization_id, window_id=window_id, now=NOW, end=NOW + 3 * HOUR)
        return record

    monkeypatch.setattr(repository, "get_record", get_record)
    updated = maintenance.update_window(
        organization_id=world["oid"], window_id=window.window_id, now=NOW, description="mine"
    )
    assert (updated.description, updated.end, updated.version) == ("mine", NOW + 3 * HOUR, 3)
    assert {end for _, _, end in _memberships()} == {f"2026-11-22T15:00:00.000000Z#{window.window_id}"}


def test_delete_future_removes_it_and_its_memberships(world: dict[str, Any]) -> None:
    window = _window(world, "db", "web", start=NOW + HOUR, end=NOW + 2 * HOUR)
    removal = maintenance.delete_window(organization_id=world["oid"], window_id=window.window_id, now=NOW)
    assert (removal.outcome, removal.window) == ("deleted", None)
    assert _memberships() == set()
    with pytest.raises(NotFound):
        maintenance.get_window(organization_id=world["oid"], window_id=window.window_id)
    with pytest.raises(NotFound):
        maintenance.delete_window(organization_id=world["oid"], window_id=window.window_id, now=NOW)


def test_delete_ongoing_ends_it_now(world: dict[str, Any]) -> None:
    window = _window(world, "db", start=NOW, end=NOW + 2 * HOUR)
    later = NOW + HOUR
    removal = maintenance.delete_window(organization_id=world["oid"], window_id=window.window_id, now=later)
    assert removal.outcome == "ended" and removal.window is not None
    assert (removal.window.end, removal.window.ended_early_at, removal.window.state(later)) == (later, later, "past")
    assert _memberships() == set()
    assert _in_effect(world, "db", later) is None
    again = maintenance.delete_window(organization_id=world["oid"], window_id=window.window_id, now=later + HOUR)
    assert (again.outcome, again.window) == ("ended", removal.window)
    listed = maintenance.list_windows(organization_id=world["oid"], now=later, state="past")
    assert [w.window_id for w in listed] == [window.window_id]


def test_a_window_that_ended_by_itself_cannot_be_deleted(world: dict[str, Any]) -> None:
    window = _window(world, "db", start=NOW, end=NOW + HOUR)
    with pytest.raises(Conflict):
        maintenance.delete_window(organization_id=world["oid"], window_id=window.window_id, now=NOW + HOUR)


def test_list_filters_and_order(world: dict[str, Any]) -> None:
    past = _window(world, "db", start=NOW, end=NOW + HOUR)
    ongoing = _window(world, "web", start=NOW, end=NOW + 4 * HOUR)
    future = _window(world, "db", start=NOW + 3 * HOUR, end=NOW + 5 * HOUR)
    at = NOW + 2 * HOUR
    listed = maintenance.list_windows(organization_id=world["oid"], now=at)
    assert [w.window_id for w in listed] == [ongoing.window_id, future.window_id, past.window_id]
    by_service = maintenance.list_windows(organization_id=world["oid"], now=at, service_ref=world["db"].service_id)
    assert [w.window_id for w in by_service] == [future.window_id, past.window_id]
    open_ones = maintenance.list_windows(organization_id=world["oid"], now=at, state="open")
    assert [w.window_id for w in open_ones] == [ongoing.window_id, future.window_id]
    assert maintenance.list_windows(organization_id=world["oid"], now=at, service_ref="SER-09999") == []
    assert maintenance.list_windows(organization_id=make_org("Other").organization_id, now=at) == []
