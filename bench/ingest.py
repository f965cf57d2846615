"""Inbound webhook ingest: throughput, latency, DynamoDB round trips, and dedup under a storm.

    .venv/bin/python bench/ingest.py [--threads 8] [--seconds 10] [--max-events 5000] [--storm 1000]

(a) and (b) run over HTTP against a real local stack (`python -m chalicelib.local`, started here
in a temporary directory with RATE_LIMIT_WEBHOOK=1000000 so the 100/min webhook limit does not
throttle, and stopped at the end): several client threads, each with its own keep-alive session,
post custom webhooks for a bounded time and count:
  (a) new-incident webhooks (a unique dedup_key each: every one opens an incident);
  (b) dedup-hit webhooks (one dedup_key: every one counts an alert on the same open incident).
Figures: sustained accepted events/second and client-side p50/p99 latency. The stack's SQS worker
loop runs in the same process as the API (the timeline entries of dedup hits, paging of new
incidents), so its backlog competes with the requests, as it would on one machine.
(c) DynamoDB round trips per event, counted in-process (moto mock_aws, chalice.test.Client, a
botocore before-call counter on the app's DynamoDB clients: bench/_support.py) and split into
routing lookup, rate limit, dedup read, incident write and anything else.
(d) A storm of same-key events from all threads at once: exactly one incident must come of it,
checked through the API.

Prints figures next to the targets; never fails on them, always exits 0.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._support import DynamoCall, DynamoCounter, Measurement, configure_environment, moto_account, table  # noqa: E402

THROUGHPUT_TARGET = 50.0  # events/s sustained
DEDUP_HIT_TARGET = 2  # round trips beyond the routing lookup and the rate limit
STACK_ENVIRONMENT_DROPPED = ("AWS_", "TABLE_", "QUEUE_", "TOCSIN_", "RATE_")
WARM_UP_EVENTS = 16
IN_PROCESS_RUNS = 5

# The environment as this process received it: the stack's environment is built from it, before
# configure_environment() (part c) points this process at an in-process emulator.
_ORIGINAL_ENVIRONMENT = dict(os.environ)


# ---------------------------------------------------------------- the local stack


@dataclass
class Stack:
    process: subprocess.Popen[bytes]
    demo: dict[str, Any]
    directory: Path

    @property
    def base_url(self) -> str:
        return str(self.demo["base_url"])

    @property
    def owner_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.demo['api_keys']['owner']}"}

    def log_tail(self, lines: int = 20) -> str:
        text = (self.directory / "stack.log").read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process (all its threads), from /proc; None where that is unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return found


def stack_cpu(stack: Stack) -> dict[str, float]:
    """CPU seconds so far of the stack's process (API and worker loop) and of its children (the emulator)."""
    readings: dict[str, float] = {}
    own = _cpu_seconds(stack.process.pid)
    if own is not None:
        readings["API + worker loop"] = own
    children = [c for c in (_cpu_seconds(pid) for pid in _children(stack.process.pid)) if c is not None]
    if children:
        readings["emulator (moto server)"] = sum(children)
    return readings


def _load_average() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "n/a"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def local_stack(**environment: str) -> Iterator[Stack]:
    """`python -m chalicelib.local` in a temporary directory; SIGTERM and wait on the way out."""
    with tempfile.TemporaryDirectory(prefix="tocsin-bench-ingest-") as temporary:
        directory = Path(temporary)
        env = {
            **{k: v for k, v in _ORIGINAL_ENVIRONMENT.items() if not k.startswith(STACK_ENVIRONMENT_DROPPED)},
            "PORT": str(_free_port()),
            "MOTO_PORT": "0",
            "LOCAL_DIR": str(directory / "local"),
            "PYTHONUNBUFFERED": "1",
            **environment,
        }
        with (directory / "stack.log").open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "chalicelib.local"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        try:
            demo_path = directory / "local" / "demo.json"
            deadline = time.monotonic() + 90
            while not demo_path.exists():
                if process.poll() is not None:
                    raise RuntimeError(f"the local stack exited with {process.returncode}")
                if time.monotonic() > deadline:
                    raise RuntimeError("the local stack did not write demo.json within 90 s")
                time.sleep(0.2)
            yield Stack(process, json.loads(demo_path.read_text()), directory)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=10)


# ---------------------------------------------------------------- HTTP load


@dataclass
class LoadResult:
    name: str
    threads: int
    elapsed: float = 0.0
    latencies: list[float] = field(default_factory=list)  # seconds, accepted events only
    statuses: Counter[int] = field(default_factory=Counter)
    incident_ids: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds the stack's processes used meanwhile

    @property
    def accepted(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.accepted / self.elapsed if self.elapsed else 0.0


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.5)))
    return ordered[rank - 1]


def run_load(
    name: str,
    url: str,
    body_for: Callable[[int], dict[str, Any]],
    *,
    threads: int,
    seconds: float,
    max_events: int,
    accept: frozenset[int],
) -> LoadResult:
    """`threads` clients post `body_for(i)` for i = 0, 1, ... until `seconds` pass or `max_events` were sent.
    All clients start together (a barrier); each keeps one HTTP connection."""
    import requests

    result = LoadResult(name, threads)
    lock = threading.Lock()
    counter = itertools.count()
    barrier = threading.Barrier(threads + 1)
    deadline = [0.0]

    def client() -> None:
        session = requests.Session()
        latencies: list[float] = []
        statuses: Counter[int] = Counter()
        incidents: Counter[str] = Counter()
        errors: Counter[str] = Counter()
        barrier.wait()
        while time.perf_counter() < deadline[0]:
            with lock:
                index = next(counter)
            if index >= max_events:
                break
            data = json.dumps(body_for(index)).encode()
            started = time.perf_counter()
            try:
                response = session.post(url, data=data, headers={"Content-Type": "application/json"}, timeout=60)
            except requests.RequestException as error:
                errors[type(error).__name__] += 1
                continue
            took = time.perf_counter() - started
            statuses[response.status_code] += 1
            if response.status_code in accept:
                latencies.append(took)
                incident = (response.json().get("incident") or {}).get("id")
                if incident:
                    incidents[str(incident)] += 1
        session.close()
        with lock:
            result.latencies.extend(latencies)
            result.statuses.update(statuses)
            result.incident_ids.update(incidents)
            result.errors.update(errors)

    workers = [threading.Thread(target=client, name=f"client-{n}") for n in range(threads)]
    for worker in workers:
        worker.start()
    started = time.perf_counter()
    deadline[0] = started + seconds
    barrier.wait()
    for worker in workers:
        worker.join()
    result.elapsed = time.perf_counter() - started
    return result


def measured(stack: Stack, load: Callable[[], LoadResult]) -> LoadResult:
    before = stack_cpu(stack)
    result = load()
    after = stack_cpu(stack)
    result.cpu = {name: after[name] - before[name] for name in before if name in after}
    return result


def describe_cpu(result: LoadResult) -> str:
    if not result.cpu or not result.elapsed:
        return f"{result.name}: CPU use not available"
    per_event = max(1, result.accepted)
    parts = ", ".join(
        f"{name} {seconds:.1f} s ({seconds / result.elapsed:.0%} of one core, "
        f"{seconds * 1000 / per_event:.0f} ms/event)"
        for name, seconds in result.cpu.items()
    )
    return f"{result.name}: CPU over {result.elapsed:.1f} s: {parts}"


def custom_body(service_id: str, title: str, dedup_key: str) -> dict[str, Any]:
    return {"title": title, "service_id": service_id, "dedup_key": dedup_key, "description": "bench/ingest.py"}


def queue_backlog(stack: Stack) -> int:
    """Messages waiting or in flight in the stack's queues (the worker loop's backlog)."""
    import boto3

    sqs = boto3.client(
        "sqs",
        endpoint_url=stack.demo["aws_endpoint_url"],
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
    )
    total = 0
    for queue_url in sqs.list_queues(QueueNamePrefix="tocsin-local-").get("QueueUrls", []):
        if queue_url.endswith("-dlq"):
            continue  # dead letters are not backlog
        attributes = sqs.get_queue_attributes(
            QueueUrl=queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        total += int(attributes["ApproximateNumberOfMessages"]) + int(
            attributes["ApproximateNumberOfMessagesNotVisible"]
        )
    return total


def drain(stack: Stack, limit: float = 120.0) -> tuple[int, int, float]:
    """Wait for the worker loop to empty the queues: (backlog before, after, seconds waited).
    Delayed messages (escalation timers) may stay; the wait gives up once the backlog stops falling."""
    before = queue_backlog(stack)
    started = time.monotonic()
    current, previous, still = before, before, 0
    while current and time.monotonic() - started < limit:
        time.sleep(0.5)
        current = queue_backlog(stack)
        still = still + 1 if current >= previous else 0
        if still >= 6:  # 3 s without progress: what is left is delayed, not backlog
            break
        previous = current
    return before, current, time.monotonic() - started


def count_incidents_titled(stack: Stack, title: str, since: datetime) -> int:
    """Incidents (open or not) with exactly this title created since `since`, through the API."""
    import requests

    found = 0
    statuses = "&".join(
        f"status={s}" for s in ("new", "investigating", "identified", "monitoring", "resolved", "closed")
    )
    created_after = since.strftime("%Y-%m-%dT%H:%M:%SZ")
    offset: int | None = 0
    while offset is not None:
        response = requests.get(
            f"{stack.base_url}/api/v1/incidents?limit=100&offset={offset}&created_after={created_after}&{statuses}",
            headers=stack.owner_headers,
            timeout=60,
        )
        response.raise_for_status()
        data = response.json()["data"]
        found += sum(1 for item in data["items"] if item["title"] == title)
        offset = data["next_offset"] if data["has_more"] else None
    return found


def describe_load(result: LoadResult) -> list[str]:
    statuses = ", ".join(f"{status} x{count}" for status, count in sorted(result.statuses.items()))
    errors = ", ".join(f"{name} x{count}" for name, count in result.errors.items())
    return [
        result.name,
        str(result.threads),
        f"{result.accepted}",
        f"{result.elapsed:.1f}",
        f"{result.rate:.1f}",
        f"{percentile(result.latencies, 0.50) * 1000:.1f}",
        f"{percentile(result.latencies, 0.99) * 1000:.1f}",
        f">= {THROUGHPUT_TARGET:.0f}/s",
        "OK" if result.rate >= THROUGHPUT_TARGET else "UNDER",
        statuses + (f"; client errors: {errors}" if errors else ""),
    ]


def http_benchmarks(args: argparse.Namespace) -> tuple[list[LoadResult], list[str]]:
    """(a), (b) and (d) against a stack this function starts and stops."""
    import requests

    notes: list[str] = []
    results: list[LoadResult] = []
    print(f"Starting a local stack (python -m chalicelib.local, RATE_LIMIT_WEBHOOK={args.rate_limit}) ...", flush=True)
    with local_stack(RATE_LIMIT_WEBHOOK=str(args.rate_limit)) as stack:
        url = stack.demo["integrations"]["custom"]["url"]
        service_id = stack.demo["services"][0]["service_id"]
        run = uuid.uuid4().hex[:8]
        print(
            f"  up at {stack.base_url} (emulator {stack.demo['aws_endpoint_url']}); posting to the custom integration"
        )
        print(flush=True)

        # Warm-up, not measured: the first requests pay for lazy imports and cold clients.
        session = requests.Session()
        for index in range(WARM_UP_EVENTS):
            session.post(url, json=custom_body(service_id, f"Warm-up {run} {index}", f"warm-{run}-{index}"), timeout=60)
            session.post(url, json=custom_body(service_id, f"Warm-up hit {run}", f"warm-hit-{run}"), timeout=60)
        session.close()
        drain(stack)

        # (a) every event opens an incident
        new = measured(
            stack,
            lambda: run_load(
                "(a) new incident (unique dedup_key)",
                url,
                lambda i: custom_body(service_id, f"Bench new {run} {i}", f"new-{run}-{i}"),
                threads=args.threads,
                seconds=args.seconds,
                max_events=args.max_events,
                accept=frozenset({201}),
            ),
        )
        results.append(new)
        before, after, waited = drain(stack)
        notes.append(f"(a) left {before} queued messages for the worker loop; {after} remained after {waited:.1f} s")

        # (b) every event is a dedup hit on one open incident (opened first, not measured)
        hit_key = f"hit-{run}"
        opened = requests.post(url, json=custom_body(service_id, f"Bench dedup {run}", hit_key), timeout=60)
        if opened.status_code != 201:
            notes.append(f"(b) opening the shared incident answered {opened.status_code}: {opened.text[:200]}")
        hits = measured(
            stack,
            lambda: run_load(
                "(b) dedup hit (one dedup_key)",
                url,
                lambda i: custom_body(service_id, f"Bench dedup {run}", hit_key),
                threads=args.threads,
                seconds=args.seconds,
                max_events=args.max_events,
                accept=frozenset({200}),
            ),
        )
        results.append(hits)
        before, after, waited = drain(stack)
        notes.append(
            f"(b) left {before} queued messages (alert_received entries); {after} remained after {waited:.1f} s"
        )
        if len(hits.incident_ids) != 1:
            notes.append(f"(b) dedup hits landed on {len(hits.incident_ids)} incidents: {dict(hits.incident_ids)}")

        # (d) a storm of one new key from every thread at once
        storm_title = f"Bench storm {run}"
        since = datetime.now(UTC) - timedelta(seconds=2)
        storm = measured(
            stack,
            lambda: run_load(
                f"(d) storm: {args.storm} events, one new key",
                url,
                lambda i: custom_body(service_id, storm_title, f"storm-{run}"),
                threads=args.threads,
                seconds=600,
                max_events=args.storm,
                accept=frozenset({200, 201}),
            ),
        )
        results.append(storm)
        listed = count_incidents_titled(stack, storm_title, since)
        created = storm.statuses.get(201, 0)
        storm_ok = listed == 1 and created == 1 and len(storm.incident_ids) == 1 and storm.accepted == args.storm
        notes.append(
            f"(d) {storm.accepted}/{args.storm} accepted ({created} x 201 created, "
            f"{storm.statuses.get(200, 0)} x 200 deduplicated); responses named {len(storm.incident_ids)} "
            f"incident(s); the API lists {listed} incident(s) titled {storm_title!r}. "
            f"Target: 1 incident -> {'OK' if storm_ok else 'NOT MET'}"
        )
        drain(stack)
        if any(r.errors or set(r.statuses) - {200, 201} for r in results):
            notes.append("stack log tail:\n" + stack.log_tail())
    return results, notes


# ---------------------------------------------------------------- round trips, in-process


def part_of(call: DynamoCall) -> str:
    tables = set(call.tables)
    if tables == {"integrations"}:
        return "routing lookup"
    if tables == {"rate-limits"}:
        return "rate limit"
    if tables == {"alert-dedup"} and call.operation in ("GetItem", "Query", "BatchGetItem"):
        return "dedup read"
    if "incidents" in tables and call.operation not in ("GetItem", "Query", "BatchGetItem", "Scan"):
        return "incident write"
    return "other"


PARTS = ("routing lookup", "rate limit", "dedup read", "incident write", "other")


@dataclass
class RoundTrips:
    name: str
    first: Measurement
    warm: list[Measurement]
    statuses: Counter[int]

    @property
    def steady(self) -> Measurement:
        return max(self.warm, key=lambda m: m.total)


def _by_part(measurement: Measurement) -> dict[str, list[DynamoCall]]:
    parts: dict[str, list[DynamoCall]] = {part: [] for part in PARTS}
    for call in measurement.calls:
        parts[part_of(call)].append(call)
    return parts


def in_process_round_trips(runs: int) -> list[RoundTrips]:
    configure_environment(RATE_LIMIT_WEBHOOK="1000000", AUTH_CACHE_SECONDS="0")
    import logging

    from chalice.test import Client

    with moto_account():
        counter = DynamoCounter()
        counter.count_wire_requests()
        counter.install_on_app_clients()

        from chalicelib import aws, clock
        from chalicelib.apikey import service as apikeys
        from chalicelib.catalog.service import create_service
        from chalicelib.directory.teams import create_team
        from chalicelib.incident import workflow_settings as incident_settings
        from chalicelib.integration.admin import create_integration
        from chalicelib.organization.service import create_organization
        from chalicelib.settings import get_settings

        now = clock.now()
        organization = create_organization(name="Bench Ingest Org", now=now)
        org_id = organization.organization_id
        team = create_team(organization_id=org_id, name="Payments", now=now)
        service = create_service(
            organization_id=org_id, name="Payments API", now=now, team_id=team.team_id, default_severity="SEV2"
        )
        issued = create_integration(
            organization_id=org_id,
            integration_type="custom",
            name="bench",
            now=now,
            default_service_key=service.service_key,
            settings=get_settings(),
        )
        get_settings()  # cached outside a test-client call (during one, the Chalice stage's variables apply)

        from app import app

        logging.getLogger("tocsin").setLevel(logging.WARNING)
        path = f"/webhooks/{issued.routing_key}"
        # API Gateway always sets X-Forwarded-Proto; the test stage refuses plain HTTP like AWS would.
        headers = {"Content-Type": "application/json", "X-Forwarded-Proto": "https"}

        def fresh_instance() -> None:
            aws.reset()
            incident_settings.forget()
            apikeys.clear_cache()
            counter.install_on_app_clients()

        with Client(app, project_dir=str(ROOT)) as client:

            def post(body: dict[str, Any], statuses: Counter[int]) -> Measurement:
                with counter.measure() as measurement:
                    response = client.http.post(path, headers=headers, body=json.dumps(body).encode())
                statuses[response.status_code] += 1
                return measurement

            run = uuid.uuid4().hex[:8]
            results = []
            statuses: Counter[int] = Counter()
            fresh_instance()
            first = post(custom_body(service.service_id, f"New {run} 0", f"new-{run}-0"), statuses)
            warm = [
                post(custom_body(service.service_id, f"New {run} {i}", f"new-{run}-{i}"), statuses)
                for i in range(1, runs + 1)
            ]
            results.append(RoundTrips("new incident (unique dedup_key)", first, warm, statuses))

            statuses = Counter()
            hit = custom_body(service.service_id, f"Hit {run}", f"hit-{run}")
            opened: Counter[int] = Counter()
            post(hit, opened)  # opens the incident, not measured
            fresh_instance()
            first = post(hit, statuses)
            warm = [post(hit, statuses) for _ in range(runs)]
            results.append(RoundTrips("dedup hit (same dedup_key)", first, warm, statuses))
    return results


def describe_round_trips(results: list[RoundTrips]) -> list[list[str]]:
    rows = []
    for result in results:
        for when, measurement in (("first", result.first), (f"warm (max of {len(result.warm)})", result.steady)):
            parts = _by_part(measurement)
            beyond = len(parts["dedup read"]) + len(parts["incident write"]) + len(parts["other"])
            is_hit = result.name.startswith("dedup")
            target = f"<= {DEDUP_HIT_TARGET}" if is_hit else "-"
            verdict = ("OK" if beyond <= DEDUP_HIT_TARGET else "OVER") if is_hit else "-"
            calls = "; ".join(
                f"{part}: " + " ".join(call.describe() for call in calls) for part, calls in parts.items() if calls
            )
            wire = "" if measurement.wire_requests == measurement.total else f" [moto saw {measurement.wire_requests}]"
            rows.append(
                [
                    result.name if when == "first" else "",
                    when,
                    str(measurement.total),
                    *(str(len(parts[part])) for part in PARTS),
                    str(beyond),
                    target,
                    verdict,
                    calls + wire,
                ]
            )
    return rows


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=8, help="client threads (8)")
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of (a) and (b) each (10)")
    parser.add_argument("--max-events", type=int, default=5000, help="cap on events in (a) and (b) each (5000)")
    parser.add_argument("--storm", type=int, default=1000, help="same-key events in (d) (1000)")
    parser.add_argument("--runs", type=int, default=IN_PROCESS_RUNS, help="warm runs per kind in (c) (5)")
    parser.add_argument("--rate-limit", type=int, default=1_000_000, help="RATE_LIMIT_WEBHOOK of the stack")
    args = parser.parse_args(argv)
    args.threads = max(1, args.threads)

    print("Inbound webhook ingest (custom webhooks; Tocsin local stack on this machine)")
    print(f"Machine: {os.cpu_count()} CPUs, load average {_load_average()} at start")
    print()
    try:
        loads, notes = http_benchmarks(args)
    except Exception as error:  # a benchmark reports, it does not fail
        loads, notes = [], [f"HTTP benchmarks did not run: {type(error).__name__}: {error}"]
    if loads:
        print(f"(a), (b), (d): HTTP, {args.threads} client threads, keep-alive; (a)/(b) for {args.seconds:.0f} s or")
        print(f"{args.max_events} events each; latency measured at the client, accepted events only")
        print()
        print(
            table(
                [
                    "load",
                    "threads",
                    "accepted",
                    "seconds",
                    "events/s",
                    "p50 ms",
                    "p99 ms",
                    "target",
                    "verdict",
                    "statuses",
                ],
                [describe_load(result) for result in loads],
                right=frozenset({1, 2, 3, 4, 5, 6}),
            )
        )
        print()
        for load in loads:
            print(describe_cpu(load))
        print(f"Load average after the HTTP runs: {_load_average()} (other work on the machine skews the figures)")
        print()
    for note in notes:
        print(note)
    print()

    print("(c) DynamoDB round trips per event (in-process moto, chalice.test.Client, counted at the client)")
    print("first = on a fresh instance (client and settings caches empty); warm = the most expensive later run")
    print()
    try:
        trips = in_process_round_trips(max(1, args.runs))
    except Exception as error:
        trips = []
        print(f"(c) did not run: {type(error).__name__}: {error}")
    if trips:
        headers = ["event", "call", "total", *PARTS, "beyond rl+routing", "target", "verdict", "calls"]
        print(table(headers, describe_round_trips(trips), right=frozenset(range(2, 9))))
        for result in trips:
            print(f"  {result.name}: statuses {dict(result.statuses)}")
        print()

    print("Targets: >= 50 events/s sustained; a dedup hit <= 2 DynamoDB round trips beyond the routing lookup and")
    print("the rate limit; 1,000 same-key events -> exactly 1 incident. Figures only: this never fails on them.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
