"""`tocsin config` against the app in process: apply a document that uses every section, apply
again (no changes), export (no secrets) and read it back, carry it to a second organization and
export the same document, prune, find a renamed object by its source, plan as JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.client import validate
from tests.api.config_documents import FULL
from tests.api.tocsin_client import InProcess, Ran, api, tocsin
from tests.conftest import NOW, Org, make_org


@pytest.fixture
def transport(client: Any) -> InProcess:
    clock.freeze(NOW)
    return InProcess(client)


def apply(transport: InProcess, key: str, text: str, *extra: str) -> Ran:
    ran = tocsin(transport, key, "config", "apply", "-f", "-", *extra, now=NOW, stdin=text)
    assert ran.status == 0, ran.err
    return ran


def export(transport: InProcess, key: str) -> str:
    ran = tocsin(transport, key, "config", "export", now=NOW)
    assert ran.status == 0, ran.err
    return ran.out


def test_apply_makes_every_section_and_a_second_apply_changes_nothing(transport: InProcess, org: Org) -> None:
    first = apply(transport, org.owner_key, FULL)
    assert "Plan: 16 to create, 0 to update, 0 to delete." in first.out
    assert "Applied: 16 created, 0 updated, 0 deleted." in first.out
    assert "[16/16] create status page Public" in first.err
    shown = [
        line for line in first.out.splitlines() if line.startswith("  integration ") or line.startswith("  heartbeat ")
    ]
    assert [line.split(":")[0] for line in shown] == [
        "  integration 'Prometheus'",
        "  integration 'Scripts'",
        "  heartbeat 'nightly-backup'",
    ]
    assert "signing_secret=" in shown[1] and "ping_url=" in shown[2]

    second = apply(transport, org.owner_key, FULL)
    assert second.out.endswith("No changes. The organization matches the document.\n")
    assert "[1/" not in second.err
    planned = tocsin(transport, org.owner_key, "config", "plan", "-f", "-", "--detailed-exitcode", now=NOW, stdin=FULL)
    assert planned.status == 0 and "No changes." in planned.out

    client = api(transport, org.owner_key)
    users = {u["email"]: u for u in client.all("/api/v1/users")}
    assert users["carol@example.com"]["is_active"] is False and users["alice@example.com"]["role"] == "admin"
    rules = client.get(f"/api/v1/users/{users['alice@example.com']['id']}/notification-rules")
    assert [(s["type"], s["delay_minutes"]) for s in rules["high"]] == [("email", 0), ("sms", 5)]
    assert [s["type"] for s in rules["low"]] == ["slack"]
    (service,) = [s for s in client.all("/api/v1/services") if s["name"] == "Payments"]
    (policy,) = client.all("/api/v1/escalation-policies")
    assert service["escalation_policy_id"] == policy["id"] and service["team_name"] == "Platform"
    org_rules = client.all("/api/v1/event-rules")
    assert [r["description"] for r in org_rules] == ["Drop test alerts", "Route checkout"]
    assert org_rules[1]["actions"]["route_to_service"] == service["service_id"] and org_rules[1]["continue"] is True
    (prometheus,) = [i for i in client.all("/api/v1/integrations") if i["name"] == "Prometheus"]
    (urgent,) = client.all(f"/api/v1/integrations/{prometheus['id']}/event-rules")
    assert urgent["conditions"] == [{"field": "service_id", "op": "equals", "value": service["service_id"]}]


def test_export_reads_back_as_the_same_document_and_holds_no_secret(transport: InProcess, org: Org) -> None:
    first = apply(transport, org.owner_key, FULL)
    text = export(transport, org.owner_key)
    document, _ = validate.parse(text, "export.yaml")
    desired, _ = validate.parse(FULL, "full.yaml")
    # Times come back in UTC: the same instants, so the same values.
    assert document.model_dump(exclude={"users"}) == desired.model_dump(exclude={"users"})
    assert document.users is not None and desired.users is not None
    assert document.users[0] == desired.users[0]  # Alice's methods and rules as the document said
    unmanaged = {"contact_methods", "notification_rules"}  # left out for Bob and Carol: exported as they are
    assert [u.model_dump(exclude=unmanaged) for u in document.users] == [
        u.model_dump(exclude=unmanaged) for u in desired.users
    ]
    secrets = [
        value.split("=", 1)[1].rstrip(",") for line in first.out.splitlines() for value in line.split() if "=" in value
    ]
    assert len(secrets) == 6  # two URLs, two routing keys, a signing secret, a ping URL
    for secret in secrets:
        assert secret not in text
    for word in ("routing_key", "ping_url", "signing_secret", "/webhooks/", "/heartbeats/"):
        assert word not in text
    planned = tocsin(transport, org.owner_key, "config", "plan", "-f", "-", "--prune", now=NOW, stdin=text)
    assert planned.status == 0 and planned.out.endswith("No changes. The organization matches the document.\n")


def test_a_document_carried_to_another_organization_exports_the_same(transport: InProcess, org: Org) -> None:
    apply(transport, org.owner_key, FULL)
    exported = export(transport, org.owner_key)
    second = make_org("Second")
    # A slug names one public page across the whole service.
    apply(transport, second.owner_key, exported.replace("slug: acme-status", "slug: second-status"))
    assert export(transport, second.owner_key) == exported.replace("slug: acme-status", "slug: second-status")
    assert apply(transport, second.owner_key, exported.replace("acme-status", "second-status")).out.endswith(
        "No changes. The organization matches the document.\n"
    )


def test_prune_deletes_only_what_the_documents_sections_leave_out(transport: InProcess, org: Org) -> None:
    apply(transport, org.owner_key, FULL)
    smaller = (
        "version: 1\nheartbeats: []\nevent_rules: []\nintegrations:\n  - {name: Scripts, type: custom, signing: true}\n"
    )
    kept = tocsin(transport, org.owner_key, "config", "plan", "-f", "-", now=NOW, stdin=smaller)
    assert "No changes." in kept.out and "5 object(s) of the organization are not in the document" in kept.out
    planned = tocsin(transport, org.owner_key, "config", "plan", "-f", "-", "--prune", now=NOW, stdin=smaller)
    assert [line for line in planned.out.splitlines() if line.startswith("  -")] == [
        "  - event rule 'Drop test alerts'",
        "  - event rule 'Route checkout'",
        "  - event rule 'Payments are urgent (Prometheus)'",
        "  - heartbeat 'nightly-backup'",
        "  - integration 'Prometheus': revoked: its URL stops answering",
    ]
    apply(transport, org.owner_key, smaller, "--prune")
    client = api(transport, org.owner_key)
    assert client.all("/api/v1/heartbeats") == [] and client.all("/api/v1/event-rules") == []
    states = {i["name"]: i["state"] for i in client.all("/api/v1/integrations")}
    assert states == {"Prometheus": "revoked", "Scripts": "active"}
    assert len(client.all("/api/v1/services")) == 2 and len(client.all("/api/v1/schedules")) == 1  # not in it: kept
    again = tocsin(transport, org.owner_key, "config", "plan", "-f", "-", "--prune", now=NOW, stdin=smaller)
    assert again.out.endswith("No changes. The organization matches the document.\n")


def test_a_renamed_object_is_found_by_its_source(transport: InProcess, org: Org) -> None:
    with_source = FULL.replace("  - name: Web\n", "  - name: Web\n    source: {vendor: pagerduty, id: PWEB1}\n")
    apply(transport, org.owner_key, with_source)
    client = api(transport, org.owner_key)
    (entry,) = client.all("/api/v1/external-refs")
    (web,) = [s for s in client.all("/api/v1/services") if s["name"] == "Web"]
    assert (entry["kind"], entry["vendor"], entry["external_id"], entry["tocsin_id"]) == (
        "service",
        "pagerduty",
        "PWEB1",
        web["service_id"],
    )
    renamed = with_source.replace("name: Web\n", "name: Storefront\n").replace(
        "[Payments, Web]", "[Payments, Storefront]"
    )
    planned = tocsin(transport, org.owner_key, "config", "plan", "-f", "-", now=NOW, stdin=renamed)
    assert '  ~ service \'Storefront\' (found by its source)\n      name: "Web" -> "Storefront"' in planned.out
    apply(transport, org.owner_key, renamed)
    names = sorted(s["name"] for s in client.all("/api/v1/services"))
    assert names == ["Payments", "Storefront"]
    assert [s["service_id"] for s in client.all("/api/v1/services") if s["name"] == "Storefront"] == [web["service_id"]]
    exported = export(transport, org.owner_key)
    assert "  - name: Storefront\n    source:\n      vendor: pagerduty\n      id: PWEB1\n" in exported
    # Pruning the service takes its ledger entry with it.
    without = renamed.replace("  - name: Storefront\n    source: {vendor: pagerduty, id: PWEB1}\n", "").replace(
        "[Payments, Storefront]", "[Payments]"
    )
    apply(transport, org.owner_key, without, "--prune")
    assert client.all("/api/v1/external-refs") == []


def test_plan_as_json_and_the_detailed_exit_code(transport: InProcess, org: Org) -> None:
    ran = tocsin(
        transport, org.owner_key, "config", "plan", "-f", "-", "--json", "--detailed-exitcode", now=NOW, stdin=FULL
    )
    assert ran.status == 2
    body = json.loads(ran.out)
    assert body["organization"] == "Acme" and body["changes_pending"] is True
    assert body["summary"] == {"create": 16, "update": 0, "delete": 0, "skip": 0}
    assert [(a["op"], a["kind"], a["name"]) for a in body["actions"][:3]] == [
        ("create", "user", "alice@example.com"),
        ("create", "user", "bob@example.com"),
        ("create", "user", "carol@example.com"),
    ]
    assert tocsin(transport, org.owner_key, "config", "plan", "-f", "-", now=NOW, stdin=FULL).status == 0
