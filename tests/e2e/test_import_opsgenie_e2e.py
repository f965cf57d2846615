"""`tocsin import opsgenie` against the real local stack and a stand-in for Opsgenie's REST API
holding a real-sized account: --plan changes nothing; --apply, through a 429 it waits out,
brings everything over; at ten instants over the next four weeks Tocsin's on-call person is one
of those Opsgenie has on call (Opsgenie puts every rotation's person on call at once); escalation
delays, counted by Opsgenie from the alert's creation, become the same moments in Tocsin; an
alert through an imported integration opens an incident on the team's service and pages the
person on call; heartbeats wait paused for the cut-over; a second apply changes nothing."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import requests

from tests.e2e.conftest import LocalStack
from tests.importers import e2e_kit, opsgenie_account
from tests.importers.standin_opsgenie import OpsgenieStandIn

KEY = "og-e2e-key"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from e2e_kit.import_stack(tmp_path_factory)


@pytest.fixture(scope="module")
def vendor() -> Iterator[OpsgenieStandIn]:
    server = OpsgenieStandIn(opsgenie_account.account(datetime.now(UTC)), KEY).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def checker(stack: LocalStack) -> e2e_kit.Checker:
    return e2e_kit.Checker(stack)


def run(stack: LocalStack, vendor: OpsgenieStandIn, *args: str, key: str = KEY) -> subprocess.CompletedProcess[str]:
    return e2e_kit.tocsin(
        stack, "import", "opsgenie", *args, env={"OPSGENIE_API_KEY": key, "OPSGENIE_API_URL": vendor.base_url}
    )


def vendor_on_call(vendor: OpsgenieStandIn, schedule_id: str, moment: datetime) -> list[str]:
    answer = requests.get(
        f"{vendor.base_url}/v2/schedules/{schedule_id}/on-calls",
        params={"date": e2e_kit.iso(moment), "flat": "true"},
        headers={"Authorization": f"GenieKey {KEY}"},
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"]["onCallRecipients"])


def test_import_matches_opsgenie_and_a_second_apply_changes_nothing(
    stack: LocalStack, vendor: OpsgenieStandIn, checker: e2e_kit.Checker
) -> None:
    planned = e2e_kit.json_out(run(stack, vendor, "--plan", "--json"))
    assert planned["changes_pending"] is True and planned["summary"]["create"] >= 140
    assert e2e_kit.imported(checker, "opsgenie", "schedule") == {}

    vendor.throttle.append(1)
    first = len(vendor.seen)
    applied = e2e_kit.json_out(run(stack, vendor, "--apply", "--json"))
    assert [seen.status for seen in vendor.seen[first : first + 2]] == [429, 200]
    assert {beat["enabled"] for beat in applied["cutover"]["heartbeats"]} == {False}
    assert len(applied["cutover"]["senders"]) == 36

    schedules = e2e_kit.imported(checker, "opsgenie", "schedule")
    assert len(schedules) == 10
    exact = 0
    for moment in e2e_kit.instants():
        for vendor_id, tocsin_id in schedules.items():
            expected = vendor_on_call(vendor, vendor_id, moment)
            got = e2e_kit.tocsin_on_call(checker, tocsin_id, moment)
            assert (got in expected) if expected else got is None, (vendor_id, moment, expected, got)
            exact += len(expected) == 1
    assert exact > 0

    policies = e2e_kit.imported(checker, "opsgenie", "escalation_policy")
    for raw in vendor.account["escalations"]:
        policy = checker.get(f"/api/v1/escalation-policies/{policies[raw['id']]}")
        starts = sorted({rule["delay"]["timeAmount"] for rule in raw["rules"]})
        reached = [sum(level["delay_minutes"] for level in policy["levels"][:n]) for n in range(len(policy["levels"]))]
        assert reached == starts  # each level is notified when Opsgenie notifies its rules
        assert policy["repeat_count"] == (raw.get("repeat") or {}).get("count", 0)

    again = run(stack, vendor, "--apply")
    assert again.returncode == 0, again.stderr
    assert "Nothing to do: a second import of the same Opsgenie setup changes nothing." in again.stdout


def test_an_alert_through_an_imported_integration_pages_the_team_on_call(
    stack: LocalStack, vendor: OpsgenieStandIn, checker: e2e_kit.Checker
) -> None:
    applied = e2e_kit.json_out(run(stack, vendor, "--apply", "--json"))
    senders = {s["vendor_id"]: s for s in applied["cutover"]["senders"]}
    prometheus = senders["og-int-001"]  # Search's Prometheus: its team routes to its escalation
    key = prometheus["routing_key"]
    if key is None:
        key = checker.post(f"/api/v1/integrations/{prometheus['integration_id']}/regenerate")["routing_key"]
    title = "Imported: search latency"
    if prometheus["type"] == "opsgenie":  # the drop-in: Alertmanager's opsgenie_configs as they are
        sent = requests.post(
            f"{stack.base_url}/v2/alerts",
            headers={"Authorization": f"GenieKey {key}"},
            json={"message": title, "alias": "search-latency", "priority": "P1"},
            timeout=30,
        )
    else:  # no drop-in on this server: Alertmanager's webhook receiver
        assert prometheus["type"] == "alertmanager"
        alert = {
            "status": "firing",
            "labels": {"alertname": "SearchLatency", "severity": "critical"},
            "annotations": {"summary": title},
            "startsAt": e2e_kit.iso(datetime.now(UTC)),
        }
        sent = requests.post(
            f"{stack.base_url}/webhooks/{key}",
            timeout=30,
            json={
                "version": "4",
                "status": "firing",
                "receiver": "tocsin",
                "groupKey": '{}:{alertname="SearchLatency"}',
                "commonLabels": alert["labels"],
                "commonAnnotations": alert["annotations"],
                "alerts": [alert],
            },
        )
    assert sent.status_code in (200, 201, 202), sent.text
    incident = e2e_kit.incident_titled(checker, title)
    assert incident["team"]["name"] == "Search"
    routed = next(e for e in vendor.account["escalations"] if e["ownerTeam"]["name"] == "Search")
    first = routed["rules"][0]["recipient"]
    assert first["type"] == "schedule"
    on_call = vendor_on_call(vendor, first["id"], datetime.now(UTC))
    assert incident["assigned_to"]["email"] in on_call
    person = next(u for u in vendor.account["users"] if u["username"] == incident["assigned_to"]["email"])
    assert f"Paged {person['fullName']} by email" in [entry["title"] for entry in incident["timeline"]]
