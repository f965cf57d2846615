"""DynamoDB requests per API operation, counted at the client with botocore events.

    .venv/bin/python bench/round_trips.py [--runs N]

Runs in-process on moto (no network, no real AWS account) and drives the real routes through
chalice.test.Client. Every DynamoDB call made through the app's clients is recorded with the
tables it touches and attributed to authentication (the api-keys table), rate limiting (the
rate-limits table) or the operation itself (everything else). Each operation is measured once
on a "fresh instance" (the in-process caches a new Lambda instance starts without are cleared:
organization settings, verified keys, clients and queue URLs) and then N more times warm.

Prints figures only; never fails on them, always exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._support import (  # noqa: E402
    DynamoCall,
    DynamoCounter,
    Measurement,
    configure_environment,
    moto_account,
    table,
)
from chalicelib.settings import get_settings  # noqa: E402

DEFAULT_RUNS = 3  # warm runs per operation, after the first (cold) one
AUTH_PLUS_RATE_LIMIT_TARGET = 2


@dataclass(frozen=True)
class Target:
    """The issue's target for the operation's own DynamoDB requests (None: the issue sets none)."""

    own: int | None
    label: str
    idempotency_writes: int = 0  # allowed on top, on the idempotency table only


@dataclass
class Fixture:
    organization_id: str
    owner_key: str
    personal_key: str
    service_key: str
    assignee_email: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    key: str | None = None  # None: the owner (service account) key


Prepare = Callable[[Fixture, int], Request]  # (fixture, run index) -> the request to measure


@dataclass(frozen=True)
class Operation:
    name: str
    target: Target
    prepare: Prepare
    expect: int


@dataclass
class Outcome:
    operation: Operation
    first: Measurement
    warm: list[Measurement]


# ---------------------------------------------------------------- fixture and preparation (not measured)


def _now() -> Any:
    from chalicelib import clock

    return clock.now()


def make_fixture() -> Fixture:
    from chalicelib.apikey.service import create_api_key
    from chalicelib.auth.scopes import ALL_SCOPES
    from chalicelib.catalog.service import create_service
    from chalicelib.directory.teams import create_team
    from chalicelib.directory.users import create_user
    from chalicelib.organization.service import create_organization

    now = _now()
    organization = create_organization(name="Bench Org", now=now)
    org_id = organization.organization_id
    _, owner_key = create_api_key(
        organization_id=org_id,
        name="owner",
        kind="service_account",
        scopes=list(ALL_SCOPES),
        now=now,
        settings=get_settings(),
    )
    team = create_team(organization_id=org_id, name="Payments", now=now)
    service = create_service(
        organization_id=org_id, name="Payments API", now=now, team_id=team.team_id, default_severity="SEV2"
    )
    alice = create_user(organization_id=org_id, name="Alice Example", email="alice@example.com", now=now)
    _, personal_key = create_api_key(
        organization_id=org_id,
        name="alice",
        kind="personal",
        scopes=list(ALL_SCOPES),
        user_id=alice.user_id,
        user_email=alice.email,
        now=now,
        settings=get_settings(),
    )
    return Fixture(org_id, owner_key, personal_key, service.service_key, str(alice.email))


def _principal(fixture: Fixture) -> Any:
    from chalicelib.auth.principal import Principal
    from chalicelib.auth.scopes import ALL_SCOPES

    return Principal(
        organization_id=fixture.organization_id,
        credential_kind="api_key",
        scopes=frozenset(ALL_SCOPES),
        display_name="bench (API key)",
    )


def new_incident(fixture: Fixture, title: str = "Checkout errors") -> str:
    """Straight through the service layer: no request, no rate-limit charge."""
    from chalicelib.incident import service

    record = service.create_incident(
        organization_id=fixture.organization_id,
        request=service.NewIncident(title=title, service_keys=[fixture.service_key]),
        now=_now(),
        actor="bench",
        settings=get_settings(),
    )
    return str(record.incident_number)


def resolve(fixture: Fixture, number: str) -> None:
    from chalicelib.incident import commands

    commands.change_status(
        organization_id=fixture.organization_id,
        incident_number=number,
        status="resolved",
        comment=None,
        now=_now(),
        principal=_principal(fixture),
    )


def shared_incident(fixture: Fixture) -> str:
    if "shared" not in fixture.extra:
        fixture.extra["shared"] = new_incident(fixture, "Shared incident")
    return str(fixture.extra["shared"])


def _create_body(fixture: Fixture, title: str) -> dict[str, Any]:
    return {"title": title, "service_ids": [fixture.service_key]}


def prepare_create(fixture: Fixture, run: int) -> Request:
    return Request("POST", "/api/v1/incidents", _create_body(fixture, f"Create {run}"))


def prepare_create_idempotent(fixture: Fixture, run: int) -> Request:
    return Request(
        "POST",
        "/api/v1/incidents",
        _create_body(fixture, f"Idempotent create {run}"),
        headers={"Idempotency-Key": f"bench-{uuid.uuid4()}"},
    )


def prepare_get(fixture: Fixture, run: int) -> Request:
    return Request("GET", f"/api/v1/incidents/{shared_incident(fixture)}")


def prepare_list_default(fixture: Fixture, run: int) -> Request:
    shared_incident(fixture)
    return Request("GET", "/api/v1/incidents")


def prepare_list_filtered(fixture: Fixture, run: int) -> Request:
    if "resolved" not in fixture.extra:
        for index in range(3):
            resolve(fixture, new_incident(fixture, f"Resolved {index}"))
        fixture.extra["resolved"] = True
    return Request("GET", "/api/v1/incidents?status=resolved&severity=SEV2")


def prepare_patch_title(fixture: Fixture, run: int) -> Request:
    return Request("PATCH", f"/api/v1/incidents/{shared_incident(fixture)}", {"title": f"Renamed {uuid.uuid4().hex}"})


def prepare_patch_assignee(fixture: Fixture, run: int) -> Request:
    number = new_incident(fixture, f"To assign {run}")  # unassigned, so the assignment is a change
    return Request("PATCH", f"/api/v1/incidents/{number}", {"assigned_to": fixture.assignee_email})


def prepare_status(fixture: Fixture, run: int) -> Request:
    number = new_incident(fixture, f"To resolve {run}")
    return Request("POST", f"/api/v1/incidents/{number}/status", {"status": "resolved"})


def prepare_acknowledge(fixture: Fixture, run: int) -> Request:
    number = new_incident(fixture, f"To acknowledge {run}")
    return Request("POST", f"/api/v1/incidents/{number}/acknowledge")


def prepare_acknowledge_personal(fixture: Fixture, run: int) -> Request:
    number = new_incident(fixture, f"To acknowledge (personal) {run}")
    return Request("POST", f"/api/v1/incidents/{number}/acknowledge", key=fixture.personal_key)


def prepare_comment(fixture: Fixture, run: int) -> Request:
    return Request("POST", f"/api/v1/incidents/{shared_incident(fixture)}/events", {"comment": f"Note {run}"})


def prepare_verify(fixture: Fixture, run: int) -> Request:
    return Request("GET", "/api/v1/auth/verify")


CREATE = Target(4, "<=4")
WRITE = Target(2, "<=2")
OPERATIONS = [
    Operation("create incident", CREATE, prepare_create, 201),
    Operation(
        "create incident + Idempotency-Key",
        Target(4, "<=4 +2 idem", idempotency_writes=2),
        prepare_create_idempotent,
        201,
    ),
    Operation("get incident", Target(1, "=1"), prepare_get, 200),
    Operation("list (default)", Target(2, "<=2"), prepare_list_default, 200),
    Operation("list ?status=resolved&severity=SEV2", Target(2, "<=2 (as list)"), prepare_list_filtered, 200),
    Operation("PATCH title", WRITE, prepare_patch_title, 200),
    Operation("PATCH assigned_to", WRITE, prepare_patch_assignee, 200),
    Operation("POST status (resolved)", WRITE, prepare_status, 200),
    Operation("POST acknowledge (service account key)", WRITE, prepare_acknowledge, 200),
    Operation("POST acknowledge (personal key)", WRITE, prepare_acknowledge_personal, 200),
    Operation("POST events (comment)", WRITE, prepare_comment, 200),
    Operation("GET auth/verify", Target(None, "-"), prepare_verify, 200),
]


# ---------------------------------------------------------------- running


class Bench:
    def __init__(self, client: Any, counter: DynamoCounter, fixture: Fixture) -> None:
        self.client = client
        self.counter = counter
        self.fixture = fixture

    def send(self, request: Request) -> tuple[int, Any]:
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {request.key or self.fixture.owner_key}",
            **request.headers,
        }
        body = json.dumps(request.body).encode() if request.body is not None else b""
        response = self.client.http.request(request.method, request.path, headers=headers, body=body)
        return response.status_code, json.loads(response.body or b"null")

    def measure(self, request: Request, expect: int) -> Measurement:
        with self.counter.measure() as measurement:
            status, document = self.send(request)
        if status != expect:
            print(f"  ! {request.method} {request.path} answered {status}, expected {expect}: {document}")
        return measurement

    def fresh_instance(self) -> None:
        """What a new Lambda instance starts without: cached settings of organizations, keys, clients, queue URLs."""
        from chalicelib import aws
        from chalicelib.apikey import service as apikeys
        from chalicelib.incident import workflow_settings as incident_settings

        aws.reset()
        incident_settings.forget()
        apikeys.clear_cache()
        self.counter.install_on_app_clients()  # the new clients are counted too

    def run(self, operation: Operation, warm_runs: int) -> Outcome:
        requests = [operation.prepare(self.fixture, run) for run in range(warm_runs + 1)]
        self.fresh_instance()
        first = self.measure(requests[0], operation.expect)
        warm = [self.measure(request, operation.expect) for request in requests[1:]]
        return Outcome(operation, first, warm)


def run_suite(bench: Bench, warm_runs: int) -> tuple[list[Measurement], list[Outcome]]:
    """Each key is used once first: its first request in API_KEY_LAST_USED_RESOLUTION_SECONDS stamps last_used_at."""
    bench.fresh_instance()
    key_first_use = [
        bench.measure(Request("GET", "/api/v1/auth/verify", key=key), 200)
        for key in (bench.fixture.owner_key, bench.fixture.personal_key)
    ]
    return key_first_use, [bench.run(operation, warm_runs) for operation in OPERATIONS]


# ---------------------------------------------------------------- reporting


def breakdown(calls: list[DynamoCall]) -> str:
    return " ".join(call.describe() for call in calls) or "-"


def verdict(measurement: Measurement, target: Target) -> str:
    auth_rl = len(measurement.of("auth")) + len(measurement.of("rate_limit"))
    problems = []
    if auth_rl > AUTH_PLUS_RATE_LIMIT_TARGET:
        problems.append(f"auth+rl {auth_rl}>{AUTH_PLUS_RATE_LIMIT_TARGET}")
    if target.own is not None:
        own = measurement.of("own")
        idempotency = [c for c in own if set(c.tables) == {"idempotency"}]
        rest = len(own) - len(idempotency)
        if rest > target.own:
            problems.append(f"own {rest}>{target.own}")
        if len(idempotency) > target.idempotency_writes:
            problems.append(f"idem {len(idempotency)}>{target.idempotency_writes}")
    if problems:
        return "OVER (" + ", ".join(problems) + ")"
    return "OK" if target.own is not None else "OK (auth+rl)"


def _signature(measurement: Measurement) -> tuple[str, ...]:
    return tuple(call.describe() for call in measurement.calls)


def row(name: str, when: str, measurement: Measurement, target: Target, note: str = "") -> list[str]:
    wire = "" if measurement.wire_requests == measurement.total else f" [moto saw {measurement.wire_requests}]"
    retries = sum(call.retry_attempts for call in measurement.calls)
    return [
        name,
        when,
        str(measurement.total),
        str(len(measurement.of("auth"))),
        str(len(measurement.of("rate_limit"))),
        str(len(measurement.of("own"))),
        target.label,
        verdict(measurement, target),
        breakdown(measurement.of("own"))
        + (f"  auth: {breakdown(measurement.of('auth'))}" if len(measurement.of("auth")) > 1 else "")
        + note
        + wire
        + (f" [{retries} retries]" if retries else ""),
    ]


HEADERS = ["operation", "call", "total", "auth", "rate limit", "own", "target (own)", "verdict", "own calls"]


def report(title: str, key_first_use: list[Measurement], outcomes: list[Outcome], warm_runs: int) -> list[str]:
    """Prints the table; returns the OVER lines."""
    rows = [
        row(f"GET auth/verify, {kind} key's first use", "first", measurement, Target(None, "-"))
        for kind, measurement in zip(("owner", "personal"), key_first_use, strict=True)
    ]
    over = [
        f"{r[0]}: {r[7]}: last_used_at stamp, UpdateItem(api-keys), once per key per 300 s"
        for r in rows
        if r[7].startswith("OVER")
    ]
    for outcome in outcomes:
        name, target = outcome.operation.name, outcome.operation.target
        rows.append(row(name, "first", outcome.first, target))
        distinct = {_signature(m) for m in outcome.warm}
        steady = max(outcome.warm, key=lambda m: m.total)
        note = "" if len(distinct) == 1 else f" (varies over {warm_runs} runs: {sorted(m.total for m in outcome.warm)})"
        rows.append(row("", f"warm x{len(outcome.warm)}", steady, target, note))
        for when, measurement in (("first", outcome.first), ("warm", steady)):
            result = verdict(measurement, target)
            if result.startswith("OVER"):
                over.append(f"{name} [{when}]: {result}: {breakdown(measurement.of('own'))}")
    print(title)
    print()
    print(table(HEADERS, rows, right=frozenset({2, 3, 4, 5})))
    print()
    return over


def _totals(first_use: list[Measurement], outcomes: list[Outcome]) -> tuple[int, int]:
    measurements = [*first_use, *(m for o in outcomes for m in (o.first, *o.warm))]
    return sum(m.total for m in measurements), sum(m.wire_requests for m in measurements)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=DEFAULT_RUNS, help=f"warm runs per operation ({DEFAULT_RUNS})")
    warm_runs = max(1, parser.parse_args(argv).runs)

    configure_environment(AUTH_CACHE_SECONDS="0")
    from chalice.test import Client

    from chalicelib.apikey import service as apikeys
    from chalicelib.settings import get_settings, reset_settings

    print("DynamoDB requests per API operation (in-process moto, chalice.test.Client, counted at the client)")
    print("auth = calls on the api-keys table; rate limit = calls on the rate-limits table; own = every other table.")
    print(
        "first = the first call on a fresh instance (org settings, key, client and queue URL caches empty); "
        f"warm = the most expensive of the next {warm_runs} calls."
    )
    print()
    with moto_account():
        counter = DynamoCounter()
        counter.count_wire_requests()
        counter.install_on_app_clients()
        fixture = make_fixture()

        import logging

        from app import app

        logging.getLogger("tocsin").setLevel(logging.WARNING)  # no access log lines between the tables

        with Client(app, project_dir=str(ROOT)) as client:
            bench = Bench(client, counter, fixture)
            first_use, outcomes = run_suite(bench, warm_runs)
            counted = _totals(first_use, outcomes)
            over = report(
                "1) AUTH_CACHE_SECONDS=0 (the default: every request reads its key)", first_use, outcomes, warm_runs
            )

            # Settings are read outside a test-client call: during one, the Chalice stage's variables apply.
            import os

            os.environ["AUTH_CACHE_SECONDS"] = "30"
            reset_settings()
            apikeys.clear_cache()
            get_settings()
            first_use, outcomes = run_suite(bench, warm_runs)
            more = _totals(first_use, outcomes)
            counted = (counted[0] + more[0], counted[1] + more[1])
            over_cached = report(
                "2) AUTH_CACHE_SECONDS=30 (verified keys cached in-process; the first call on an instance reads it)",
                first_use,
                outcomes,
                warm_runs,
            )

    print(
        f"Cross-check: the client-side handlers counted {counted[0]} DynamoDB calls in the measured requests; "
        f"moto received {counted[1]} DynamoDB requests meanwhile (a difference would mean an unhooked client "
        "or retries)."
    )
    print()
    print("Targets (issue): auth + rate limit <= 2 per request; get = 1; default list <= 2; create <= 4 (+ the")
    print("idempotency record's claim and completion writes when a key is sent); every other write <= 2.")
    print("The list and verify targets apply to the operation's own requests. SQS calls are not counted.")
    print()
    for label, lines in (("AUTH_CACHE_SECONDS=0", over), ("AUTH_CACHE_SECONDS=30", over_cached)):
        print(f"OVER lines with {label}: {len(lines)}")
        for line in lines:
            print(f"  - {line}")
    return 0


if __name__ == "__main__":
    main()
