"""The Opsgenie drop-in's items on moto: tiny ids (one per alert, never shared, a racing second
write losing), request outcomes and their expiry, and finding heartbeats by name."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.heartbeat import service as heartbeats
from chalicelib.integration.parsers.opsgenie import OpsgenieFields
from chalicelib.opsgenie import repository
from chalicelib.opsgenie.repository import Outcome
from chalicelib.opsgenie.tables import OpsgenieAlertRecord, OpsgenieTinyRecord, tiny_item_key
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org

FIELDS = OpsgenieFields(
    alias="db/disk", priority="P2", tags=("env:prod",), responders=({"type": "team", "name": "DBA"},)
)
ALERT_IDS = [f"alr_{n:032x}" for n in range(1, 9)]


def remember(org: Org, alert_id: str, fields: OpsgenieFields = FIELDS) -> OpsgenieAlertRecord:
    return repository.remember_alert(organization_id=org.organization_id, alert_id=alert_id, fields=fields, now=NOW)


def test_each_alert_gets_the_next_tiny_id_once(org: Org) -> None:
    first, second = remember(org, ALERT_IDS[0]), remember(org, ALERT_IDS[1])
    assert (int(first.tiny_id), int(second.tiny_id)) == (1, 2)
    again = remember(org, ALERT_IDS[0], OpsgenieFields(alias="other"))
    assert (int(again.tiny_id), again.alias, list(again.tags)) == (1, "db/disk", ["env:prod"])  # kept as first written
    assert again.responders == [{"type": "team", "name": "DBA"}]
    assert repository.alert_of_tiny(org.organization_id, 2, now=NOW) == ALERT_IDS[1]
    assert repository.alert_of_tiny(org.organization_id, 3, now=NOW) is None


def test_tiny_ids_are_per_organization(org: Org) -> None:
    from tests.conftest import make_org

    other = make_org("Other")
    remember(org, ALERT_IDS[0])
    assert int(remember(other, ALERT_IDS[1]).tiny_id) == 1
    assert repository.alert_of_tiny(other.organization_id, 1, now=NOW) == ALERT_IDS[1]
    assert repository.alert_of_tiny(org.organization_id, 1, now=NOW) == ALERT_IDS[0]


def test_a_racing_second_write_loses_and_its_number_is_never_used(org: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    winner = remember(org, ALERT_IDS[0])
    real_read, reads = repository.read_alert, []

    def read_before_the_winner_wrote(*args: Any, **kwargs: Any) -> OpsgenieAlertRecord | None:
        reads.append(args)
        return None if len(reads) == 1 else real_read(*args, **kwargs)

    monkeypatch.setattr(repository, "read_alert", read_before_the_winner_wrote)
    lost = remember(org, ALERT_IDS[0], OpsgenieFields(alias="late"))
    assert len(reads) == 2  # the transaction lost on the record, then read the winner's
    assert (int(lost.tiny_id), lost.alias) == (int(winner.tiny_id), "db/disk")
    with pytest.raises(OpsgenieTinyRecord.DoesNotExist):
        OpsgenieTinyRecord.get(tiny_item_key(org.organization_id, 2))


def test_concurrent_creates_of_many_alerts_never_share_a_tiny_id(org: Org) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        made = list(pool.map(lambda alert_id: remember(org, alert_id), ALERT_IDS))
    tiny_ids = sorted(int(record.tiny_id) for record in made)
    assert tiny_ids == list(range(1, len(ALERT_IDS) + 1))
    for record in made:
        assert repository.alert_of_tiny(org.organization_id, int(record.tiny_id), now=NOW) == record.alert_id


def test_an_alerts_record_lives_as_long_as_the_alert(org: Org) -> None:
    remember(org, ALERT_IDS[0])
    later = NOW + timedelta(days=181)
    assert repository.read_alert(org.organization_id, ALERT_IDS[0], now=later) is None
    assert repository.alert_of_tiny(org.organization_id, 1, now=later) is None


def test_requests_are_kept_seven_days(org: Org) -> None:
    outcome = Outcome("Create", True, "Created alert", ALERT_IDS[0], "db/disk")
    repository.record_request(
        organization_id=org.organization_id, integration_id="int-1", request_id="r-1", outcome=outcome, now=NOW
    )
    found = repository.read_request(org.organization_id, "r-1", now=NOW + timedelta(days=7) - timedelta(seconds=1))
    assert found is not None
    assert (found.action, found.success, found.status, found.alert_id, found.alias) == (
        "Create",
        True,
        "Created alert",
        ALERT_IDS[0],
        "db/disk",
    )
    assert repository.read_request(org.organization_id, "r-1", now=NOW + timedelta(days=7)) is None
    assert repository.read_request("another-org", "r-1", now=NOW) is None


def _heartbeat(org: Org, service: Any, name: str) -> str:
    issued = heartbeats.create_heartbeat(
        organization_id=org.organization_id,
        name=name,
        service_ref=service.service_key,
        interval_seconds=300,
        grace_seconds=60,
        now=NOW,
        settings=get_settings(),
    )
    return str(issued.record.heartbeat_id)


def test_heartbeats_by_name(org: Org) -> None:
    from chalicelib.catalog import service as catalog

    svc = catalog.create_service(organization_id=org.organization_id, name="Backups", now=NOW)
    exact = _heartbeat(org, svc, "Nightly")
    other_case = _heartbeat(org, svc, "nightly")
    twin = _heartbeat(org, svc, "Nightly")

    def found(name: str) -> list[str]:
        return [r.heartbeat_id for r in heartbeats.find_by_name(organization_id=org.organization_id, name=name)]

    assert sorted(found("Nightly")) == sorted([exact, twin])
    assert found("nightly") == [other_case]
    assert sorted(found("NIGHTLY")) == sorted([exact, other_case, twin])
    assert found("Weekly") == []
