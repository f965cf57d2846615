"""A real Prometheus Alertmanager delivering to the local stack's alertmanager integration.

Alertmanager (the Debian package `prometheus-alertmanager`, which `make test` installs) runs on
loopback with clustering off and a webhook receiver pointed at the demo integration URL. An
alert posted to its API opens an incident (severity label critical -> SEV0); once the alert's
endsAt passes, Alertmanager sends the resolved group and the incident is resolved.

Skipped only when the binary is absent outside CI; in CI (CI set) a missing binary fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests

from chalicelib.local.emulator import free_port
from tests.e2e.conftest import LocalStack

T = TypeVar("T")
BINARY = "prometheus-alertmanager"
DEADLINE_SECONDS = 30.0


def _binary() -> str | None:
    return shutil.which(BINARY) or (f"/usr/bin/{BINARY}" if os.path.exists(f"/usr/bin/{BINARY}") else None)


# Decided before the module's stack starts; in CI a missing binary is a failure (see the fixture).
pytestmark = pytest.mark.skipif(
    _binary() is None and not os.environ.get("CI"),
    reason=f"{BINARY} is not installed (apt-get install prometheus-alertmanager); required in CI",
)


@dataclass
class Alertmanager:
    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def _config(receiver_url: str) -> str:
    # JSON is valid YAML; quoting the URL keeps it literal.
    return f"""
route:
  receiver: tocsin
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: tocsin
    webhook_configs:
      - url: "{receiver_url}"
        send_resolved: true
        max_alerts: 0
"""


def _poll(what: str, probe: Callable[[], T | None], extra: Callable[[], str], timeout: float) -> T:
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found is not None:
            return found
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}\n{extra()}")
        time.sleep(0.25)


@pytest.fixture
def alertmanager(stack: LocalStack, tmp_path: Path) -> Iterator[Alertmanager]:
    with running_alertmanager(_config(stack.demo["integrations"]["alertmanager"]["url"]), tmp_path) as running:
        yield running


@contextmanager
def running_alertmanager(config: str, tmp_path: Path) -> Iterator[Alertmanager]:
    """The real binary on loopback with `config` (YAML), clustering off; stopped on exit."""
    binary = _binary()
    if binary is None:
        pytest.fail(f"{BINARY} is not installed; `make test` installs the Debian package prometheus-alertmanager")
    config_path = tmp_path / "alertmanager.yml"
    config_path.write_text(config)
    storage = tmp_path / "data"
    storage.mkdir()
    port = free_port()
    log_path = tmp_path / "alertmanager.log"
    environment = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config_path}",
                f"--storage.path={storage}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--cluster.listen-address=",
                f"--web.external-url=http://127.0.0.1:{port}/",
                "--log.level=debug",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=environment,
            start_new_session=True,
        )
    running = Alertmanager(process, f"http://127.0.0.1:{port}", log_path)
    try:

        def ready() -> bool | None:
            if process.poll() is not None:
                raise AssertionError(f"alertmanager exited with {process.returncode}:\n{running.log()}")
            try:
                return True if requests.get(running.url + "/-/ready", timeout=1).status_code == 200 else None
            except requests.ConnectionError:
                return None

        _poll("alertmanager to be ready", ready, running.log, timeout=20)
        yield running
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)


def _post_alert(alertmanager: Alertmanager, labels: dict[str, str], starts: datetime, ends: datetime) -> None:
    body = [
        {
            "labels": labels,
            "annotations": {"description": "posted by the e2e test"},
            "startsAt": starts.isoformat().replace("+00:00", "Z"),
            "endsAt": ends.isoformat().replace("+00:00", "Z"),
            "generatorURL": "http://127.0.0.1/graph",
        }
    ]
    response = requests.post(alertmanager.url + "/api/v2/alerts", json=body, timeout=10)
    assert response.status_code == 200, response.text


def _incident_named(stack: LocalStack, alertname: str, statuses: tuple[str, ...] = ()) -> dict[str, Any] | None:
    query = "".join(f"&status={status}" for status in statuses)
    response = stack.get(f"/api/v1/incidents?limit=100{query}")
    assert response.status_code == 200, response.text
    matches = [item for item in response.json()["data"]["items"] if alertname in item["title"]]
    assert len(matches) <= 1, matches
    return matches[0] if matches else None


def test_alertmanager_alert_opens_then_resolves_an_incident(stack: LocalStack, alertmanager: Alertmanager) -> None:
    alertname = f"E2EDiskFull{uuid.uuid4().hex[:8]}"
    labels = {
        "alertname": alertname,
        "severity": "critical",
        "service_id": stack.demo["services"][0]["service_id"],
        "instance": "db-1:9100",
    }
    now = datetime.now(UTC)
    started = time.monotonic()
    # Firing for a few seconds: Alertmanager resolves it by itself once endsAt has passed.
    _post_alert(alertmanager, labels, now - timedelta(seconds=5), now + timedelta(seconds=6))

    def diagnostics() -> str:
        return f"--- alertmanager log ---\n{alertmanager.log()[-4000:]}\n--- stack log ---\n{stack.log()[-4000:]}"

    opened = _poll("the incident to open", lambda: _incident_named(stack, alertname), diagnostics, DEADLINE_SECONDS)
    assert opened["severity"] == "SEV0"
    assert opened["status"] == "new"
    number = opened["incident_number"]

    def resolved() -> dict[str, Any] | None:
        detail = stack.get(f"/api/v1/incidents/{number}").json()["data"]
        return dict(detail) if detail["status"] == "resolved" else None

    remaining = max(1.0, DEADLINE_SECONDS - (time.monotonic() - started))
    closed = _poll("the incident to resolve", resolved, diagnostics, remaining)
    assert closed["resolved_at"]
    assert _incident_named(stack, alertname) is None  # no longer among the open incidents
    assert _incident_named(stack, alertname, ("resolved",)) is not None


# --- issue 26: the demo's Watchdog rule meets a real Watchdog -------------------------------------------

WATCHDOG_SUMMARY = "An alert that should always be firing to certify that Alertmanager is working properly."


def _notify_outcome(alertmanager: Alertmanager) -> str | None:
    """The first delivery's outcome, from Alertmanager's debug log: success once it logged a 2xx
    answer to its webhook, failed once it logged a failed attempt (a 4xx is not retried: the alert
    would be lost), else None (not sent yet)."""
    log = alertmanager.log()
    if 'msg="Notify success"' in log:
        return "success"
    if "Notify attempt failed" in log or "Notify for alerts failed" in log:
        return "failed"
    return None


def test_the_demo_drops_the_kube_prometheus_watchdog(stack: LocalStack, alertmanager: Alertmanager) -> None:
    # The real Watchdog's title is its summary annotation; the demo rule reads labels.alertname.
    labels = {"alertname": "Watchdog", "severity": "none", "prometheus": "monitoring/k8s"}
    annotations = {
        "description": "This is an alert meant to ensure that the entire alerting pipeline is functional.",
        "runbook_url": "https://runbooks.prometheus-operator.dev/runbooks/general/watchdog",
        "summary": WATCHDOG_SUMMARY,
    }
    now = datetime.now(UTC)
    body = [
        {
            "labels": labels,
            "annotations": annotations,
            "startsAt": (now - timedelta(seconds=5)).isoformat().replace("+00:00", "Z"),
            "endsAt": (now + timedelta(hours=1)).isoformat().replace("+00:00", "Z"),
            "generatorURL": "http://127.0.0.1/graph?g0.expr=vector%281%29",
        }
    ]
    response = requests.post(alertmanager.url + "/api/v2/alerts", json=body, timeout=10)
    assert response.status_code == 200, response.text

    def diagnostics() -> str:
        return f"--- alertmanager log ---\n{alertmanager.log()[-4000:]}\n--- stack log ---\n{stack.log()[-4000:]}"

    outcome = _poll(
        "Alertmanager to deliver the Watchdog", lambda: _notify_outcome(alertmanager), diagnostics, DEADLINE_SECONDS
    )
    assert outcome == "success", diagnostics()  # accepted (202, dropped), not refused
    alerts = stack.get("/api/v1/alerts?limit=100")
    assert alerts.status_code == 200, alerts.text
    assert [a for a in alerts.json()["data"]["items"] if a["labels"].get("alertname") == "Watchdog"] == []
    assert _incident_named(stack, WATCHDOG_SUMMARY) is None
