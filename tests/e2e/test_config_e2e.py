"""`tocsin config` as a person runs it (`python -m chalicelib.client`, URL and key from the
environment) against the real local stack: export the demo organization, apply it to a fresh
organization made with the admin CLI, export that one and get the same document; apply twice
(the second changes nothing); prune; a refused key."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.e2e.conftest import ROOT, LocalStack


def tocsin(stack: LocalStack, key: str, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLE_", "QUEUE_", "TOCSIN_"))}
    env.update({"TOCSIN_URL": stack.base_url, "TOCSIN_API_KEY": key})
    return subprocess.run(
        [sys.executable, "-m", "chalicelib.client", *argv],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def fresh_organization(stack: LocalStack, name: str) -> dict[str, Any]:
    """A second organization with its owner key, made as an operator would (the admin CLI)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TABLE_", "QUEUE_", "TOCSIN_"))}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "chalicelib.cli",
            "--endpoint-url",
            stack.demo["aws_endpoint_url"],
            "create-org",
            "--name",
            name,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.fixture(scope="module")
def exported(stack: LocalStack) -> str:
    ran = tocsin(stack, stack.demo["api_keys"]["owner"], "config", "export")
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_the_demo_organization_carried_to_a_fresh_one_exports_the_same(stack: LocalStack, exported: str) -> None:
    slug = stack.demo["status_page"]["slug"]
    assert f"slug: {slug}\n" in exported
    for section in ("users", "teams", "schedules", "escalation_policies", "services", "integrations", "event_rules"):
        assert f"\n{section}:\n  - " in exported, section  # the demo has some of each
    for secret in (
        stack.demo["integrations"]["alertmanager"]["routing_key"],
        stack.demo["noise_control"]["heartbeat"]["ping_url"],
    ):
        assert secret not in exported

    fresh = fresh_organization(stack, "Config Copy")
    carried = exported.replace(f"slug: {slug}\n", "slug: config-copy\n")  # one public page per slug
    applied = tocsin(stack, fresh["key"], "config", "apply", "-f", "-", stdin=carried)
    assert applied.returncode == 0, applied.stderr
    assert "Applied: " in applied.stdout and " 0 deleted." in applied.stdout
    again = tocsin(stack, fresh["key"], "config", "export")
    assert again.returncode == 0, again.stderr
    assert again.stdout == carried

    second = tocsin(stack, fresh["key"], "config", "apply", "-f", "-", stdin=carried)
    assert second.returncode == 0, second.stderr
    assert second.stdout.endswith("No changes. The organization matches the document.\n")
    planned = tocsin(stack, fresh["key"], "config", "plan", "--detailed-exitcode", "--prune", "-f", "-", stdin=carried)
    assert planned.returncode == 0, planned.stdout + planned.stderr


def test_prune_and_a_pending_change_on_the_real_stack(stack: LocalStack, exported: str) -> None:
    fresh = fresh_organization(stack, "Config Prune")
    carried = exported.replace(f"slug: {stack.demo['status_page']['slug']}\n", "slug: config-prune\n")
    assert tocsin(stack, fresh["key"], "config", "apply", "-f", "-", stdin=carried).returncode == 0
    smaller = "version: 1\nheartbeats: []\nevent_rules: []\n"
    pending = tocsin(stack, fresh["key"], "config", "plan", "--prune", "--detailed-exitcode", "-f", "-", stdin=smaller)
    assert pending.returncode == 2, pending.stderr
    assert "  - heartbeat " in pending.stdout and "  - event rule " in pending.stdout
    pruned = tocsin(stack, fresh["key"], "config", "apply", "--prune", "-f", "-", stdin=smaller)
    assert pruned.returncode == 0, pruned.stderr
    headers = {"Authorization": f"Bearer {fresh['key']}"}
    assert stack.get("/api/v1/heartbeats", headers=headers).json()["data"]["items"] == []
    assert stack.get("/api/v1/event-rules", headers=headers).json()["data"]["items"] == []
    services = stack.get("/api/v1/services", headers=headers).json()["data"]["items"]
    assert len(services) == len(stack.demo["services"])  # not in the document: kept
    # The demo organization was never touched.
    demo_beats = stack.get("/api/v1/heartbeats").json()["data"]["items"]
    assert [beat["name"] for beat in demo_beats] == [stack.demo["noise_control"]["heartbeat"]["name"]]


def test_a_refused_key_exits_1_with_one_line(stack: LocalStack) -> None:
    ran = tocsin(stack, "tk_wrong", "config", "export")
    assert ran.returncode == 1 and ran.stdout == ""
    assert ran.stderr == "tocsin: the API key was refused (401 UNAUTHORIZED): check --key or TOCSIN_API_KEY\n"
