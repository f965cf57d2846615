"""What the integrations' event log costs each inbound request: DynamoDB requests and latency,
with its after-answer step on and off.

    .venv/bin/python bench/event_log.py [--requests 40]

In process: moto mock_aws, chalice.test.Client, a botocore counter on the app's DynamoDB clients
(bench/_support.py, as bench/ingest.py counts). Each kind of request is sent `--requests` times
with the step on and as many with it off (taken out of the pipeline's after-answer registry for
the webhook and PagerDuty families), alternating in blocks so both see the same warm instance:

- a new incident (a unique dedup_key), a dedup hit, a suppressed alert (an event rule);
- refused after parsing (no title), refused at the door (an address not allowed);
- a PagerDuty Events trigger (/v2/enqueue);
- a flood: dedup hits past the minute's first 30 (the minute's shared record), and requests past
  the routing key's rate limit.
Each request but the flood's comes in a minute of its own (the clock frozen), so it is the first
of its minute and gets its own record (a PutItem); the flood's shared record is an UpdateItem.

Figures per kind: DynamoDB requests per request with the step on and off (the mean), the
requests on the event log's table with the step on (target: one write, no read; none off),
and the client's p50 latency on and off. Latency in process measures the step's Python and the
emulator's write, not a network round trip: on AWS the write adds one DynamoDB round trip
(single-digit milliseconds) to a delivery's answer.

Prints figures next to the targets; never fails on them, always exits 0.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._support import DynamoCounter, Measurement, configure_environment, moto_account, table  # noqa: E402

if TYPE_CHECKING:
    from chalicelib.settings import Settings

START = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
DELIVERY_SLOTS = 30  # chalicelib.eventlog.slots.DELIVERY_SLOTS (not imported before the environment is set)

EXTRA_WRITES_TARGET = 1
EXTRA_READS_TARGET = 0
WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
BLOCK = 5  # requests per block; blocks alternate on and off
EVENT_LOG_TABLE = "integration-events"


@dataclass
class Kind:
    name: str
    send: Callable[[int], int]  # the request's index -> the status answered
    # Every request in one minute (a flood, a rate limit), else each in a minute of its own (the
    # routing key's first request of its minute: its own record, a PutItem).
    one_minute: bool = False
    prime: int = 0  # requests sent first in that minute, not measured (to spend the minute's own records)
    on: list[Measurement] = field(default_factory=list)
    off: list[Measurement] = field(default_factory=list)
    on_ms: list[float] = field(default_factory=list)
    off_ms: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)


@contextmanager
def step_off() -> Iterator[None]:
    """The event log's step out of the pipeline's registry for the duration."""
    from chalicelib.api import event_log, pipeline

    saved = {family: list(steps) for family, steps in pipeline._AFTER_ANSWER.items()}
    for steps in pipeline._AFTER_ANSWER.values():
        while event_log.record_request in steps:
            steps.remove(event_log.record_request)
    try:
        yield
    finally:
        pipeline._AFTER_ANSWER.clear()
        pipeline._AFTER_ANSWER.update(saved)


def extra(kind: Kind) -> tuple[Counter[str], int, int, int]:
    """What the step added: the requests on its own table with the step on (their union, and the
    most writes and reads one request made there), and how many it made with the step off (0)."""
    added: Counter[str] = Counter()
    writes = reads = 0
    for measurement in kind.on:
        mine = Counter(call.describe() for call in measurement.calls if EVENT_LOG_TABLE in call.tables)
        added |= mine
        mine_writes = sum(n for described, n in mine.items() if described.split("(")[0] in WRITES)
        writes, reads = max(writes, mine_writes), max(reads, sum(mine.values()) - mine_writes)
    off = sum(1 for measurement in kind.off for call in measurement.calls if EVENT_LOG_TABLE in call.tables)
    return added, writes, reads, off


def run(requests: int) -> list[Kind]:
    configure_environment(RATE_LIMIT_WEBHOOK="1000000", AUTH_CACHE_SECONDS="0")
    from chalice.test import Client

    with moto_account():
        counter = DynamoCounter()
        counter.count_wire_requests()
        counter.install_on_app_clients()

        from chalicelib import clock
        from chalicelib.catalog.service import create_service
        from chalicelib.eventrule.rules import Actions
        from chalicelib.eventrule.service import create_rule
        from chalicelib.integration.admin import create_integration
        from chalicelib.organization.service import create_organization
        from chalicelib.ratelimit import buckets
        from chalicelib.settings import get_settings

        now = clock.now()
        org_id = create_organization(name="Bench Event Log Org", now=now).organization_id
        service = create_service(organization_id=org_id, name="Payments API", now=now, default_severity="SEV2")
        custom = create_integration(
            organization_id=org_id,
            integration_type="custom",
            name="bench",
            now=now,
            default_service_key=service.service_key,
            settings=get_settings(),
        )
        locked = create_integration(
            organization_id=org_id,
            integration_type="custom",
            name="locked",
            now=now,
            ip_allowlist=["203.0.113.0/24"],
            default_service_key=service.service_key,
            settings=get_settings(),
        )
        limited = create_integration(
            organization_id=org_id,
            integration_type="custom",
            name="limited",
            now=now,
            default_service_key=service.service_key,
            settings=get_settings(),
        )
        pagerduty = create_integration(
            organization_id=org_id,
            integration_type="pagerduty",
            name="pd",
            now=now,
            default_service_key=service.service_key,
            settings=get_settings(),
        )
        create_rule(
            organization_id=org_id,
            integration_id=custom.integration.integration_id,
            now=now,
            conditions=[("title", "contains", "staging")],
            actions=Actions(suppress=True),
        )
        get_settings()  # cached outside a test-client call (during one, the Chalice stage's variables apply)

        from app import app

        logging.getLogger("tocsin").setLevel(logging.CRITICAL)
        headers = {"Content-Type": "application/json", "X-Forwarded-Proto": "https"}
        run_id = uuid.uuid4().hex[:8]
        real_limit = buckets.limit_for

        def limit_for(category: str, *, settings: Settings) -> int:
            return 1 if category == "webhook" and limiting else real_limit(category, settings=settings)

        limiting = False
        buckets.limit_for = limit_for

        with Client(app, project_dir=str(ROOT)) as client:

            def post(path: str, body: dict[str, Any]) -> int:
                answer = client.http.post(path, headers=headers, body=json.dumps(body).encode())
                return int(answer.status_code)

            def webhook(key: str, body: Callable[[int], dict[str, Any]]) -> Callable[[int], int]:
                return lambda index: post(f"/webhooks/{key}", body(index))

            def pd_event(index: int) -> int:
                event = {
                    "routing_key": pagerduty.routing_key,
                    "event_action": "trigger",
                    "dedup_key": f"pd-{run_id}-{index}",
                    "payload": {"summary": f"CPU high {index}", "source": "db-1", "severity": "critical"},
                }
                return post("/v2/enqueue", event)

            post(f"/webhooks/{custom.routing_key}", {"title": "Hit", "dedup_key": f"hit-{run_id}"})  # opened once
            kinds = [
                Kind(
                    "new incident",
                    webhook(custom.routing_key, lambda i: {"title": f"New {i}", "dedup_key": f"n-{run_id}-{i}"}),
                ),
                Kind(
                    "dedup hit", webhook(custom.routing_key, lambda i: {"title": "Hit", "dedup_key": f"hit-{run_id}"})
                ),
                Kind(
                    "suppressed (event rule)",
                    webhook(custom.routing_key, lambda i: {"title": "on staging", "dedup_key": f"s-{run_id}-{i}"}),
                ),
                Kind("refused: no title", webhook(custom.routing_key, lambda i: {"dedup_key": f"x-{i}"})),
                Kind("refused at the door (address)", webhook(locked.routing_key, lambda i: {"title": "x"})),
                Kind("PagerDuty Events trigger", pd_event),
                Kind(
                    "past the minute's 30 (a flood)",
                    webhook(custom.routing_key, lambda i: {"title": "Hit", "dedup_key": f"hit-{run_id}"}),
                    one_minute=True,
                    prime=DELIVERY_SLOTS,
                ),
                Kind(
                    "rate limited",
                    webhook(limited.routing_key, lambda i: {"title": f"L {i}", "dedup_key": f"l-{run_id}-{i}"}),
                    one_minute=True,
                    prime=1,
                ),
            ]
            for number, kind in enumerate(kinds):
                limiting = kind.name == "rate limited"
                flood_minute = START + timedelta(days=1 + number)
                with clock.frozen(flood_minute):
                    for index in range(kind.prime):
                        kind.send(-1 - index)  # spends the minute's own records (or its one allowed request)
                kind.send(-1000)  # warm: the route's module imported, its tables bound
                for block in range(0, requests, BLOCK):
                    for enabled in (True, False):
                        for index in range(block, min(block + BLOCK, requests)):
                            request = index * 2 + (0 if enabled else 1)
                            at = flood_minute if kind.one_minute else START + timedelta(minutes=request)
                            with clock.frozen(at):
                                measure(counter, kind, request, enabled)
                limiting = False
        buckets.limit_for = real_limit
    return kinds


def measure(counter: DynamoCounter, kind: Kind, index: int, enabled: bool) -> None:
    with step_off() if not enabled else _nothing(), counter.measure() as measurement:
        started = time.perf_counter()
        kind.statuses[kind.send(index)] += 1
        elapsed = (time.perf_counter() - started) * 1000
    (kind.on if enabled else kind.off).append(measurement)
    (kind.on_ms if enabled else kind.off_ms).append(elapsed)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def report(kinds: list[Kind]) -> str:
    rows = []
    for kind in kinds:
        added, writes, reads, off = extra(kind)
        verdict = "OK" if writes <= EXTRA_WRITES_TARGET and reads <= EXTRA_READS_TARGET and off == 0 else "OVER"
        rows.append(
            [
                kind.name,
                ",".join(str(s) for s in sorted(kind.statuses)),
                f"{statistics.fmean(m.total for m in kind.on):.1f}",
                f"{statistics.fmean(m.total for m in kind.off):.1f}",
                " ".join(f"{d}x{n}" if n > 1 else d for d, n in added.items()) or "-",
                f"{writes} w / {reads} r",
                verdict,
                f"{statistics.median(kind.on_ms):.1f}",
                f"{statistics.median(kind.off_ms):.1f}",
                f"{statistics.median(kind.on_ms) - statistics.median(kind.off_ms):+.1f}",
            ]
        )
    return table(
        [
            "request",
            "status",
            "DDB on",
            "DDB off",
            "added by the step",
            "added",
            "target",
            "p50 on",
            "p50 off",
            "delta ms",
        ],
        rows,
        right=frozenset({2, 3, 7, 8, 9}),
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--requests", type=int, default=40, help="requests per kind with the step on, and as many off")
    args = parser.parse_args(argv)
    kinds = run(max(BLOCK, args.requests))
    print(f"The event log's cost per inbound request ({args.requests} on, {args.requests} off, in process on moto)")
    print(
        f"target: at most {EXTRA_WRITES_TARGET} extra DynamoDB write and {EXTRA_READS_TARGET} extra reads per request"
    )
    print(report(kinds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
