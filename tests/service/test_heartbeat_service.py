"""Heartbeats on moto: the sparse due index, one incident per outage however often or
concurrently the check runs (or dies halfway), the next ping resolving it, pauses, and races
between a ping, the check and an edit."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.catalog import service as catalog
from chalicelib.errors import Conflict, NotFound, ValidationFailed
from chalicelib.heartbeat import outages, overdue, ping
from chalicelib.heartbeat import repository as heartbeat_records
from chalicelib.heartbeat import service as heartbeats
from chalicelib.heartbeat.tables import DUE_SHARD, HeartbeatRecord
from chalicelib.incident import repository
from chalicelib.incident.tables import IncidentRecord, list_partition
from chalicelib.settings import get_settings
from chalicelib.workers import scheduled
from tests.conftest import NOW, Org
from tests.kit import factories

MINUTE = timedelta(minutes=1)
HTTPS = "https"


@pytest.fixture
def svc(org: Org) -> Any:
    return factories.service(org, "Backups")


def make(org: Org, svc: Any, *, interval: int = 300, grace: int = 60, **fields: Any) -> tuple[str, str]:
    """A heartbeat created at NOW; (its id, its ping token)."""
    issued = heartbeats.create_heartbeat(
        organization_id=org.organization_id,
        name=fields.pop("name", "nightly backup"),
        service_ref=fields.pop("service_ref", svc.service_id),
        interval_seconds=interval,
        grace_seconds=grace,
        now=fields.pop("now", NOW),
        **fields,
        settings=get_settings(),
    )
    return issued.record.heartbeat_id, issued.ping_url.rsplit("/", 1)[1]


def stored(heartbeat_id: str) -> HeartbeatRecord:
    record = heartbeat_records.read(heartbeat_id)
    assert record is not None
    return record


def incidents(org: Org, *, is_open: bool) -> list[IncidentRecord]:
    return list(IncidentRecord.by_list.query(list_partition(org.organization_id, is_open=is_open)))


def due_ids(now: Any) -> set[str]:
    return {key.heartbeat_id for key in HeartbeatRecord.by_due_time.query(DUE_SHARD, HeartbeatRecord.due_at <= now)}


def ping_at(token: str, at: Any) -> ping.Pinged:
    return ping.record_ping(
        record=ping.admit(token=token, forwarded_proto=HTTPS, settings=get_settings()), now=at, settings=get_settings()
    )


def race(count: int, work: Callable[[int], Any]) -> list[Any]:
    barrier = threading.Barrier(count)

    def run(index: int) -> Any:
        barrier.wait()
        return work(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return [future.result() for future in [pool.submit(run, i) for i in range(count)]]


def test_create_stores_the_service_key_and_only_a_hash_of_the_secret(org: Org, svc: Any) -> None:
    heartbeat_id, token = make(org, svc, description="every night at 2")
    record = stored(heartbeat_id)
    secret = token.split(".")[1]
    assert record.service_key == svc.service_key and record.organization_id == org.organization_id
    assert secret not in str(record.serialize())
    assert (record.state, record.enabled, record.outages, record.window_started_at) == ("waiting", True, 0, NOW)
    assert (record.due_shard, record.due_at) == (DUE_SHARD, NOW + 6 * MINUTE)
    by_key = make(org, svc, service_ref=svc.service_key, name="by key")[0]
    assert stored(by_key).service_key == svc.service_key


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"service_ref": "SER-99999"}, "service"),
        ({"service_ref": "svc_0000000000"}, "service"),
        ({"interval": 59}, "interval_seconds"),
        ({"grace": 86401}, "grace_seconds"),
    ],
)
def test_create_refuses_bad_input(org: Org, svc: Any, fields: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        make(org, svc, **fields)
    assert [f["field"] for f in refused.value.details["fields"]] == [field]  # type: ignore[index]


def test_an_inactive_service_is_refused(org: Org, svc: Any) -> None:
    catalog.update_service(organization_id=org.organization_id, service_ref=svc.service_key, now=NOW, is_active=False)
    with pytest.raises(ValidationFailed):
        make(org, svc)


def test_the_due_index_holds_only_enabled_heartbeats_awaiting_a_ping(org: Org, svc: Any) -> None:
    due, _ = make(org, svc, interval=60, grace=0, name="due")
    later, _ = make(org, svc, interval=3600, name="later")
    paused, _ = make(org, svc, interval=60, grace=0, enabled=False, name="paused")
    down, _ = make(org, svc, interval=60, grace=0, name="down")
    overdue.check_overdue(now=NOW + MINUTE, settings=get_settings())  # both 60 s heartbeats go down; "down" stays so
    assert stored(down).state == "down"
    restarted, _ = make(org, svc, interval=60, grace=0, name="due again", now=NOW + MINUTE)
    assert due_ids(NOW + 2 * MINUTE) == {restarted}
    assert stored(paused).due_at is None and stored(down).due_at is None
    assert due_ids(NOW + 2 * timedelta(hours=1)) == {restarted, later}
    assert stored(due).state == "down"


def test_an_overdue_heartbeat_opens_one_incident_however_often_the_check_runs(org: Org, svc: Any) -> None:
    heartbeat_id, _ = make(org, svc)
    assert overdue.check_overdue(now=NOW + 6 * MINUTE - timedelta(seconds=1), settings=get_settings()).opened == 0
    first = overdue.check_overdue(now=NOW + 6 * MINUTE, settings=get_settings())
    assert first.as_dict() == {"opened": 1, "lost": 0, "failed": 0}
    for minute in range(7, 10):
        assert overdue.check_overdue(now=NOW + minute * MINUTE, settings=get_settings()).opened == 0
    [opened] = incidents(org, is_open=True)
    record = stored(heartbeat_id)
    assert (record.state, record.outages, record.incident_number) == ("down", 1, opened.incident_number)
    assert record.down_since == NOW + 6 * MINUTE and record.due_at is None
    assert opened.title.startswith("Heartbeat nightly backup missed its ping")
    assert opened.service_keys == [svc.service_key]
    assert opened.source["integration_type"] == "heartbeat" and opened.source["dedup_key"] == "outage-1"
    assert opened.source["integration_id"] is None
    assert opened.source["metadata"]["heartbeat_id"] == heartbeat_id


def test_concurrent_checks_open_one_incident(org: Org, svc: Any) -> None:
    heartbeat_id, _ = make(org, svc)
    runs = race(
        6, lambda i: overdue.check_overdue(now=NOW + 6 * MINUTE + timedelta(seconds=i), settings=get_settings())
    )
    assert sum(r.opened for r in runs) == 1 and sum(r.failed for r in runs) == 0
    [opened] = incidents(org, is_open=True)
    assert stored(heartbeat_id).incident_number == opened.incident_number


def test_a_check_that_died_after_raising_the_alert_is_finished_by_the_next(org: Org, svc: Any) -> None:
    heartbeat_id, _ = make(org, svc)
    record = stored(heartbeat_id)
    first = outages.open_outage(
        record, heartbeat_records.beat_of(record), 1, NOW + 6 * MINUTE, settings=get_settings()
    )  # then "crashed"
    assert first.created and stored(heartbeat_id).state == "waiting"
    assert overdue.check_overdue(now=NOW + 7 * MINUTE, settings=get_settings()).opened == 1
    [opened] = incidents(org, is_open=True)
    assert opened.incident_number == first.incident.incident_number  # type: ignore[union-attr]
    assert opened.alert_count == 2  # the repeated trigger counted on the same incident
    assert stored(heartbeat_id).incident_number == opened.incident_number


def test_the_next_ping_resolves_the_outage(org: Org, svc: Any) -> None:
    heartbeat_id, token = make(org, svc)
    overdue.check_overdue(now=NOW + 6 * MINUTE, settings=get_settings())
    [opened] = incidents(org, is_open=True)
    at = NOW + 20 * MINUTE
    pinged = ping_at(token, at)
    assert pinged.resolved_outages == [1] and not pinged.ignored
    assert (pinged.beat.status, pinged.beat.next_due_at) == ("up", at + 5 * MINUTE)
    assert repository.get_incident(org.organization_id, opened.incident_number).status == "resolved"
    record = stored(heartbeat_id)
    assert (record.state, record.incident_number, record.down_since, record.unresolved_outages) == (
        "up",
        None,
        None,
        None,
    )
    assert (record.last_ping_at, record.due_at) == (at, at + 6 * MINUTE)
    # The next miss is a new outage with a new incident.
    assert ping_at(token, at + MINUTE).resolved_outages == []
    overdue.check_overdue(now=at + MINUTE + 6 * MINUTE, settings=get_settings())
    [second] = incidents(org, is_open=True)
    assert second.incident_number != opened.incident_number and second.source["dedup_key"] == "outage-2"
    assert stored(heartbeat_id).outages == 2


def test_a_failed_resolve_is_retried_by_the_next_ping(org: Org, svc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    heartbeat_id, token = make(org, svc)
    overdue.check_overdue(now=NOW + 6 * MINUTE, settings=get_settings())
    real_ingest = outages.ingest

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("DynamoDB went away")

    monkeypatch.setattr(outages, "ingest", failing)
    assert ping_at(token, NOW + 10 * MINUTE).resolved_outages == []  # the ping itself is recorded
    assert stored(heartbeat_id).state == "up" and stored(heartbeat_id).unresolved_outages == {1}
    assert len(incidents(org, is_open=True)) == 1
    monkeypatch.setattr(outages, "ingest", real_ingest)
    assert ping_at(token, NOW + 11 * MINUTE).resolved_outages == [1]
    assert incidents(org, is_open=True) == [] and stored(heartbeat_id).unresolved_outages is None


def test_racing_pings_after_an_outage_resolve_it_once(org: Org, svc: Any) -> None:
    heartbeat_id, token = make(org, svc)
    overdue.check_overdue(now=NOW + 6 * MINUTE, settings=get_settings())
    results = race(5, lambda i: ping_at(token, NOW + 10 * MINUTE + timedelta(seconds=i)))
    assert all(not r.ignored for r in results)
    assert incidents(org, is_open=True) == [] and len(incidents(org, is_open=False)) == 1
    record = stored(heartbeat_id)
    assert (record.state, record.outages, record.unresolved_outages) == ("up", 1, None)


@pytest.mark.parametrize("meanwhile", ["ping", "pause", "delete"])
def test_a_ping_pause_or_delete_between_the_checks_read_and_write_leaves_no_incident_open(
    org: Org, svc: Any, monkeypatch: pytest.MonkeyPatch, meanwhile: str
) -> None:
    heartbeat_id, token = make(org, svc)
    real_open = outages.open_outage

    def open_then_change(*args: Any, **kwargs: Any) -> Any:
        result = real_open(*args, **kwargs)  # lands after the check read the heartbeat
        if meanwhile == "ping":
            ping_at(token, NOW + 6 * MINUTE)
        elif meanwhile == "pause":
            heartbeats.update_heartbeat(
                organization_id=org.organization_id, heartbeat_id=heartbeat_id, now=NOW, enabled=False
            )
        else:
            heartbeats.delete_heartbeat(organization_id=org.organization_id, heartbeat_id=heartbeat_id)
        return result

    monkeypatch.setattr(outages, "open_outage", open_then_change)
    run = overdue.check_overdue(now=NOW + 6 * MINUTE, settings=get_settings())
    assert (run.opened, run.lost, run.failed) == (0, 1, 0)
    assert incidents(org, is_open=True) == [] and len(incidents(org, is_open=False)) == 1
    if meanwhile != "delete":
        record = stored(heartbeat_id)
        assert (record.state, record.outages, record.unresolved_outages) == (
            "waiting" if meanwhile == "pause" else "up",
            0,
            None,
        )


def test_an_edit_between_the_checks_read_and_write_is_kept(org: Org, svc: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    heartbeat_id, _ = make(org, svc)
    real_open = outages.open_outage

    def open_then_rename(*args: Any, **kwargs: Any) -> Any:
        result = real_open(*args, **kwargs)
        heartbeats.update_heartbeat(
            organization_id=org.organization_id, heartbeat_id=heartbeat_id, now=NOW, name="renamed", grace_seconds=30
        )
        return result

    monkeypatch.setattr(outages, "open_outage", open_then_rename)
    assert overdue.check_overdue(now=NOW + 6 * MINUTE, settings=get_settings()).opened == 1
    record = stored(heartbeat_id)
    [opened] = incidents(org, is_open=True)
    assert (record.name, record.grace_seconds, record.state, record.incident_number) == (
        "renamed",
        30,
        "down",
        opened.incident_number,
    )


def test_a_paused_heartbeat_never_fires_and_ignores_pings(org: Org, svc: Any) -> None:
    heartbeat_id, token = make(org, svc, enabled=False)
    assert overdue.check_overdue(now=NOW + timedelta(days=30), settings=get_settings()).opened == 0
    pinged = ping_at(token, NOW + MINUTE)
    assert pinged.ignored and pinged.beat.status == "paused" and pinged.beat.next_due_at is None
    record = stored(heartbeat_id)
    assert (record.last_ping_at, record.state) == (None, "waiting")
    # Paused while up: leaves the due index; resumed: a new wait from the resume.
    resumed = heartbeats.update_heartbeat(
        organization_id=org.organization_id, heartbeat_id=heartbeat_id, now=NOW + timedelta(days=1), enabled=True
    )
    assert resumed.due_at == NOW + timedelta(days=1) + 6 * MINUTE
    assert incidents(org, is_open=True) == []


def test_a_refused_alert_still_records_the_outage(org: Org, svc: Any) -> None:
    heartbeat_id, token = make(org, svc)
    catalog.update_service(organization_id=org.organization_id, service_ref=svc.service_key, now=NOW, is_active=False)
    assert overdue.check_overdue(now=NOW + 6 * MINUTE, settings=get_settings()).as_dict() == {
        "opened": 1,
        "lost": 0,
        "failed": 0,
    }
    record = stored(heartbeat_id)
    assert (record.state, record.incident_number) == ("down", None)
    assert incidents(org, is_open=True) == []
    assert ping_at(token, NOW + 7 * MINUTE).beat.status == "up"  # the resolve finds nothing: fine


def test_update_is_conditional_on_the_version_given(org: Org, svc: Any) -> None:
    heartbeat_id, token = make(org, svc)
    ping_at(token, NOW + MINUTE)  # pings do not bump the version
    record = stored(heartbeat_id)
    assert record.version == 1
    updated = heartbeats.update_heartbeat(
        organization_id=org.organization_id,
        heartbeat_id=heartbeat_id,
        now=NOW,
        expected_version=1,
        interval_seconds=600,
    )
    assert (updated.version, updated.due_at) == (2, NOW + MINUTE + 11 * MINUTE)
    with pytest.raises(Conflict):
        heartbeats.update_heartbeat(
            organization_id=org.organization_id, heartbeat_id=heartbeat_id, now=NOW, expected_version=1, name="x"
        )
    with pytest.raises(NotFound):
        heartbeats.update_heartbeat(organization_id="other-org", heartbeat_id=heartbeat_id, now=NOW, name="x")


def test_regenerate_and_delete_end_the_old_url(org: Org, svc: Any) -> None:
    heartbeat_id, token = make(org, svc)
    issued = heartbeats.regenerate_ping_url(
        organization_id=org.organization_id, heartbeat_id=heartbeat_id, now=NOW, settings=get_settings()
    )
    with pytest.raises(NotFound):
        ping_at(token, NOW)
    new_token = issued.ping_url.rsplit("/", 1)[1]
    assert ping_at(new_token, NOW).beat.status == "up"
    heartbeats.delete_heartbeat(organization_id=org.organization_id, heartbeat_id=heartbeat_id)
    with pytest.raises(NotFound):
        ping_at(new_token, NOW)
    with pytest.raises(NotFound):
        heartbeats.delete_heartbeat(organization_id=org.organization_id, heartbeat_id=heartbeat_id)


def test_a_url_regenerated_while_a_ping_is_on_its_way_stops_at_once(org: Org, svc: Any) -> None:
    heartbeat_id, token = make(org, svc)
    admitted = ping.admit(token=token, forwarded_proto=HTTPS, settings=get_settings())  # the ping's read
    # Between the ping's read and its write (while the pipeline charges its bucket).
    heartbeats.regenerate_ping_url(
        organization_id=org.organization_id, heartbeat_id=heartbeat_id, now=NOW, settings=get_settings()
    )
    with pytest.raises(NotFound):
        ping.record_ping(record=admitted, now=NOW + MINUTE, settings=get_settings())
    assert (stored(heartbeat_id).state, stored(heartbeat_id).last_ping_at) == ("waiting", None)


def test_the_scheduled_entry_point_reads_the_clock_and_fails_loudly(
    org: Org, svc: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    make(org, svc)
    with clock.frozen(NOW + 6 * MINUTE):
        assert scheduled.check_heartbeats({"detail-type": "Scheduled Event"}) == {"opened": 1, "lost": 0, "failed": 0}
    make(org, svc, name="second")

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(outages, "open_outage", broken)
    with clock.frozen(NOW + 6 * MINUTE), pytest.raises(overdue.HeartbeatCheckFailed, match="1 heartbeat"):
        scheduled.check_heartbeats({})


def test_the_local_runner_calls_the_check_like_eventbridge(org: Org, svc: Any) -> None:
    from chalice.app import ScheduledEventConfig

    from app import app
    from chalicelib.local.worker_loop import ScheduleWorker

    make(org, svc)
    [config] = [s for s in app.event_sources if isinstance(s, ScheduledEventConfig) and s.name == "check-heartbeats"]
    stop = threading.Event()
    stop.set()  # build the worker without starting a loop that outlives the test
    with clock.frozen(NOW + 6 * MINUTE):
        assert ScheduleWorker(config, stop, interval=15).run_once()["opened"] == 1
    assert len(incidents(org, is_open=True)) == 1
