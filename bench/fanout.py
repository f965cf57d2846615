"""Outbound webhook fan-out: time from an incident change to its delivery at a receiver, 10 subscriptions.

    .venv/bin/python bench/fanout.py [--subscriptions 10] [--changes 30] [--interval 1.0] [--burst 20]

Starts the local stack (`python -m chalicelib.local` in a temporary directory, as bench/ingest.py does)
and a receiver of its own: http.server on 127.0.0.1 in a thread, answering 204 and noting when each
request arrives. Through the API it disables the demo subscription (its deliveries to the stack's own
sink would compete), creates --subscriptions subscriptions to incident.status_changed at /hook/<n> on
the receiver, opens one incident, acknowledges it (no escalation pages compete), then moves it
between identified, monitoring and investigating. Each change is one incident.status_changed event,
so one delivery per subscription: change -> SQS -> fan-out -> a webhook.deliver message each -> SQS
-> signed POST. Phases: a short warm-up (lazy imports, first connections), --changes changes one
every --interval seconds (latency of one change at a time), and --burst changes back to back (the
backlog a busy incident makes).

Latency of a delivery: its arrival at the receiver minus the event's occurred_at (stamped by the
service when the change was written; same machine clock, millisecond precision). Shown for every
delivery, for the first and the last delivery of each change (the spread is the sends one after
another), and, as a cross-check on the client's clock, from the moment the API call answered.
Every delivery's signature is checked with its subscription's secret; duplicates are counted.
Prints figures only; always exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._support import table  # noqa: E402
from bench.ingest import Stack, local_stack, percentile  # noqa: E402

EVENT_TYPE = "incident.status_changed"
STATUS_CYCLE = ("identified", "monitoring", "investigating")
DELIVERY_WAIT_SECONDS = 60.0


# ---------------------------------------------------------------- the receiver


@dataclass(frozen=True)
class Arrival:
    path: str
    arrived_at: float  # time.time()
    event_id: str
    occurred_at: float
    status: str | None
    timestamp: str
    signature: str
    body: bytes


@dataclass
class Receiver:
    arrivals: list[Arrival] = field(default_factory=list)
    unreadable: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def keep(self, path: str, headers: Any, body: bytes) -> None:
        arrived_at = time.time()
        try:
            event = json.loads(body)
            arrival = Arrival(
                path=path,
                arrived_at=arrived_at,
                event_id=str(event["id"]),
                occurred_at=_epoch(str(event["occurred_at"])),
                status=(event.get("data") or {}).get("status"),
                timestamp=str(headers.get("X-Service-Timestamp") or ""),
                signature=str(headers.get("X-Service-Signature") or ""),
                body=body,
            )
        except (ValueError, KeyError, TypeError):
            with self.lock:
                self.unreadable += 1
            return
        with self.lock:
            self.arrivals.append(arrival)

    def clear(self) -> None:
        with self.lock:
            self.arrivals.clear()

    def snapshot(self) -> list[Arrival]:
        with self.lock:
            return list(self.arrivals)


def _epoch(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def start_receiver(receiver: Receiver) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            receiver.keep(self.path, self.headers, self.rfile.read(length))
            self.send_response(204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, name="receiver", daemon=True).start()
    return server


# ---------------------------------------------------------------- the run


@dataclass(frozen=True)
class Phase:
    name: str
    changes: int
    interval: float  # seconds between changes; 0 = back to back


@dataclass
class Change:
    status: str
    answered_at: float  # time.time() once the API answered (the change was committed)


@dataclass
class PhaseResult:
    phase: Phase
    changes: list[Change] = field(default_factory=list)
    arrivals: list[Arrival] = field(default_factory=list)
    waited: float = 0.0


def api(stack: Stack, session: Any, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    response = session.request(method, stack.base_url + path, json=body, headers=stack.owner_headers, timeout=30)
    if response.status_code >= 300:
        raise RuntimeError(f"{method} {path} answered {response.status_code}: {response.text[:300]}")
    document: dict[str, Any] = response.json()
    return document


def wait_for_arrivals(receiver: Receiver, expected: int) -> float:
    """Seconds until `expected` requests arrived (or the wait gave up), plus a second for late duplicates."""
    started = time.monotonic()
    while len(receiver.snapshot()) < expected and time.monotonic() - started < DELIVERY_WAIT_SECONDS:
        time.sleep(0.05)
    waited = time.monotonic() - started
    time.sleep(1.0)
    return waited


def subscribe(stack: Stack, session: Any, receiver_url: str, count: int) -> dict[str, str]:
    """Disable the demo subscription (its deliveries to the stack's own sink would compete) and create
    `count` subscriptions on the receiver; returns receiver path -> secret."""
    demo_subscription = stack.demo.get("webhook_subscription") or {}
    if demo_subscription.get("subscription_id"):
        path = f"/api/v1/webhook-subscriptions/{demo_subscription['subscription_id']}"
        api(stack, session, "PATCH", path, {"enabled": False})
    secrets = {}
    for index in range(count):
        path = f"/hook/{index}"
        body = {"url": receiver_url + path, "event_types": [EVENT_TYPE], "description": f"bench/fanout.py #{index}"}
        secrets[path] = api(stack, session, "POST", "/api/v1/webhook-subscriptions", body)["data"]["secret"]
    return secrets


def run_phases(
    stack: Stack, receiver_url: str, receiver: Receiver, phases: list[Phase], subscriptions: int
) -> tuple[dict[str, str], list[PhaseResult]]:
    import requests

    session = requests.Session()
    secrets = subscribe(stack, session, receiver_url, subscriptions)
    service_key = stack.demo["services"][0]["service_key"]
    created = api(
        stack, session, "POST", "/api/v1/incidents", {"title": "bench/fanout.py", "service_ids": [service_key]}
    )
    number = created["data"]["incident_number"]
    # Acknowledging stops the escalation timers (no pages compete) and moves new -> investigating,
    # itself a status change: wait for its deliveries before measuring.
    api(stack, session, "POST", f"/api/v1/incidents/{number}/acknowledge")
    wait_for_arrivals(receiver, subscriptions)
    results = []
    step = 0
    for phase in phases:
        receiver.clear()
        result = PhaseResult(phase)
        for _ in range(phase.changes):
            status = STATUS_CYCLE[step % len(STATUS_CYCLE)]
            step += 1
            api(stack, session, "POST", f"/api/v1/incidents/{number}/status", {"status": status})
            result.changes.append(Change(status, time.time()))
            time.sleep(phase.interval)
        result.waited = wait_for_arrivals(receiver, phase.changes * subscriptions)
        result.arrivals = receiver.snapshot()
        results.append(result)
    session.close()
    return secrets, results


# ---------------------------------------------------------------- figures


def verified(arrival: Arrival, secrets: dict[str, str]) -> bool:
    secret = secrets.get(arrival.path)
    if secret is None or not arrival.timestamp:
        return False
    digest = hmac.new(secret.encode(), f"{arrival.timestamp}.".encode() + arrival.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(arrival.signature, f"sha256={digest}")


def figures(values: list[float]) -> list[str]:
    if not values:
        return ["0", "-", "-", "-"]
    milliseconds = [value * 1000 for value in values]
    return [
        str(len(values)),
        f"{percentile(milliseconds, 0.50):.0f}",
        f"{percentile(milliseconds, 0.99):.0f}",
        f"{max(milliseconds):.0f}",
    ]


def describe(result: PhaseResult, secrets: dict[str, str], subscriptions: int) -> tuple[list[list[str]], str]:
    """Rows of the latency table and a line of counts for one phase."""
    first_seen: dict[tuple[str, str], Arrival] = {}
    for arrival in sorted(result.arrivals, key=lambda a: a.arrived_at):
        first_seen.setdefault((arrival.event_id, arrival.path), arrival)
    duplicates = len(result.arrivals) - len(first_seen)
    bad_signatures = sum(1 for arrival in result.arrivals if not verified(arrival, secrets))
    by_event: dict[str, list[Arrival]] = {}
    for arrival in first_seen.values():
        by_event.setdefault(arrival.event_id, []).append(arrival)
    all_deliveries = [a.arrived_at - a.occurred_at for a in first_seen.values()]
    firsts = [min(a.arrived_at for a in group) - group[0].occurred_at for group in by_event.values()]
    lasts = [max(a.arrived_at for a in group) - group[0].occurred_at for group in by_event.values()]
    # Cross-check on the client's clock: the k-th event by occurred_at is the k-th change.
    ordered = sorted(by_event.values(), key=lambda group: group[0].occurred_at)
    from_answer: list[float] = []
    if len(ordered) == len(result.changes):
        for change, group in zip(result.changes, ordered, strict=True):
            if all(a.status == change.status for a in group):
                from_answer += [a.arrived_at - change.answered_at for a in group]
    pace = f"every {result.phase.interval:g} s" if result.phase.interval else "back to back"
    name = f"{result.phase.name} ({result.phase.changes} changes, {pace})"
    rows = [
        [name, "every delivery, from occurred_at", *figures(all_deliveries)],
        ["", "first of each change's deliveries", *figures(firsts)],
        ["", f"last of each change's {subscriptions}", *figures(lasts)],
        ["", "every delivery, from the API's answer", *figures(from_answer)],
    ]
    expected = result.phase.changes * subscriptions
    counts = (
        f"{result.phase.name}: {len(first_seen)} of {expected} deliveries arrived ({result.waited:.1f} s of waiting "
        f"once the changes were made); {duplicates} duplicate(s); {bad_signatures} signature(s) not verifying; "
        f"{len(by_event)} events for {len(result.changes)} changes"
    )
    return rows, counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subscriptions", type=int, default=10, help="subscriptions to the receiver (10)")
    parser.add_argument("--changes", type=int, default=30, help="paced changes (30)")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between paced changes (1.0)")
    parser.add_argument("--burst", type=int, default=20, help="back-to-back changes (20; 0 skips)")
    parser.add_argument("--warm-up", type=int, default=2, help="changes made first and reported apart (2)")
    args = parser.parse_args(argv)
    subscriptions = max(1, args.subscriptions)
    phases = [
        Phase("warm-up", args.warm_up, args.interval),
        Phase("paced", max(1, args.changes), args.interval),
        Phase("burst", args.burst, 0.0),
    ]
    phases = [phase for phase in phases if phase.changes > 0]

    print("Outbound webhook fan-out (Tocsin local stack on this machine, its SQS worker loop, a local receiver)")
    print(f"Machine: {os.cpu_count()} CPUs. {subscriptions} subscriptions to {EVENT_TYPE}, one receiver")
    print("(http.server on 127.0.0.1 answering 204); each change is one event, one delivery per subscription.")
    print()
    receiver = Receiver()
    server = start_receiver(receiver)
    receiver_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with local_stack() as stack:
            secrets, results = run_phases(stack, receiver_url, receiver, phases, subscriptions)
        rows: list[list[str]] = []
        counts = []
        for result in results:
            phase_rows, phase_counts = describe(result, secrets, subscriptions)
            rows += phase_rows
            counts.append(phase_counts)
        headers = ["phase", "change -> arrival at the receiver", "n", "p50 ms", "p99 ms", "max ms"]
        print(table(headers, rows, right=frozenset({2, 3, 4, 5})))
        print()
        for line in counts:
            print(line)
    except Exception as error:  # a benchmark reports, it does not fail
        print(f"The fan-out benchmark did not run: {type(error).__name__}: {error}")
    finally:
        server.shutdown()
        server.server_close()
    print()
    print("Figures only: this never fails on them. The retry schedule is shown correct by a test with time frozen")
    print("(tests/service/test_outbound_delivery.py), not here.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
