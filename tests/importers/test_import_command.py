"""`tocsin import pagerduty|opsgenie` end to end in process: the stand-ins over real HTTP(S) (a
small account: tests/e2e imports the real-sized one), the app on the emulator through the
in-process transport. --plan changes nothing; --apply makes the
account, prints the cut-over sheet, and a second apply changes nothing; a Tocsin refusal
part-way stops with a clear message and the next run finishes; bad vendor credentials fail
with one line."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from chalicelib import clock, settings
from chalicelib.client.main import run
from tests.api.tocsin_client import BASE_URL, InProcess, Ran, api, tocsin
from tests.api.tocsin_client import Answer as TocsinAnswer
from tests.conftest import NOW, Org
from tests.importers.standin_opsgenie import OpsgenieStandIn
from tests.importers.standin_pagerduty import PagerDutyStandIn


@pytest.fixture
def transport(client: Any, monkeypatch: pytest.MonkeyPatch) -> InProcess:
    clock.freeze(NOW)
    # An import of a real-sized account makes hundreds of calls within the frozen minute.
    monkeypatch.setenv("RATE_LIMIT_API_KEY", "100000")
    settings.get_settings.cache_clear()
    return InProcess(client)


def pd_import(
    transport: InProcess, org: Org, server: PagerDutyStandIn, *args: str, token: str = "pd-test-token"
) -> Ran:
    return tocsin(
        transport,
        org.owner_key,
        "import",
        "pagerduty",
        *args,
        "--pagerduty-url",
        server.base_url,
        now=NOW,
        environ={"PAGERDUTY_API_TOKEN": token},
    )


def og_import(transport: InProcess, org: Org, server: OpsgenieStandIn, *args: str, key: str = "og-test-key") -> Ran:
    return tocsin(
        transport,
        org.owner_key,
        "import",
        "opsgenie",
        *args,
        now=NOW,
        environ={"OPSGENIE_API_KEY": key, "OPSGENIE_API_URL": server.base_url},
    )


def writes(transport: InProcess) -> list[tuple[str, str]]:
    return [(method, path) for method, path in transport.seen if method != "GET"]


def test_pagerduty_plan_apply_and_apply_again(
    transport: InProcess, org: Org, small_pagerduty: PagerDutyStandIn
) -> None:
    pagerduty = small_pagerduty
    planned = pd_import(transport, org, pagerduty, "--plan")
    assert planned.status == 0, planned.err
    assert writes(transport) == [] and {s.method for s in pagerduty.seen} == {"GET"}
    assert (
        "Read from PagerDuty: 10 users, 2 teams, 3 schedules, 3 escalation policies, 6 services, 9 integrations"
        in planned.out
    )
    assert "create        schedule            Payments on call 1                        PSCH000" in planned.out
    assert "not imported  integration         Payments api 1: Email                     PINT006" in planned.out
    assert "Nothing was changed (--plan)." in planned.out and "pagerduty: reading users" in planned.err
    as_json = json.loads(pd_import(transport, org, pagerduty, "--plan", "--json").out)
    assert as_json["changes_pending"] is True and as_json["summary"]["create"] == 34
    assert {n["reason"] for n in as_json["not_carried_over"] if n["kind"] == "integration"} >= {
        "Tocsin takes no alerts by email"
    }

    applied = pd_import(transport, org, pagerduty, "--apply", "--json")
    assert applied.status == 0, applied.err
    body = json.loads(applied.out)
    assert body["applied"] == {"created": 34, "updated": 0}
    senders = body["cutover"]["senders"]
    assert len(senders) == 8 and all(s["routing_key"] and s["integration_id"] for s in senders)
    assert {s["type"] for s in senders if s["keeps_payload"]} == {"pagerduty"}
    assert "still points at PagerDuty" in body["cutover"]["note"]
    verified = body["verified"]  # against PagerDuty's own final schedule, read back from Tocsin
    assert len(verified) == 3 and all(v["instants"] > 20 and v["differences"] == [] for v in verified)

    tocsin_api = api(transport, org.owner_key)
    policies = {p["name"]: p for p in tocsin_api.all("/api/v1/escalation-policies")}
    first = policies["Payments escalation 1"]
    assert [level["delay_minutes"] for level in first["levels"]] == [10, 15, 30] and first["repeat_count"] == 0
    refs = tocsin_api.all("/api/v1/external-refs", {"vendor": "pagerduty"})
    assert len(refs) == 34

    again = pd_import(transport, org, pagerduty, "--apply")
    assert again.status == 0, again.err
    assert "Plan: 0 to create, 0 to update, 34 unchanged" in again.out
    assert "Nothing to do: a second import of the same PagerDuty setup changes nothing." in again.out
    assert "made by an earlier run (its key starts" in again.out
    assert "Checked against PagerDuty's own final schedule for the weeks ahead: 3 of 3 schedule(s)" in again.out


def test_a_refusal_part_way_stops_and_the_next_run_finishes(
    transport: InProcess, org: Org, small_opsgenie: OpsgenieStandIn
) -> None:
    opsgenie = small_opsgenie

    def refuse(method: str, path: str, body: Any) -> TocsinAnswer | None:
        if method == "POST" and path == "/api/v1/integrations":
            error = {"success": False, "error": {"code": "SERVICE_UNAVAILABLE", "message": "Try again later."}}
            return TocsinAnswer(503, {"Retry-After": "0"}, json.dumps(error))
        return None

    transport.refuse = refuse
    stopped = og_import(transport, org, opsgenie, "--apply")
    assert stopped.status == 1
    assert "create integration" in stopped.err and "failed" in stopped.err
    assert "Fix the cause and run the apply again: it finishes the job." in stopped.err
    transport.refuse = None
    finished = og_import(transport, org, opsgenie, "--apply")
    assert finished.status == 0, finished.err
    assert "Plan: 11 to create, 0 to update, 27 unchanged" in finished.out
    assert "Cut-over sheet: switch each sender from Opsgenie to Tocsin" in finished.out
    assert "Heartbeats (paused: point the pinger at the URL, then resume the heartbeat):" in finished.out
    again = og_import(transport, org, opsgenie, "--apply")
    assert "Nothing to do: a second import of the same Opsgenie setup changes nothing." in again.out

    tocsin_api = api(transport, org.owner_key)
    beats = tocsin_api.all("/api/v1/heartbeats")
    assert len(beats) == 2 and {b["enabled"] for b in beats} == {False}
    policy = next(p for p in tocsin_api.all("/api/v1/escalation-policies") if p["name"] == "Payments escalation 1")
    # Opsgenie's rules wait 0, 10 and 25 minutes from the alert; no repeat: the last level waits 5.
    assert [level["delay_minutes"] for level in policy["levels"]] == [10, 15, 5]


def test_vendor_credentials_refused_or_missing(
    transport: InProcess, org: Org, small_pagerduty: PagerDutyStandIn, small_opsgenie: OpsgenieStandIn
) -> None:
    pagerduty, opsgenie = small_pagerduty, small_opsgenie
    refused = pd_import(transport, org, pagerduty, "--plan", token="wrong")
    assert refused.status == 1 and refused.out == ""
    assert refused.err.splitlines()[-1].startswith("tocsin: PagerDuty refused the API token (401)")
    refused = og_import(transport, org, opsgenie, "--plan", key="wrong")
    assert refused.status == 1 and "tocsin: Opsgenie refused the API key (401)" in refused.err
    missing = tocsin(transport, org.owner_key, "import", "opsgenie", "--plan", now=NOW, environ={})
    assert missing.status == 2 and "give --opsgenie-key or set OPSGENIE_API_KEY" in missing.err
    out, err = io.StringIO(), io.StringIO()
    after = run(  # Tocsin's --url and --key may follow the subcommand too
        ["import", "opsgenie", "--plan", "--url", BASE_URL, "--key", org.owner_key],
        out=out,
        err=err,
        stdin=io.StringIO(),
        environ={"OPSGENIE_API_KEY": "x", "OPSGENIE_API_URL": opsgenie.base_url},
        transport=transport,
        clock=lambda: NOW,
    )
    assert after == 1 and "Opsgenie refused the API key (401)" in err.getvalue()
    both = tocsin(transport, org.owner_key, "import", "opsgenie", "--plan", "--apply", now=NOW, environ={})
    assert both.status == 2 and "not allowed with argument" in both.err
    assert writes(transport) == []
