"""Event rules cannot make an event cost a webhook's whole time: writes past a list's `matches`
budget are a 400 naming the condition, a dry run needs integrations:write, and rules that still
run past the time budget (a list stored before the budget) leave the alert kept and paged as if
no rule matched, with a warning logged and shown by the dry run."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from chalicelib.catalog.service import Service
from chalicelib.eventrule import evaluate as evaluation
from chalicelib.eventrule.regex import program_size
from chalicelib.eventrule.rules import MAX_INSTRUCTIONS_PER_LIST, Actions, Condition, Rule, rule_to_item
from chalicelib.eventrule.tables import EventRuleSetRecord, list_key
from tests.api.test_auth_api import session_token
from tests.api.test_noise_control_api import custom_hook, ok, send
from tests.api.test_webhooks_api import api

# Fixtures of test_webhooks_api, re-exported so pytest finds them here (frozen_clock is autouse).
from tests.api.test_webhooks_api import frozen_clock as frozen_clock
from tests.api.test_webhooks_api import services as services
from tests.conftest import NOW, Org

ORG_LIST = "/api/v1/event-rules"
HOSTNAME = r"^(prod|staging)-[a-z0-9-]{1,63}\.example\.com$"  # a real pattern, about 280 instructions
HEAVY = r"(?:.{1,50}){1,5}Z"  # the probe's kind: over 2,000


def matching(pattern: str, field: str = "title") -> dict[str, str]:
    return {"field": field, "op": "matches", "value": pattern}


def refused(answer: Any) -> list[str]:
    assert answer.status_code == 400, answer.body
    return [f["field"] for f in answer.json["error"]["details"]["fields"]]


def test_a_viewer_may_not_run_the_dry_run(client: Any, org: Org) -> None:
    viewer = api(client, "post", ORG_LIST + "/test", session_token(org, "viewer"), {"title": "x"})
    assert viewer.status_code == 403
    assert viewer.json["error"]["details"]["required_scope"] == "integrations:write"
    assert api(client, "post", ORG_LIST + "/test", session_token(org, "admin"), {"title": "x"}).status_code == 200


def test_writes_past_the_lists_budget_are_refused_naming_the_condition(
    client: Any, org: Org, services: list[Service]
) -> None:
    heavy = {"conditions": [matching(HEAVY)], "actions": {"note": "x"}}
    assert refused(api(client, "post", ORG_LIST, org.owner_key, heavy)) == ["conditions.0.value"]

    # The probe's list: rules of 16 `matches` conditions. The budget stops it within two rules.
    sixteen = {"conditions": [matching(HOSTNAME, f"labels.l{n}") for n in range(16)], "actions": {"note": "x"}}
    first = api(client, "post", ORG_LIST, org.owner_key, sixteen)
    assert first.status_code == 201, first.body
    crossing = (MAX_INSTRUCTIONS_PER_LIST - 16 * program_size(HOSTNAME)) // program_size(HOSTNAME)
    assert refused(api(client, "post", ORG_LIST, org.owner_key, sixteen)) == [f"conditions.{crossing}.value"]
    # equals and contains cost next to nothing: they still fit.
    cheap = {"conditions": [{"field": "title", "op": "contains", "value": "disk"}], "actions": {"note": "y"}}
    assert api(client, "post", ORG_LIST, org.owner_key, cheap).status_code == 201
    # Another list (an integration's) has its own budget.
    hook = custom_hook(client, org, services[0])
    assert (
        api(client, "post", f"/api/v1/integrations/{hook['id']}/event-rules", org.owner_key, sixteen).status_code == 201
    )

    # An edit that costs more is checked; one that costs less or moves a rule is not.
    cheap_id = ok(api(client, "get", ORG_LIST, org.owner_key))["items"][1]["id"]
    grown = {"conditions": [matching(HOSTNAME)] * 4}
    assert refused(api(client, "patch", f"{ORG_LIST}/{cheap_id}", org.owner_key, grown)) == [
        f"conditions.{crossing}.value"
    ]
    first_id = first.json["data"]["id"]
    shrunk = {"conditions": [matching("^db-[0-9]+$", "labels.l0")], "position": 1}
    assert api(client, "patch", f"{ORG_LIST}/{first_id}", org.owner_key, shrunk).status_code == 200


def plant(organization_id: str, *rules: Rule) -> None:
    """A list as it may have been stored before the budget existed: written past every check."""
    record = EventRuleSetRecord(organization_id, list_key(None))
    record.rules_json = json.dumps([rule_to_item(rule) for rule in rules])
    record.updated_at = NOW
    record.save()


def test_past_the_time_budget_the_alert_is_kept_and_paged_with_a_warning(
    client: Any, org: Org, services: list[Service], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    quiet = Rule(
        rule_id="evr_" + "0" * 32,
        conditions=(Condition("title", "contains", "disk"), Condition("labels.env", "equals", "prod")),
        actions=Actions(suppress=True, note="never page prod disks"),
        continues=False,
        description=None,
        version=1,
        created_at=NOW,
    )
    plant(org.organization_id, quiet)
    hook = custom_hook(client, org, services[0])
    assert send(client, hook, "Disk full", "before", metadata={"env": "prod"}).json["suppressed"] is True

    monkeypatch.setattr(evaluation, "EVALUATION_BUDGET_SECONDS", -1.0)  # every evaluation is already late
    with caplog.at_level(logging.WARNING, logger="tocsin.eventrule"):
        paged = send(client, hook, "Disk full again", "after", metadata={"env": "prod"})
    assert paged.status_code == 201, paged.body  # kept, not suppressed: an incident, paged
    assert paged.json["suppressed"] is False and paged.json["incident"] is not None
    alert = ok(api(client, "get", f"/api/v1/alerts/{paged.json['alert']['id']}", org.owner_key))
    assert alert["suppressed_by"] is None and alert["rule_notes"] in (None, [])
    [logged] = [r for r in caplog.records if r.getMessage() == "event rules over their time budget"]
    assert logged.__dict__["organization_id"] == org.organization_id and "kept and paged" in logged.__dict__["warning"]

    dry = ok(api(client, "post", ORG_LIST + "/test", org.owner_key, {"title": "Disk", "labels": {"env": "prod"}}))
    assert (dry["suppressed"], dry["matched_rule_ids"]) == (False, [])
    assert len(dry["warnings"]) == 1 and "as if no rule matched" in dry["warnings"][0]
