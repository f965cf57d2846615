"""The insights rollups on moto: each happening counted once (redeliveries, racing consumers),
reopen undoing its resolution, and the rebuild agreeing with what the consumers wrote."""

from __future__ import annotations

import io
import json
from datetime import timedelta

from chalicelib import cli
from chalicelib.insights import rebuild, rollups, writer
from chalicelib.insights.rollups import IncidentFacts
from chalicelib.insights.tables import RollupRecord
from tests.conftest import NOW, Org
from tests.kit import factories as make
from tests.service.insights_history import acknowledge, feed_rollups, move

OPENED = NOW.replace(hour=9)


def items(org: Org, kind: str, month=OPENED) -> dict[str, dict[str, int]]:
    partition = rollups.partition(org.organization_id, kind, month)
    return {record.slot: record.counters() for record in RollupRecord.query(partition)}


def totals(org: Org) -> dict[str, dict[str, int]]:
    partition = rollups.total_partition(org.organization_id)
    return {record.slot: record.counters() for record in RollupRecord.query(partition)}


def test_a_happening_applied_twice_counts_once(org: Org) -> None:
    facts = IncidentFacts("INC-2026-0001", OPENED, "SEV2", "high", ("svc_a",), None)
    happening = rollups.opened(org.organization_id, facts)
    assert writer.apply(happening, now=NOW) is True
    assert writer.apply(happening, now=NOW) is False
    assert items(org, "all") == {"2026-11-22T09#-": {"opened": 1}}
    assert totals(org) == {"service_severity#svc_a|SEV2": {"opened": 1}}


def test_consumers_count_opened_acknowledged_resolved_once_however_often_delivered(org: Org) -> None:
    ana = make.person(org, "Ana")
    svc = make.service(org, "Checkout")
    first = make.incident(org, svc, severity="SEV2", now=OPENED)
    second = make.incident(org, svc, severity="SEV2", now=OPENED + timedelta(minutes=20))
    acknowledge(org.organization_id, first.incident_number, ana, OPENED + timedelta(minutes=2))
    move(org.organization_id, first.incident_number, "resolved", ana, OPENED + timedelta(hours=1))
    feed_rollups(times=3)
    hour = items(org, "all")["2026-11-22T09#-"]
    assert hour["opened"] == 2
    assert (hour["acked"], hour["ack_s"], hour["ah20"]) == (1, 120, 1)
    assert (hour["resolved"], hour["res_s"]) == (1, 3600)
    person = items(org, "person")
    assert person["2026-11-22T09#" + ana.user_id] == {"p_acked": 1}
    assert person["2026-11-22T10#" + ana.user_id] == {"p_resolved": 1}
    assert items(org, "service")[f"2026-11-22T09#{svc.service_key}"]["opened"] == 2
    assert second.incident_number != first.incident_number


def test_a_reopen_undoes_the_resolution_and_the_next_resolution_counts(org: Org) -> None:
    ana = make.person(org, "Ana")
    opened = make.incident(org, now=OPENED)
    number = opened.incident_number
    move(org.organization_id, number, "resolved", ana, OPENED + timedelta(minutes=10))
    move(org.organization_id, number, "investigating", ana, OPENED + timedelta(minutes=15))
    move(org.organization_id, number, "resolved", ana, OPENED + timedelta(minutes=30))
    feed_rollups(times=2)
    hour = items(org, "all")["2026-11-22T09#-"]
    assert (hour["resolved"], hour["res_s"]) == (1, 1800)
    assert rollups.histogram_of("rh", hour) == {36: 1}  # (1500, 1800]
    # Ana resolved it twice (the reopen cleared who resolved, the messages still name her).
    assert items(org, "person") == {f"2026-11-22T09#{ana.user_id}": {"p_resolved": 2}}


def test_rebuild_recomputes_what_the_consumers_wrote_and_repairs_a_damaged_item(org: Org) -> None:
    ana = make.person(org, "Ana")
    svc = make.service(org, "Checkout")
    for minutes in (0, 30, 90):
        made = make.incident(org, svc, now=OPENED + timedelta(minutes=minutes))
        acknowledge(org.organization_id, made.incident_number, ana, OPENED + timedelta(minutes=minutes + 3))
    feed_rollups()
    before = {kind: items(org, kind) for kind in ("all", "service", "person")}
    broken = RollupRecord(rollups.partition(org.organization_id, "all", OPENED), "2026-11-22T09#-")
    broken.update(actions=[RollupRecord.counter("opened").set(40), RollupRecord.counter("ah60").set(1)])
    out = io.StringIO()
    assert cli.main(["insights-rebuild", "--org", org.organization_id, "--since", "2026-11-22"], out=out) == 0
    assert json.loads(out.getvalue())["items_written"] == 1
    assert {kind: items(org, kind) for kind in ("all", "service", "person")} == before
    again = rebuild.rebuild(org.organization_id, since=OPENED.replace(hour=0), until=NOW + timedelta(days=1))
    assert again["items_written"] == 0


def test_rebuild_of_the_whole_history_recomputes_the_totals(org: Org) -> None:
    made = make.incident(org, severity="SEV3", now=OPENED)
    feed_rollups()
    key = f"service_severity#{made.service_keys[0]}|SEV3"
    RollupRecord(rollups.total_partition(org.organization_id), key).update(
        actions=[RollupRecord.counter("opened").set(9)]
    )
    rebuild.rebuild(org.organization_id, since=None, until=NOW + timedelta(days=1))
    assert totals(org)[key] == {"opened": 1}
