"""`make run` keeps its data across kill -9, Ctrl-C and restarts, and FRESH=1 starts empty.

Each test starts the real stack twice on the same directory (README "Local data").
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import boto3

from chalicelib.local.persistence import JOURNAL_PREFIX
from tests.e2e.conftest import ROOT, LocalStack, start_stack, stop_stack


def _create_incident(stack: LocalStack, title: str, key: str | None = None, service_key: str | None = None) -> str:
    service = service_key or stack.demo["services"][0]["service_key"]
    response = stack.post("/api/v1/incidents", key=key, json={"title": title, "service_ids": [service]})
    assert response.status_code == 201, response.text
    return str(response.json()["data"]["incident_number"])


def _sequence(incident_number: str) -> int:
    return int(incident_number.rsplit("-", 1)[1])


def _create_organization(stack: LocalStack, local_dir: Path) -> dict[str, Any]:
    """A second organization, with its own owner key, made as an operator would (the CLI)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLE_", "QUEUE_", "TOCSIN_"))}
    env["LOCAL_DIR"] = str(local_dir)
    done = subprocess.run(
        [sys.executable, "-m", "chalicelib.cli", "--local", "create-org", "--name", "Kept Org"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def _sqs(stack: LocalStack) -> Any:
    return boto3.client(
        "sqs",
        endpoint_url=stack.demo["aws_endpoint_url"],
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )


def _wait_for_a_snapshot_after_now(data_dir: Path) -> None:
    """A snapshot starts a new journal and, once written, deletes the older ones; the journal open
    now was started by the last snapshot before now, so its deletion means a later one is saved."""
    journals = data_dir.glob(f"{JOURNAL_PREFIX}*.jsonl")
    current = max(journals, key=lambda path: int(path.stem.removeprefix(JOURNAL_PREFIX)))
    deadline = time.monotonic() + 60  # a guard, not a speed check: the interval is 2 s
    while current.exists():
        assert time.monotonic() < deadline, f"no snapshot replaced {current.name}"
        time.sleep(0.1)


def _emulator_pid(stack: LocalStack) -> int:
    pid = stack.process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def test_kill_9_of_every_process_keeps_acknowledged_writes_and_numbering(tmp_path: Path) -> None:
    first = start_stack(tmp_path)
    try:
        # Queue messages live in the periodic snapshot: wait for one taken after they were sent.
        sqs = _sqs(first)
        queue_url = sqs.create_queue(QueueName="e2e-kept")["QueueUrl"]
        sqs.send_message(QueueUrl=queue_url, MessageBody="later", DelaySeconds=900)  # an escalation timer
        sqs.send_message(QueueUrl=queue_url, MessageBody="now")
        _wait_for_a_snapshot_after_now(tmp_path / "local" / "data")
        # DynamoDB writes are journalled as they are acknowledged: killed right after, nothing is lost.
        other = _create_organization(first, tmp_path / "local")
        created_key = first.post("/api/v1/api-keys", json={"name": "kept", "scopes": ["incidents:read"]})
        assert created_key.status_code == 201, created_key.text
        kept_key = created_key.json()["data"]["key"]
        number = _create_incident(first, "kept through kill -9")
        assert first.get(f"/api/v1/incidents/{number}").status_code == 200
        # The harshest stop: the emulator first (no final snapshot), then the runner.
        os.kill(_emulator_pid(first), signal.SIGKILL)
        first.process.send_signal(signal.SIGKILL)
        first.process.wait(timeout=30)
    finally:
        if first.process.poll() is None:
            first.process.kill()

    second = start_stack(tmp_path)
    try:
        assert "(restored from the last run)" in second.log()
        incident = second.get(f"/api/v1/incidents/{number}")
        assert incident.status_code == 200, incident.text
        assert incident.json()["data"]["title"] == "kept through kill -9"
        assert second.get("/api/v1/incidents", key=kept_key).status_code == 200
        verified = second.get("/api/v1/auth/verify", key=other["key"])
        assert verified.status_code == 200, verified.text
        assert verified.json()["data"]["organization_name"] == "Kept Org"
        assert _sequence(_create_incident(second, "after the restart")) == _sequence(number) + 1

        sqs = _sqs(second)
        queue_url = sqs.get_queue_url(QueueName="e2e-kept")["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
        assert attributes["ApproximateNumberOfMessagesDelayed"] == "1"
        received = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=1).get("Messages", [])
        assert [m["Body"] for m in received] == ["now"]
    finally:
        assert stop_stack(second) == 0


def test_ctrl_c_right_after_a_write_keeps_it(tmp_path: Path) -> None:
    first = start_stack(tmp_path)
    number = _create_incident(first, "kept through Ctrl-C")
    first.process.send_signal(signal.SIGINT)  # no wait for a snapshot
    assert first.process.wait(timeout=60) == 0

    second = start_stack(tmp_path)
    try:
        assert second.get(f"/api/v1/incidents/{number}").json()["data"]["title"] == "kept through Ctrl-C"
        assert _sequence(_create_incident(second, "next")) == _sequence(number) + 1
    finally:
        assert stop_stack(second) == 0


def test_fresh_starts_empty(tmp_path: Path) -> None:
    first = start_stack(tmp_path)
    number = _create_incident(first, "forgotten on purpose")
    assert stop_stack(first) == 0

    second = start_stack(tmp_path, FRESH="1")
    try:
        assert "(new)" in second.log().rsplit("Tocsin is running", 1)[1]
        assert second.get(f"/api/v1/incidents/{number}").status_code == 404
        listed = second.get("/api/v1/incidents").json()["data"]
        assert listed["items"] == []
        assert _sequence(_create_incident(second, "first again")) == 1  # the demo data is seeded afresh
    finally:
        assert stop_stack(second) == 0
