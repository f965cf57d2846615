"""Real Opsgenie clients against the real local stack's Opsgenie drop-in (the demo's `opsgenie`
integration, its key sent as `Authorization: GenieKey <key>`):

- the official Python SDK (`opsgenie-sdk`), its `Configuration.host` the stack's URL: create,
  acknowledge, add a note, close, read back, and the request status it polls;
- the real Prometheus Alertmanager (the Debian package `make test` installs) with an
  `opsgenie_configs` receiver whose `api_url` is the stack: a firing alert opens an incident (priority
  P1 -> SEV0, on the service its `service_id` detail names) and, once resolved, Alertmanager closes it
  by its alias and the incident resolves.

The Alertmanager test is skipped only when the binary is absent outside CI, as in
tests/e2e/test_alertmanager_e2e.py, whose helpers it shares.
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import opsgenie_sdk
import pytest

from tests.e2e.conftest import LocalStack
from tests.e2e.test_alertmanager_e2e import (
    BINARY,
    DEADLINE_SECONDS,
    _binary,
    _incident_named,
    _poll,
    _post_alert,
    running_alertmanager,
)


def genie_key(stack: LocalStack) -> str:
    return str(stack.demo["integrations"]["opsgenie"]["routing_key"])


def official_client(stack: LocalStack) -> opsgenie_sdk.AlertApi:
    configuration = opsgenie_sdk.Configuration()
    configuration.host = stack.base_url
    configuration.api_key = {"Authorization": genie_key(stack)}
    configuration.api_key_prefix = {"Authorization": "GenieKey"}
    configuration.retry_enabled = False  # an error must surface, not be retried for a minute
    return opsgenie_sdk.AlertApi(api_client=opsgenie_sdk.ApiClient(configuration=configuration))


def alert_record(stack: LocalStack, alert_id: str) -> dict[str, Any]:
    response = stack.get(f"/api/v1/alerts/{alert_id}")
    assert response.status_code == 200, response.text
    return dict(response.json()["data"])


def incident_detail(stack: LocalStack, number: str) -> dict[str, Any]:
    response = stack.get(f"/api/v1/incidents/{number}")
    assert response.status_code == 200, response.text
    return dict(response.json()["data"])


def test_the_official_sdk_creates_acknowledges_notes_and_closes(stack: LocalStack) -> None:
    run = uuid.uuid4().hex[:8]
    alerts = official_client(stack)
    service_id = stack.demo["services"][0]["service_id"]
    created = alerts.create_alert(
        create_alert_payload=opsgenie_sdk.CreateAlertPayload(
            message=f"e2e opsgenie {run}",
            alias=f"e2e/{run}",
            tags=["env:e2e"],
            details={"service_id": service_id, "run": run},
            priority="P2",
            source="e2e",
        )
    )
    alert_id = created.id  # polls GET /v2/alerts/requests/{requestId}
    number = alert_record(stack, alert_id)["incident_number"]
    opened = incident_detail(stack, number)
    assert (opened["title"], opened["severity"], opened["status"]) == (f"e2e opsgenie {run}", "SEV1", "new")
    again = alerts.create_alert(
        create_alert_payload=opsgenie_sdk.CreateAlertPayload(message=f"e2e opsgenie {run}", alias=f"e2e/{run}")
    )
    assert again.retrieve_result().data.status == "Alert deduplicated: count 2"

    acknowledged = alerts.acknowledge_alert(
        identifier=f"e2e/{run}",
        identifier_type="alias",
        acknowledge_alert_payload=opsgenie_sdk.AcknowledgeAlertPayload(user="e2e", note="looking"),
    )
    assert acknowledged.retrieve_result().data.status == "Acknowledged alert"
    noted = alerts.add_note(
        identifier=alert_id, add_note_to_alert_payload=opsgenie_sdk.AddNoteToAlertPayload(note="rolled back")
    )
    assert noted.retrieve_result().data.is_success is True
    seen = alerts.get_alert(identifier=alert_id).data
    assert (seen.count, seen.acknowledged, seen.priority, seen.tags) == (2, True, "P2", ["env:e2e"])
    assert alerts.get_alert(identifier=seen.tiny_id, identifier_type="tiny").data.id == alert_id

    closed = alerts.close_alert(identifier=alert_id, close_alert_payload=opsgenie_sdk.CloseAlertPayload(user="e2e"))
    assert closed.retrieve_result().data.status == "Closed alert"
    assert alerts.get_alert(identifier=alert_id).data.status == "closed"
    assert incident_detail(stack, number)["status"] == "resolved"

    def comments() -> list[str] | None:
        timeline = incident_detail(stack, number)["timeline"]
        found = sorted(entry["description"] for entry in timeline if entry["event_type"] == "comment")
        return found if found == ["looking", "rolled back"] else None

    # The timeline entries are written by the worker: on a busy machine after a while.
    assert _poll("the notes on the timeline", comments, stack.log, DEADLINE_SECONDS) == ["looking", "rolled back"]


def test_the_sdk_meets_opsgenies_errors(stack: LocalStack) -> None:
    alerts = official_client(stack)
    with pytest.raises(opsgenie_sdk.ApiException) as missing:
        alerts.get_alert(identifier="alr_0123456789abcdef0123456789abcdef")
    assert missing.value.status == 404
    unknown = alerts.close_alert(identifier=f"nothing-{uuid.uuid4().hex}", identifier_type="alias")
    status = alerts.get_request_status(request_id=unknown.request_id).data
    assert (status.is_success, status.status) == (False, "Alert does not exist")


# --- the real Alertmanager's opsgenie_configs ------------------------------------------------------


def _config(api_url: str, api_key: str, service_id: str) -> str:
    # JSON strings are valid YAML; quoting keeps them literal.
    return f"""
route:
  receiver: tocsin-opsgenie
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: tocsin-opsgenie
    opsgenie_configs:
      - api_url: "{api_url}"
        api_key: "{api_key}"
        send_resolved: true
        priority: "P1"
        tags: "team=sre,severity={{{{ .CommonLabels.severity }}}}"
        details:
          service_id: "{service_id}"
"""


@pytest.mark.skipif(
    _binary() is None and not os.environ.get("CI"),
    reason=f"{BINARY} is not installed (apt-get install prometheus-alertmanager); required in CI",
)
def test_alertmanager_opsgenie_configs_open_then_close_an_incident(stack: LocalStack, tmp_path: Path) -> None:
    service = stack.demo["services"][1]  # not the integration's default service (the first)
    config = _config(stack.base_url + "/", genie_key(stack), service["service_id"])
    with running_alertmanager(config, tmp_path) as alertmanager:
        alertname = f"E2EOpsgenie{uuid.uuid4().hex[:8]}"
        labels = {"alertname": alertname, "severity": "warning", "instance": "db-1:9100"}
        now = datetime.now(UTC)
        started = time.monotonic()
        # Firing for a few seconds: Alertmanager resolves it by itself once endsAt has passed.
        _post_alert(alertmanager, labels, now - timedelta(seconds=5), now + timedelta(seconds=6))

        def diagnostics() -> str:
            return f"--- alertmanager log ---\n{alertmanager.log()[-4000:]}\n--- stack log ---\n{stack.log()[-4000:]}"

        opened = _poll("the incident to open", lambda: _incident_named(stack, alertname), diagnostics, DEADLINE_SECONDS)
        assert opened["severity"] == "SEV0" and opened["status"] == "new"
        number = opened["incident_number"]
        assert incident_detail(stack, number)["service_keys"] == [service["service_key"]]
        [alert] = stack.get(f"/api/v1/incidents/{number}/alerts").json()["data"]["items"]
        assert (alert["integration"]["type"], alert["source"]) == ("opsgenie", "opsgenie")
        assert {k: alert["labels"].get(k) for k in ("team", "severity", "priority")} == {
            "team": "sre",
            "severity": "warning",
            "priority": "P1",
        }
        assert len(alert["dedup_key"]) == 64  # Alertmanager's alias: the hash of its group key

        def resolved() -> dict[str, Any] | None:
            found = incident_detail(stack, number)
            return found if found["status"] == "resolved" else None

        remaining = max(1.0, DEADLINE_SECONDS - (time.monotonic() - started))
        closed = _poll("the incident to resolve", resolved, diagnostics, remaining)
        assert closed["resolved_at"]
        assert 'msg="Notify success"' in alertmanager.log()
