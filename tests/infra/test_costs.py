"""docs/DEPLOY.md prices a webhook by its round trips; this keeps those round trips true."""

from __future__ import annotations

from chalicelib.deploy.stages import ROOT
from tests.infra.webhook_round_trips import measure

DEPLOY_DOC = ROOT / "docs" / "DEPLOY.md"
# As priced in docs/DEPLOY.md ("Cost estimate"). When this changes, update the tables there.
EXPECTED = {
    "new incident": [
        "GetItem integrations (consistent)",
        "UpdateItem rate-limits",
        "GetItem alert-dedup (consistent)",
        "GetItem services",
        "BatchGetItem event-rule-sets",
        "Query maintenance-services",
        "UpdateItem counters",
        "TransactWriteItems [Put alerts, Put alert-dedup, Put incidents, Put incidents]",
        "SendMessage events",
        "PutItem integration-events",  # the integration's event log, after the answer (its own slot)
    ],
    # Post-create work in the worker (service without an escalation policy): auto-assignment looks
    # for the primary on call, escalation finds no policy, so the incident says nobody is paged
    # (reading the fallback contacts, writing the decision and its entry); the SLA check is queued.
    "new incident, queued work": [
        "GetItem incidents (consistent)",
        "BatchGetItem services",
        "GetItem organizations (consistent)",
        "TransactWriteItems [Put incidents, Put incidents]",
        "SendMessage events",
        "Query webhook-subscriptions",
    ],
    "dedup hit": [
        "GetItem integrations (consistent)",
        "UpdateItem rate-limits",
        "GetItem alert-dedup (consistent)",
        "UpdateItem alerts",
        "UpdateItem incidents",
        "SendMessage events",
        "PutItem integration-events",
    ],
    "dedup hit, queued work": ["PutItem incidents"],
}


def test_webhook_round_trips_are_the_ones_the_cost_estimate_prices() -> None:
    measured = measure()
    assert measured == EXPECTED, (
        "a webhook's DynamoDB/SQS round trips changed: update EXPECTED here and the cost estimate in "
        f"docs/DEPLOY.md (python -m tests.infra.webhook_round_trips prints them). Measured: {measured}"
    )


def test_the_cost_estimate_lists_every_round_trip() -> None:
    text = DEPLOY_DOC.read_text()
    for requests in EXPECTED.values():
        for request in requests:
            assert f"`{request}`" in text, request
