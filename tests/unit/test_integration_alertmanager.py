from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from chalicelib.errors import DeliveryRejected
from chalicelib.integration.parsers.alertmanager import parse_alertmanager

FIXTURES = Path(__file__).parent / "fixtures" / "integration"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def parse(payload: dict[str, Any]):
    return parse_alertmanager(json.dumps(payload).encode())


def test_firing_fixture():
    alert = parse_alertmanager((FIXTURES / "alertmanager_firing.json").read_bytes())
    assert alert.source == "alertmanager"
    assert alert.action == "trigger"
    assert alert.dedup_key == '{}/{team="storage"}:{alertname="DiskFull"}'
    assert alert.severity == "SEV0"
    assert alert.title == "Disk almost full on storage nodes"
    assert alert.service_hint == "SER-00005"
    assert alert.source_url == "http://alertmanager.internal.example.org:9093"
    assert alert.summary == "2 firing, 1 resolved"
    assert alert.description is not None
    assert "[firing] DiskFull store-1:9100: /var/lib/data is 96% full on store-1" in alert.description
    assert "[resolved] DiskFull store-3:9100" in alert.description
    assert alert.occurred_at == datetime(2026, 11, 22, 11, 35, tzinfo=UTC)
    assert alert.metadata["receiver"] == "tocsin"
    assert alert.metadata["flavor"] == "alertmanager"


def test_resolved_fixture():
    alert = parse_alertmanager((FIXTURES / "alertmanager_resolved.json").read_bytes())
    assert alert.action == "resolve"
    assert alert.dedup_key == '{}/{team="storage"}:{alertname="DiskFull"}'
    assert alert.title == "DiskFull (team=storage)"  # no summary annotation: alertname + group labels
    assert alert.service_hint == "SER-00005"  # from the first alert's labels
    assert alert.summary == "0 firing, 1 resolved"


def test_grafana_fixture():
    alert = parse_alertmanager((FIXTURES / "grafana_firing.json").read_bytes())
    assert alert.action == "trigger"
    assert alert.title == "[FIRING:1] HighQueueDepth Queues (emails warning)"
    assert alert.severity == "SEV2"
    assert alert.service_hint == "svc_q1w2e3r4t5"
    assert alert.metadata["flavor"] == "grafana"
    assert alert.metadata["org_id"] == "1"
    assert alert.dedup_key is not None and "HighQueueDepth" in alert.dedup_key


def test_grafana_resolved():
    payload = load("grafana_firing.json") | {"status": "resolved", "state": "ok"}
    payload["alerts"][0]["status"] = "resolved"
    assert parse(payload).action == "resolve"


def test_grafana_state_when_status_is_missing():
    payload = load("grafana_firing.json")
    del payload["status"]
    assert parse(payload).action == "trigger"


@pytest.mark.parametrize(
    ("label", "severity"),
    [
        ("critical", "SEV0"),
        ("Critical", "SEV0"),
        ("high", "SEV1"),
        ("warning", "SEV2"),
        ("WARNING", "SEV2"),
        ("info", "SEV3"),
        ("low", "SEV4"),
        ("none", "SEV4"),
        ("sev1", "SEV1"),
        ("page", None),
    ],
)
def test_severity_table(label, severity):
    payload = load("alertmanager_firing.json")
    payload["commonLabels"]["severity"] = label
    for alert in payload["alerts"]:
        alert["labels"]["severity"] = label
    assert parse(payload).severity == severity


def test_severity_falls_back_to_the_first_firing_alert():
    payload = load("alertmanager_firing.json")
    del payload["commonLabels"]["severity"]
    payload["alerts"][0]["labels"]["severity"] = "warning"
    payload["alerts"][1]["labels"]["severity"] = "critical"
    assert parse(payload).severity == "SEV2"


def test_service_hint_falls_back_to_the_first_alert():
    payload = load("alertmanager_firing.json")
    del payload["commonLabels"]["service_id"]
    payload["alerts"][0]["labels"]["service_id"] = "SER-00077"
    assert parse(payload).service_hint == "SER-00077"


def test_generator_url_when_no_external_url():
    payload = load("alertmanager_firing.json")
    del payload["externalURL"]
    assert parse(payload).source_url is not None
    assert parse(payload).source_url.startswith("http://prometheus.internal.example.org:9090/graph")


def test_truncated_alerts_in_summary():
    payload = load("alertmanager_firing.json") | {"truncatedAlerts": 4}
    assert parse(payload).summary == "2 firing, 1 resolved (4 more truncated)"


def test_long_group_key_becomes_a_stable_hash():
    payload = load("alertmanager_firing.json") | {"groupKey": "{}:{" + "x" * 400 + "}"}
    first, second = parse(payload), parse(payload | {"status": "resolved"})
    assert first.dedup_key == second.dedup_key
    assert first.dedup_key is not None and first.dedup_key.startswith("sha256:")


def test_many_alerts_are_bounded_in_the_description():
    payload = load("alertmanager_firing.json")
    payload["alerts"] = payload["alerts"][:1] * 60
    alert = parse(payload)
    assert alert.description is not None and "... and 40 more" in alert.description
    assert alert.summary == "60 firing, 0 resolved"


def test_extra_keys_are_tolerated():
    payload = load("alertmanager_firing.json") | {"newField": {"x": 1}}
    payload["alerts"][0]["extra"] = [1, 2, 3]
    assert parse(payload).action == "trigger"


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda p: p.__setitem__("status", "pending"), "'status'"),
        (lambda p: p.pop("status"), "'status'"),
        (lambda p: p.pop("alerts"), "'alerts'"),
        (lambda p: p.__setitem__("alerts", {"a": 1}), "'alerts'"),
        (lambda p: p["alerts"].append("nope"), "'alerts[3]'"),
        (lambda p: p.__setitem__("commonLabels", ["x"]), "'commonLabels'"),
    ],
)
def test_invalid_payloads(mutate, fragment):
    payload = load("alertmanager_firing.json")
    mutate(payload)
    with pytest.raises(DeliveryRejected) as caught:
        parse(payload)
    assert caught.value.code == "INVALID_PAYLOAD"
    assert fragment in caught.value.message


# --- issue 26: what Alertmanager carries beyond the mapped fields ---------------------------------------


def test_the_kube_prometheus_watchdog():
    # Its title comes from the summary annotation, so a rule on the title never sees "Watchdog":
    # the alert name is a label (labels.alertname in event rules).
    alert = parse_alertmanager((FIXTURES / "alertmanager_watchdog.json").read_bytes())
    assert alert.title == "An alert that should always be firing to certify that Alertmanager is working properly."
    assert "Watchdog" not in alert.title
    assert alert.metadata["labels.alertname"] == "Watchdog"
    assert alert.severity == "SEV4"  # severity none
    assert alert.runbook_url == "https://runbooks.prometheus-operator.dev/runbooks/general/watchdog"
    assert alert.details["labels"] == {
        "alertname": "Watchdog",
        "prometheus": "monitoring/kube-prometheus-stack-prometheus",
        "severity": "none",
    }
    assert alert.details["annotations"]["description"].startswith("This is an alert meant to ensure")
    assert "other_alerts" not in alert.details
    assert alert.warnings == ()


def test_labels_annotations_and_the_other_alerts_are_details():
    alert = parse_alertmanager((FIXTURES / "alertmanager_firing.json").read_bytes())
    assert alert.details["labels"]["instance"] == "store-1:9100"  # the first firing alert's, over the common
    assert alert.details["annotations"] == {
        "summary": "Disk almost full on storage nodes",
        "description": "/var/lib/data is 96% full on store-1",
    }
    assert [a["labels"]["instance"] for a in alert.details["other_alerts"]] == ["store-2:9100", "store-3:9100"]
    assert alert.runbook_url is None


def test_summary_of_the_first_alert_when_there_is_no_common_one():
    payload = load("alertmanager_firing.json")
    payload["commonAnnotations"] = {}
    payload["alerts"][0]["annotations"]["runbook_url"] = "https://runbooks.example.org/disk"
    alert = parse(payload)
    assert alert.title == "Disk almost full on storage nodes"
    assert alert.runbook_url == "https://runbooks.example.org/disk"


@pytest.mark.parametrize(
    ("label", "severity"),
    [("critical", "SEV0"), ("error", "SEV1"), ("P2", "SEV1"), ("Warning", "SEV2"), ("none", "SEV4"), ("page", None)],
)
def test_severity_label_through_the_one_table(label, severity):
    payload = load("alertmanager_firing.json")
    payload["commonLabels"]["severity"] = label
    for alert in payload["alerts"]:
        alert["labels"]["severity"] = label
    assert parse(payload).severity == severity
