"""`tocsin import pagerduty` against the real local stack and a stand-in for PagerDuty's REST API
(HTTPS, a private CA) holding a real-sized account: --plan changes nothing; --apply, through a
429 it waits out, brings everything over; who is on call at ten instants over the next four weeks
is whoever PagerDuty says; escalation levels and delays are PagerDuty's; an event sent to the
Events API v2 drop-in with an imported routing key opens an incident on the imported service
and pages the person on call; a second apply changes nothing; a refused token is one line."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import requests

from tests.e2e.conftest import LocalStack
from tests.importers import e2e_kit, pagerduty_account, tls
from tests.importers.standin_pagerduty import PagerDutyStandIn

TOKEN = "pd-e2e-token"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    yield from e2e_kit.import_stack(tmp_path_factory)


@pytest.fixture(scope="module")
def vendor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PagerDutyStandIn]:
    certificates = tls.make(tmp_path_factory.mktemp("tls"))
    server = PagerDutyStandIn(pagerduty_account.account(datetime.now(UTC)), certificates, TOKEN).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def checker(stack: LocalStack) -> e2e_kit.Checker:
    return e2e_kit.Checker(stack)


def run(
    stack: LocalStack, vendor: PagerDutyStandIn, *args: str, token: str = TOKEN
) -> subprocess.CompletedProcess[str]:
    assert vendor.tls is not None
    return e2e_kit.tocsin(
        stack,
        "import",
        "pagerduty",
        *args,
        "--pagerduty-url",
        vendor.base_url,
        env={"PAGERDUTY_API_TOKEN": token, **e2e_kit.trusting(vendor.tls.ca_path)},
    )


def vendor_get(vendor: PagerDutyStandIn, path: str, **params: object) -> dict[str, object]:
    assert vendor.tls is not None
    answer = requests.get(
        vendor.base_url + path,
        params=params,
        headers={"Authorization": f"Token token={TOKEN}"},
        verify=str(vendor.tls.ca_path),
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def vendor_on_call(vendor: PagerDutyStandIn, schedule_id: str, moment: datetime) -> str | None:
    stamp = e2e_kit.iso(moment)
    found = vendor_get(vendor, "/oncalls", **{"schedule_ids[]": schedule_id, "since": stamp, "until": stamp})
    oncalls = found["oncalls"]
    assert isinstance(oncalls, list)
    return str(vendor.users[oncalls[0]["user"]["id"]]["email"]) if oncalls else None


def test_import_matches_pagerduty_and_a_second_apply_changes_nothing(
    stack: LocalStack, vendor: PagerDutyStandIn, checker: e2e_kit.Checker
) -> None:
    schedules_before = len(e2e_kit.all_items(checker, "/api/v1/schedules"))
    planned = e2e_kit.json_out(run(stack, vendor, "--plan", "--json"))
    assert planned["changes_pending"] is True and planned["summary"]["create"] >= 130
    assert len(e2e_kit.all_items(checker, "/api/v1/schedules")) == schedules_before
    assert {seen.method for seen in vendor.seen} == {"GET"}

    vendor.throttle.append(1)
    first = len(vendor.seen)
    applied = e2e_kit.json_out(run(stack, vendor, "--apply", "--json"))
    statuses = [seen.status for seen in vendor.seen[first:]]
    assert statuses[0] == 429 and statuses[1] == 200  # waited out, then asked again
    assert applied["applied"]["created"] >= 130
    senders = applied["cutover"]["senders"]
    assert len(senders) == 35 and all(s["routing_key"] for s in senders)
    assert [v["differences"] for v in applied["verified"]] == [[]] * 10

    schedules = e2e_kit.imported(checker, "pagerduty", "schedule")
    assert len(schedules) == 10
    for moment in e2e_kit.instants():
        for vendor_id, tocsin_id in schedules.items():
            assert e2e_kit.tocsin_on_call(checker, tocsin_id, moment) == vendor_on_call(vendor, vendor_id, moment), (
                vendor_id,
                moment,
            )

    policies = e2e_kit.imported(checker, "pagerduty", "escalation_policy")
    for raw in vendor.account["escalation_policies"]:
        policy = checker.get(f"/api/v1/escalation-policies/{policies[raw['id']]}")
        assert [level["delay_minutes"] for level in policy["levels"]] == [
            rule["escalation_delay_in_minutes"] for rule in raw["escalation_rules"]
        ]
        assert policy["repeat_count"] == raw["num_loops"]
        assert [[t["kind"] for t in level["targets"]] for level in policy["levels"]] == [
            [t["type"].removesuffix("_reference") for t in rule["targets"]] for rule in raw["escalation_rules"]
        ]

    again = run(stack, vendor, "--apply")
    assert again.returncode == 0, again.stderr
    assert "Nothing to do: a second import of the same PagerDuty setup changes nothing." in again.stdout


def test_an_event_to_the_drop_in_pages_the_imported_on_call_person(
    stack: LocalStack, vendor: PagerDutyStandIn, checker: e2e_kit.Checker
) -> None:
    applied = e2e_kit.json_out(run(stack, vendor, "--apply", "--json"))
    sender = next(s for s in applied["cutover"]["senders"] if s["vendor_id"] == "PINT000")
    assert sender["keeps_payload"] and sender["type"] == "pagerduty"
    key = sender["routing_key"]
    if key is None:  # shown once, by the apply that made it: a new one, as the sheet says
        key = checker.post(f"/api/v1/integrations/{sender['integration_id']}/regenerate")["routing_key"]
    title = "Imported: checkout is down"
    sent = requests.post(
        f"{stack.base_url}/v2/enqueue",
        timeout=30,
        json={
            "routing_key": key,
            "event_action": "trigger",
            "payload": {"summary": title, "source": "e2e", "severity": "critical"},
        },
    )
    assert sent.status_code == 202, sent.text
    incident = e2e_kit.incident_titled(checker, title)
    service = next(s for s in vendor.account["services"] if any(i["id"] == "PINT000" for i in s["integrations"]))
    services = e2e_kit.imported(checker, "pagerduty", "service")
    tocsin_service = checker.get(f"/api/v1/services/{services[service['id']]}")
    assert incident["service_keys"] == [tocsin_service["service_key"]]
    policy = next(p for p in vendor.account["escalation_policies"] if p["id"] == service["escalation_policy"]["id"])
    first_target = policy["escalation_rules"][0]["targets"][0]
    assert first_target["type"] == "schedule_reference"
    on_call = vendor_on_call(vendor, first_target["id"], datetime.now(UTC))
    person = next(u for u in vendor.account["users"] if u["email"] == on_call)
    assert incident["assigned_to"]["email"] == on_call
    assert f"Paged {person['name']} by email" in [entry["title"] for entry in incident["timeline"]]


def test_a_refused_token_is_one_clear_line(stack: LocalStack, vendor: PagerDutyStandIn) -> None:
    ran = run(stack, vendor, "--plan", token="not-the-token")
    assert ran.returncode == 1
    assert ran.stderr.strip().splitlines()[-1].startswith("tocsin: PagerDuty refused the API token (401)")
    assert ran.stdout == ""
