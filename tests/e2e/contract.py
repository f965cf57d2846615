"""Schemathesis against the running local stack: the served document and the code agree.

Every documented operation is called with requests generated from the document itself (its
examples, a coverage sweep of each schema's edges, then random positive and negative data), with
the demo owner key as the bearer. The checks: no 5xx, every status and body as documented,
what the document refuses is refused, and what it allows is not refused by the request model.

Business rules JSON Schema cannot state (an id of something that does not exist, `until` after
`since`, a workflow whose initial status is one of its statuses) answer a 400 the document lists
and describes; Schemathesis' own "schema-valid request rejected" check cannot tell those from a
document that says too little, so `request_model_accepts_valid_input` replaces it: a 400 from the
request model itself (the pydantic model the document is generated from) is always a disagreement.

Bounded for CI: a few examples per operation, derandomized, on a throwaway stack of its own (the
run deletes and rotates demo data). Rate limits are raised so the run meets no 429.

The sweep is split into PARTS groups of operations, one test module each
(tests/e2e/test_api_contract_<n>.py), so that with `--dist loadfile` its parts run on different
workers instead of bounding the suite's wall time as one file: each operation falls in exactly one
group (`groups`) and gets the same examples as in one sweep.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import schemathesis
from schemathesis import Case, CheckContext, Response
from schemathesis.config import SchemathesisConfig

from tests.e2e.conftest import LocalStack, start_stack, stop_stack

# The whole sweep took ~5 minutes on an idle 2-CPU machine; CONTRACT_SWEEP_TIMEOUT gives a busy one
# longer (each part module marks its tests with it).
TIMEOUT = pytest.mark.timeout(int(os.environ.get("CONTRACT_SWEEP_TIMEOUT", "600")))
PARTS = 2

# The messages of chalicelib.api.validation when the request model refuses a body or a query.
MODEL_REFUSALS = {"The request body is invalid.", "The query parameters are invalid."}
# Rules between two fields that the request models check and JSON Schema cannot state; each is
# written in its field's or operation's description in the document.
CROSS_FIELD_RULES = (
    "acknowledge_within_minutes must not exceed resolve_within_minutes",
    "must not be earlier than ",
)
# What the issue asks of the run; Schemathesis runs its other checks too.
REQUIRED_CHECKS = {
    "not_a_server_error",
    "status_code_conformance",
    "response_schema_conformance",
    "content_type_conformance",
    "negative_data_rejection",
    "request_model_accepts_valid_input",
}
UNLIMITED = "1000000"
HTTP = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
EXAMPLES_PER_OPERATION = 3


@schemathesis.check
def request_model_accepts_valid_input(ctx: CheckContext, response: Response, case: Case) -> bool | None:
    """A schema-valid request must not be refused by the request model the schema came from."""
    if case.meta is None or not case.meta.generation.mode.is_positive or response.status_code != 400:
        return None
    try:
        error = json.loads(response.content).get("error", {})
    except (ValueError, AttributeError):
        return None
    problems = [field.get("message", "") for field in (error.get("details") or {}).get("fields", [])]
    if error.get("message") in MODEL_REFUSALS and not _cross_field_only(problems):
        raise AssertionError(
            f"The document allows a request its model refuses: {json.dumps(error.get('details'))[:500]}"
        )
    return None


def _cross_field_only(problems: list[str]) -> bool:
    return bool(problems) and all(any(rule in problem for rule in CROSS_FIELD_RULES) for problem in problems)


def _demo_ids(stack: LocalStack) -> dict[str, list[str]]:
    """Ids of the demo data by path parameter name: most generated requests use one of them, so the
    operations behind an id are exercised past their 404 (the rest stay random)."""
    demo = stack.demo
    incident = stack.post(
        "/api/v1/incidents", json={"title": "Contract sweep", "service_ids": [demo["services"][0]["service_key"]]}
    )
    pages = stack.get("/api/v1/status-pages").json()["data"]["items"]
    integrations = stack.get("/api/v1/integrations").json()["data"]["items"]
    opsgenie = _opsgenie_alert(stack)
    return {
        "id": [incident.json()["data"]["incident_number"]],
        "page_id": [page["id"] for page in pages],
        "schedule_id": [demo["on_call"]["schedule_id"]],
        "policy_id": [demo["on_call"]["escalation_policy_id"]],
        "team_id": [demo["team"]["id"]],
        "user_id": [user["id"] for user in demo["users"]],
        "service_ref": [service["service_id"] for service in demo["services"]],
        "subscription_id": [demo["webhook_subscription"]["subscription_id"]],
        "integration_id": [integration["id"] for integration in integrations],
        "routing_key": [integration["routing_key"] for integration in demo["integrations"].values()],
        "slug": [demo["status_page"]["slug"]],
        # The Opsgenie drop-in's: an alert of its own (by id, alias or tiny id), the request that made
        # it, and the demo heartbeat's name.
        "identifier": [opsgenie["alertId"], opsgenie["alias"], "1"],
        "request_id": [opsgenie["requestId"]],
        "name": [demo["noise_control"]["heartbeat"]["name"]],
    }


def _genie_key(stack: LocalStack) -> dict[str, str]:
    return {"Authorization": f"GenieKey {stack.demo['integrations']['opsgenie']['routing_key']}"}


def _opsgenie_alert(stack: LocalStack) -> dict[str, str]:
    """An alert made through the Opsgenie drop-in: its id and alias, and its request's id."""
    made = stack.post("/v2/alerts", headers=_genie_key(stack), json={"message": "Contract sweep", "alias": "sweep"})
    assert made.status_code == 202, made.text
    request_id = made.json()["requestId"]
    status = stack.get(f"/v2/alerts/requests/{request_id}", headers=_genie_key(stack))
    assert status.status_code == 200, status.text
    return {"requestId": request_id, **status.json()["data"]}


def _config(stack: LocalStack, part: int) -> SchemathesisConfig:
    ids = _demo_ids(stack)
    document = stack.get("/api/v1/openapi.json").json()
    labels = [
        f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item if method in HTTP
    ]
    # The other parts' operations are switched off: Schemathesis 4.32 ignores schema.include() when
    # the schema has a config, and each part swept every operation.
    others = sorted(label for label, group in groups(labels).items() if group != part)
    return SchemathesisConfig.from_dict(
        {
            "dictionaries": {name: {"values": values} for name, values in ids.items()},
            "parameters": {f"path.{name}": {"dictionary": name, "probability": 0.8} for name in ids},
            "seed": 13,
            # A schedule time is a format date-time with a year-range pattern on top: for some seeds
            # the generator throws most candidates away and Hypothesis calls that a failed health
            # check, though the API did nothing wrong. The bounded sweep keeps what it generated.
            "suppress-health-check": ["filter_too_much"],
            # One worker: with two, CPython 3.11 sometimes fails hypothesis's lambda descriptions
            # (SystemError: AST constructor recursion depth mismatch) and the run reports an error.
            "workers": 1,
            # Schemathesis gives up on a response after 10 s by default and reports it as a failure.
            # On a 2-CPU machine shared by several suites a local response took up to 24 s: the
            # harness waits longer, the checks are the same.
            "request-timeout": 120,
            "headers": {"Authorization": f"Bearer {stack.demo['api_keys']['owner']}"},
            "generation": {
                "max-examples": EXAMPLES_PER_OPERATION,
                "deterministic": True,
                "no-shrink": True,
                "database": "none",
            },
            "continue-on-failure": True,
            "checks": {
                "positive_data_acceptance": {"enabled": False},
                "request_model_accepts_valid_input": {"enabled": True},
            },
            "operations": [
                {
                    # The Opsgenie drop-in's credential is an Opsgenie integration's key, not the bearer.
                    "include-tag": "opsgenie",
                    "headers": _genie_key(stack),
                },
                {
                    # Slack's Web API answers every request with 200 and `ok: false` plus an error
                    # name when it cannot use it; the local sink does the same, as documented.
                    "include-operation-id": "localSlackPostMessage",
                    "checks": {"negative_data_rejection": {"enabled": False}},
                },
                {
                    # The sink's chat.update and chat.postEphemeral (what a Slack click answers) too.
                    "include-operation-id": "localSlackUpdate",
                    "checks": {"negative_data_rejection": {"enabled": False}},
                },
                {
                    "include-operation-id": "localSlackPostEphemeral",
                    "checks": {"negative_data_rejection": {"enabled": False}},
                },
                {"include-name": others, "enabled": False},
                {
                    # DELETE of an integration revokes it: the record stays readable with
                    # `state: "revoked"` (its URL answers 410 WEBHOOK_REVOKED), as documented on the
                    # operation. Schemathesis's use-after-free check expects a 404 after any DELETE.
                    "include-operation-id": "getIntegration",
                    "checks": {"use_after_free": {"enabled": False}},
                },
            ],
        }
    )


def contract_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    """A throwaway stack with the rate limits raised (a part module's fixture)."""
    limits = ("RATE_LIMIT_API_KEY", "RATE_LIMIT_SESSION", "RATE_LIMIT_ANONYMOUS", "RATE_LIMIT_WEBHOOK")
    limits += ("RATE_LIMIT_STATUS_SUBSCRIBE", "SUBSCRIBE_EMAILS_PER_ADDRESS_PER_HOUR")
    running = start_stack(tmp_path_factory.mktemp("contract"), **dict.fromkeys(limits, UNLIMITED))
    yield running
    stop_stack(running)


def groups(labels: list[str]) -> dict[str, int]:
    """Each operation's group ("GET /api/v1/incidents" -> 0..PARTS-1): every other operation in
    label order, so the parts are the same size and every process agrees on them."""
    return {label: index % PARTS for index, label in enumerate(sorted(labels))}


@dataclass
class Run:
    operations: int = 0
    requests: int = 0
    seconds: float = 0.0
    failures: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    statuses: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    checks: set[str] = field(default_factory=set)


def _describe(label: str, check: str, interaction: Any, message: str) -> str:
    request = interaction.request if interaction else None
    response = interaction.response if interaction else None
    body = request.body.decode(errors="replace")[:300] if request is not None and request.body else ""
    answer = response.content.decode(errors="replace")[:300] if response is not None and response.content else ""
    status = response.status_code if response is not None else None
    where = f"{request.method} {request.uri}" if request is not None else label
    return f"{check} | {label} | {where} {body} -> {status} {answer} | {message[:400]}"


def sweep(stack: LocalStack, part: int) -> Run:
    """The sweep of the operations in group `part` (0 <= part < PARTS)."""
    from schemathesis import engine
    from schemathesis.engine import events

    schema = schemathesis.openapi.from_url(stack.base_url + "/api/v1/openapi.json", config=_config(stack, part))
    run = Run(operations=len([r for r in schema.get_all_operations()]))
    started = time.monotonic()
    for event in engine.from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            recorder = event.recorder
            for case_id, interaction in recorder.interactions.items():
                run.requests += 1
                if interaction.response is not None:
                    label = recorder.cases[case_id].value.operation.label
                    run.statuses[label].add(interaction.response.status_code)
            for case_id, checks in recorder.checks.items():
                for check in checks:
                    run.checks.add(check.name)
                    if check.status == engine.Status.FAILURE and check.failure_info is not None:
                        failure = check.failure_info.failure
                        message = f"{failure.title}: {failure.message}"
                        run.failures.append(
                            _describe(recorder.label, check.name, recorder.interactions.get(case_id), message)
                        )
        elif isinstance(event, events.NonFatalError):
            run.errors.append(f"{event.label}: {event.value!r}")
        elif isinstance(event, events.FatalError):
            run.errors.append(f"fatal: {event.exception!r}")
    run.seconds = time.monotonic() - started
    return run


def assert_no_check_fails(run: Run) -> None:
    print(f"\n{run.operations} operations, {run.requests} requests in {run.seconds:.0f} s")
    assert run.errors == []
    failures = sorted(set(run.failures))
    assert failures == [], "\n".join(failures)
    assert run.checks >= REQUIRED_CHECKS


def assert_every_operation_was_exercised(run: Run) -> None:
    """Every operation got requests, and some got past authentication (the demo ids see to it)."""
    assert run.operations > 0
    assert len(run.statuses) == run.operations
    answered = {label for label, statuses in run.statuses.items() if statuses - {401, 403}}
    assert sorted(set(run.statuses) - answered) == []
    succeeded = [label for label, statuses in run.statuses.items() if any(200 <= s < 300 for s in statuses)]
    print(f"\n{len(succeeded)} of {run.operations} operations answered a 2xx")
