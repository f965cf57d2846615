"""From a new incident to the first page: latency on the local stack, and the DynamoDB requests the
workers make for it.

    .venv/bin/python bench/page_latency.py [--rounds 25] [--interval 0.5] [--skip-stack]

(a) Latency, over HTTP against a real local stack (`python -m chalicelib.local` in a temporary
    directory, stopped at the end): each round posts a SEV1 custom webhook to the demo integration
    (a new dedup key, so a new incident on the demo's first service, whose level 1 is the on-call
    schedule), then polls `GET /local/outbox?channel=...&incident_number=...` (SMS, Slack, voice,
    and ntfy: every demo person first gets a verified ntfy method at 0 minutes, a push channel
    through the chat and push sender) until the first page to a person appears there; the ntfy
    page's own latency is printed apart. Latency is the page's `sent_at` (stamped by
    the stack when the provider or sink took it; same machine clock) minus the moment the webhook
    was sent, so the polling does not count. After each round the incident is
    resolved, so its escalation and rule steps stop. A few warm-up rounds are not counted.
(b) DynamoDB requests in the workers for one new incident, counted in-process (moto mock_aws with
    the demo data seeded, chalice.test.Client for the webhook, the events queue drained by hand
    through the Lambda entry point, a botocore counter on the app's DynamoDB clients:
    bench/_support.py). Every message that is receivable right away is handled (post-create work,
    paging, the rules' delay-0 steps, outbound webhook fan-out and deliveries); delayed ones
    (escalation timers, later rule steps, the SLA check) are not: they belong to later moments.
    Slack, the voice provider and the webhook receiver are a tiny HTTP server on 127.0.0.1 that
    answers as they do.

Prints figures next to the targets; never fails on them, always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._support import DynamoCounter, configure_environment, moto_account, table  # noqa: E402

P50_TARGET_MS = 300.0
P99_TARGET_MS = 1000.0
REQUESTS_TARGET = 25
WARM_UP_ROUNDS = 3
VERBOSE = "--verbose" in sys.argv
# Slack messages and calls are read from the outbox table and carry the moment the sink took
# them: polled every POLL_SECONDS. Emails and SMS are read back from the emulator's whole state dump
# (moto keeps no time for an SMS), which grows with every incident and would slow the stack under
# test if polled that often: SMS is polled every SLOW_POLL_SECONDS and timed when first seen (an
# upper bound), emails not at all (the demo pages nobody by email alone).
POLLED_CHANNELS = ("slack", "voice", "ntfy")
# A push channel too: every demo person gets a verified ntfy method at 0 minutes in their
# high-urgency rules before the rounds (the stack posts it to its channel sink, which stamps it).
PUSH_CHANNEL = "ntfy"
SLOW_CHANNELS = ("sms",)
SLOW_POLL_SECONDS = 0.25
# The time comes from the item, not from the poll, so polling need not be eager: every request
# to the stack competes with the page being measured (the emulator serves DynamoDB one request
# at a time, and the outbox reads up to 500 messages to filter them), and polling every 20 ms
# added 150 ms and more to the latency it measured, growing with every round. The first poll
# comes after FIRST_POLL_SECONDS, when most pages are out, then one every POLL_SECONDS.
FIRST_POLL_SECONDS = 0.8
POLL_SECONDS = 0.25
_ORIGINAL_ENVIRONMENT = dict(os.environ)


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile (p99 of 25 values is the largest)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-fraction * len(ordered) // 1))))
    return ordered[rank - 1]


# ---------------------------------------------------------------- (a) latency on the local stack


def measure_latency(rounds: int, interval: float) -> None:
    import requests

    from bench import _stack

    os.environ.clear()
    os.environ.update(_ORIGINAL_ENVIRONMENT)
    with tempfile.TemporaryDirectory(prefix="tocsin-page-latency-") as directory:
        print("(a) latency: starting the local stack ...", flush=True)
        # The outbound budget digests a person's pages past 5 in 10 minutes per channel: every round
        # pages the same people, so the burst is raised here (the latency is measured, not the budget).
        stack = _stack.start(Path(directory), fresh=True, environment={"BUDGET_PAGE_BURST_PER_PERSON": "100000"})
        try:
            print(f"    up in {stack.ready_seconds:.1f} s at {stack.base_url}", flush=True)
            session = requests.Session()
            _add_push_methods(stack, session)
            latencies = _rounds(stack, rounds, interval, session)
        finally:
            _stack.stop(stack)
    if not latencies:
        print("    no round produced a page")
        return
    p50, p99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
    print(
        table(
            ["figure", "measured", "target"],
            [
                ["rounds", str(len(latencies)), ">= 20"],
                ["p50 (ms)", f"{p50:.0f}", f"<= {P50_TARGET_MS:.0f}"],
                ["p99 (ms)", f"{p99:.0f}", f"<= {P99_TARGET_MS:.0f}"],
                ["max (ms)", f"{max(latencies):.0f}", ""],
                ["mean (ms)", f"{statistics.fmean(latencies):.0f}", ""],
            ],
            right=frozenset({1}),
        )
    )


def _add_push_methods(stack: Any, session: Any) -> None:
    """An ntfy method for every demo person, verified with the code the channel sink kept, first
    in their high-urgency rules at 0 minutes."""
    headers = {"Authorization": f"Bearer {stack.owner_key}"}
    base = f"{stack.base_url}/api/v1/users"
    for person in stack.demo["users"]:
        user_id = person["id"]
        created = session.post(
            f"{base}/{user_id}/contact-methods",
            json={"type": PUSH_CHANNEL, "address": f"https://ntfy.sh/bench-{user_id}"},
            headers=headers,
            timeout=30,
        )
        created.raise_for_status()
        method_id = created.json()["data"]["id"]
        session.post(f"{base}/{user_id}/contact-methods/{method_id}/send-verification", headers=headers, timeout=30)
        code = None
        for _ in range(80):
            items = session.get(
                f"{stack.base_url}/local/outbox", params={"channel": PUSH_CHANNEL, "limit": 5}, timeout=30
            ).json()["data"]["items"]
            texts = [i["text"] for i in items if f"bench-{user_id}" in json.dumps(i.get("payload"))]
            words = [w.rstrip(".") for t in texts for w in t.split() if w.rstrip(".").isdigit() and len(w) >= 6]
            if words:
                code = words[0]
                break
            time.sleep(0.25)
        if code is None:
            print(f"    no verification code reached {person.get('name')}'s ntfy method", flush=True)
            continue
        verify = f"{base}/{user_id}/contact-methods/{method_id}/verify"
        session.post(verify, json={"code": code}, headers=headers, timeout=30).raise_for_status()
        rules = session.get(f"{base}/{user_id}/notification-rules", headers=headers, timeout=30).json()["data"]
        high = [{"contact_method_id": method_id, "delay_minutes": 0}]
        high += [
            {"contact_method_id": s["contact_method_id"], "delay_minutes": s["delay_minutes"]} for s in rules["high"]
        ]
        low = [{"contact_method_id": s["contact_method_id"], "delay_minutes": s["delay_minutes"]} for s in rules["low"]]
        put = session.put(
            f"{base}/{user_id}/notification-rules", json={"high": high, "low": low}, headers=headers, timeout=30
        )
        put.raise_for_status()


def _rounds(stack: Any, rounds: int, interval: float, session: Any) -> list[float]:
    url = stack.demo["integrations"]["custom"]["url"]
    service_id = stack.demo["services"][0]["service_id"]
    headers = {"Authorization": f"Bearer {stack.owner_key}"}
    latencies: list[float] = []
    push: list[float] = []
    firsts: Counter[str] = Counter()
    for index in range(rounds + WARM_UP_ROUNDS):
        body = {
            "title": f"Page latency round {index}",
            "service_id": service_id,
            "severity": "SEV1",
            "dedup_key": f"page-latency-{uuid.uuid4().hex}",
        }
        sent, sent_wall = time.monotonic(), time.time()
        answer = session.post(url, json=body, timeout=30)
        answer.raise_for_status()
        number = str(answer.json()["incident"]["id"])
        page = _wait_for_page(session, stack.base_url, number, headers, sent_wall, deadline=sent + 30)
        if index >= WARM_UP_ROUNDS and page is not None:
            latencies.append(page[1])
            firsts[page[0]] += 1
            if page[2] is not None:
                push.append(page[2])
        shown = f"{page[1]:.0f} ms by {page[0]}" if page else "no page within 30 s"
        print(f"    round {index:>2}{' (warm-up)' if index < WARM_UP_ROUNDS else ''}: {number} {shown}", flush=True)
        session.post(
            f"{stack.base_url}/api/v1/incidents/{number}/resolve",
            json={"resolution": "bench/page_latency.py"},
            headers=headers,
            timeout=30,
        )
        time.sleep(interval)
    print(f"    first page by channel: {dict(firsts)}")
    if push:
        print(
            f"    {PUSH_CHANNEL} page latency (ms): p50 {percentile(push, 0.5):.0f}, p99 {percentile(push, 0.99):.0f}, "
            f"{len(push)} rounds"
        )
    return latencies


def _wait_for_page(
    session: Any, base_url: str, number: str, headers: dict[str, str], sent_wall: float, deadline: float
) -> tuple[str, float, float | None] | None:
    """(channel, latency in ms) of the incident's first page, and the push page's latency when it
    was out by then. The latency is the item's own `sent_at` (stamped by the stack when the sink or
    the provider took it) minus the moment the webhook was sent, so the polling itself does not count."""
    next_slow = 0.0
    time.sleep(FIRST_POLL_SECONDS)
    while time.monotonic() < deadline:
        found: list[tuple[float, str]] = []
        channels: tuple[str, ...] = POLLED_CHANNELS
        if time.monotonic() >= next_slow:
            channels += SLOW_CHANNELS
            next_slow = time.monotonic() + SLOW_POLL_SECONDS
        for channel in channels:
            answer = session.get(
                f"{base_url}/local/outbox",
                params={"channel": channel, "incident_number": number, "limit": 20},
                headers=headers,
                timeout=30,
            )
            if not answer.ok:
                continue
            for item in answer.json()["data"]["items"]:
                at = _timestamp(item.get("sent_at"))
                found.append((at if at is not None else time.time(), str(item["channel"])))
        if found:
            at, channel = min(found)
            pushed = [when for when, name in found if name == PUSH_CHANNEL]
            push_ms = max(0.0, (min(pushed) - sent_wall) * 1000) if pushed else None
            return channel, max(0.0, (at - sent_wall) * 1000), push_ms
        time.sleep(POLL_SECONDS)
    return None


def _timestamp(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


# ---------------------------------------------------------------- (b) DynamoDB requests in the workers


class _Receiver(BaseHTTPRequestHandler):
    """Slack, the voice provider and webhook receivers, as far as the senders need."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if "/Calls.json" in self.path:
            self._answer(201, {"sid": "CA" + uuid.uuid4().hex, "status": "queued"})
        elif "chat.postMessage" in self.path:
            self._answer(200, {"ok": True, "ts": f"{time.time():.6f}"})
        else:
            self._answer(204, None)

    def _answer(self, status: int, body: Any) -> None:
        raw = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        return


def measure_requests() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    configure_environment(PUBLIC_BASE_URL=base, LOCAL_ALLOW_HTTP_WEBHOOKS="true", VOICE_API_BASE_URL=base)
    try:
        with moto_account():
            _count_requests()
    finally:
        server.shutdown()


def _count_requests() -> None:
    from chalice.test import Client

    from app import app
    from chalicelib import aws, clock
    from chalicelib.local import demo
    from chalicelib.queue.messages import Message
    from chalicelib.workers import dispatch

    facts = demo.seed(clock.now())
    counter = DynamoCounter()
    counter.install_on_app_clients()
    sqs = aws.client("sqs")
    queue_url = aws.queue_url("events")
    rows: list[list[str]] = []
    with Client(app) as client:
        routing_path = "/" + facts["integrations"]["custom"]["url"].split("/", 3)[3]
        # A first incident warms the caches a running worker has (organization settings, clients).
        for label in ("warm-up", "measured"):
            body = {
                "title": f"Page latency {label}",
                "service_id": facts["services"][0]["service_id"],
                "severity": "SEV1",
                "dedup_key": f"requests-{uuid.uuid4().hex}",
            }
            answer = client.http.post(routing_path, headers={"Content-Type": "application/json"}, body=json.dumps(body))
            if answer.status_code not in (200, 201, 202):
                print(f"(b) the webhook answered {answer.status_code}: {answer.body!r}")
                return
            per_type: Counter[str] = Counter()
            messages: Counter[str] = Counter()
            for _ in range(200):
                received = sqs.receive_message(
                    QueueUrl=queue_url, MaxNumberOfMessages=1, WaitTimeSeconds=0, AttributeNames=["All"]
                ).get("Messages", [])
                if not received:
                    break
                raw = received[0]
                message_type = Message.from_json(raw["Body"]).message_type
                with counter.measure() as measured:
                    dispatch.handle_records([{"messageId": raw["MessageId"], "body": raw["Body"], "attributes": {}}])
                sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=raw["ReceiptHandle"])
                per_type[message_type] += measured.total
                if VERBOSE and label == "measured":
                    print(f"    {message_type}:")
                    for call in measured.calls:
                        print(f"      {call.describe()}")
                messages[message_type] += 1
            if label == "measured":
                rows = [[name, str(messages[name]), str(count)] for name, count in per_type.most_common()]
                total = sum(per_type.values())
                rows.append(["total", str(sum(messages.values())), str(total)])
    print("(b) DynamoDB requests in the workers for one new incident (receivable messages only):")
    print(table(["message type", "messages", "requests"], rows, right=frozenset({1, 2})))
    print(f"    target: <= {REQUESTS_TARGET}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between rounds")
    parser.add_argument("--skip-stack", action="store_true", help="only (b), in-process")
    parser.add_argument("--verbose", action="store_true", help="(b): list every request")
    parser.add_argument("--skip-requests", action="store_true", help="only (a), on the local stack")
    arguments = parser.parse_args()
    if not arguments.skip_stack:
        measure_latency(arguments.rounds, arguments.interval)
    if not arguments.skip_requests:
        measure_requests()
    return 0


if __name__ == "__main__":
    sys.exit(main())
