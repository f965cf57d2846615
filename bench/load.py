"""A mix of reads, writes and webhooks against the local stack, then a check that nothing was lost.

    .venv/bin/python bench/load.py [--seconds 30] [--threads 8]            # starts its own stack
    .venv/bin/python bench/load.py --base-url http://127.0.0.1:8000 [--demo .local/demo.json]

Without --base-url it starts the real stack (`make run`'s entry point) empty in a temporary
directory, with the rate limits raised (this measures the pipeline, not the limiter); with it,
it uses the running stack and its demo.json, and counts 429s apart from errors. Only 127.0.0.1.

Each thread picks, until the time is up: a read (half: the incident list, or one incident it
knows), a write (a quarter: create an incident, or acknowledge one), or a webhook (a quarter: the
custom integration, half with a fresh dedup_key, half with one of DEDUP_POOL shared keys).

Then it checks: every accepted webhook's incident answers over HTTP; each shared key's accepted
webhooks all landed on one incident whose stored alert count (read from the emulator's table)
equals their number; every created number is unique; and the list total over every status grew
by exactly the incidents the run created (201s of the API and of the webhooks).
Prints figures; exits 1 if anything was lost.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import _stack  # noqa: E402

DEDUP_POOL = 10
ALL_STATUSES = "new,investigating,identified,monitoring,resolved,closed"
KINDS = ("read", "write", "webhook")
WEIGHTS = (2, 1, 1)


@dataclass
class Results:
    lock: threading.Lock = field(default_factory=threading.Lock)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    errors: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)  # numbers the API's POST answered 201 with
    webhook_created: list[str] = field(default_factory=list)  # numbers webhooks answered 201 with
    accepted_by_key: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def record(self, kind: str, seconds: float, status: int) -> None:
        with self.lock:
            self.latencies[kind].append(seconds)
            self.statuses[kind][status] += 1


class Driver:
    def __init__(self, base_url: str, demo: dict[str, Any], results: Results, run_id: str) -> None:
        self.base_url = base_url
        self.demo = demo
        self.results = results
        self.run_id = run_id
        self.headers = {"Authorization": f"Bearer {demo['api_keys']['owner']}"}
        self.service_key = demo["services"][0]["service_key"]
        self.service_id = demo["services"][0]["service_id"]
        self.webhook_url = demo["integrations"]["custom"]["url"]

    def run(self, deadline: float, seed: int) -> None:
        rng = random.Random(seed)
        session = requests.Session()
        while time.monotonic() < deadline:
            kind = rng.choices(KINDS, weights=WEIGHTS)[0]
            began = time.monotonic()
            try:
                status = getattr(self, kind)(session, rng)
            except requests.RequestException as error:
                with self.results.lock:
                    self.results.errors.append(f"{kind}: {error!r}")
                continue
            self.results.record(kind, time.monotonic() - began, status)

    def read(self, session: requests.Session, rng: random.Random) -> int:
        with self.results.lock:
            known = rng.choice(self.results.created) if self.results.created and rng.random() < 0.5 else None
        path = f"/api/v1/incidents/{known}" if known else "/api/v1/incidents?limit=20"
        return self._checked("read", session.get(self.base_url + path, headers=self.headers, timeout=30), 200)

    def write(self, session: requests.Session, rng: random.Random) -> int:
        with self.results.lock:
            target = rng.choice(self.results.created) if self.results.created and rng.random() < 0.3 else None
        if target:
            url = f"{self.base_url}/api/v1/incidents/{target}/acknowledge"
            return self._checked("write", session.post(url, headers=self.headers, timeout=30), 200)
        body = {"title": f"load {self.run_id}", "service_ids": [self.service_key], "severity": "SEV3"}
        response = session.post(f"{self.base_url}/api/v1/incidents", headers=self.headers, json=body, timeout=30)
        if response.status_code == 201:
            with self.results.lock:
                self.results.created.append(response.json()["data"]["incident_number"])
        return self._checked("write", response, 201)

    def webhook(self, session: requests.Session, rng: random.Random) -> int:
        shared = rng.random() < 0.5
        key = f"load-{self.run_id}-{rng.randrange(DEDUP_POOL) if shared else uuid.uuid4().hex}"
        body = {"title": f"load alert {key}", "service_id": self.service_id, "dedup_key": key}
        response = session.post(self.webhook_url, data=json.dumps(body), timeout=30)
        if response.status_code in (200, 201):
            number = response.json()["incident"]["id"]
            with self.results.lock:
                self.results.accepted_by_key[key].append(number)
                if response.status_code == 201:
                    self.results.webhook_created.append(number)
        return self._checked("webhook", response, 200, 201)

    def _checked(self, kind: str, response: requests.Response, *expected: int) -> int:
        if response.status_code not in expected and response.status_code != 429:
            with self.results.lock:
                self.results.errors.append(f"{kind}: {response.status_code} {response.text[:200]}")
        return response.status_code


def list_total(base_url: str, headers: dict[str, str]) -> int:
    response = requests.get(f"{base_url}/api/v1/incidents?status={ALL_STATUSES}&limit=1", headers=headers, timeout=60)
    response.raise_for_status()
    return int(response.json()["data"]["total"])


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def report(results: Results, seconds: float) -> None:
    total = sum(len(v) for v in results.latencies.values())
    print(f"{total:,} requests in {seconds:.1f}s: {total / seconds:.1f}/s; {len(results.errors)} errors")
    print(f"  {'kind':<8} {'count':>7} {'per s':>7} {'p50 ms':>8} {'p99 ms':>8}  statuses")
    for kind in KINDS:
        values = results.latencies.get(kind, [])
        statuses = ", ".join(f"{code}: {count}" for code, count in sorted(results.statuses[kind].items()))
        print(
            f"  {kind:<8} {len(values):>7,} {len(values) / seconds:>7.1f} {percentile(values, 0.5) * 1000:>8.1f} "
            f"{percentile(values, 0.99) * 1000:>8.1f}  {statuses}"
        )
    for error in results.errors[:10]:
        print(f"  error: {error}")


def stored_alert_counts(demo: dict[str, Any], numbers: set[str]) -> dict[str, int]:
    """Each incident's alert count as stored (the API does not show it), read from the emulator."""
    from chalicelib import aws
    from chalicelib.incident.tables import INCIDENT_SORT_KEY, IncidentRecord, incident_partition

    _stack.aws_environment(demo)
    aws.bind_tables()
    counts = {}
    for number in numbers:
        record = IncidentRecord.get(incident_partition(demo["organization_id"], number), INCIDENT_SORT_KEY)
        counts[number] = int(record.alert_count or 0)
    return counts


def verify(base_url: str, demo: dict[str, Any], results: Results, total_before: int) -> list[str]:
    headers = {"Authorization": f"Bearer {demo['api_keys']['owner']}"}
    problems = []
    every_created = results.created + results.webhook_created
    if len(set(every_created)) != len(every_created):
        problems.append("an incident number was handed out twice")
    accepted_numbers = {n for numbers in results.accepted_by_key.values() for n in numbers}
    for number in sorted(accepted_numbers):
        if requests.get(f"{base_url}/api/v1/incidents/{number}", headers=headers, timeout=30).status_code != 200:
            problems.append(f"accepted webhook's incident {number} is missing")
    counts = stored_alert_counts(demo, accepted_numbers)
    for key, numbers in results.accepted_by_key.items():
        if len(set(numbers)) != 1:
            problems.append(f"dedup_key {key} landed on {sorted(set(numbers))}")
        elif counts.get(numbers[0]) != len(numbers):
            problems.append(f"{numbers[0]}: alert count {counts.get(numbers[0])}, {len(numbers)} webhooks accepted")
    total_after = list_total(base_url, headers)
    if total_after != total_before + len(every_created):
        problems.append(f"list total {total_after} != {total_before} before + {len(every_created)} created")
    deduplicated = sum(len(numbers) - 1 for numbers in results.accepted_by_key.values())
    hit = sum(1 for numbers in results.accepted_by_key.values() if len(numbers) > 1)
    created = f"+{len(results.created):,} API, +{len(results.webhook_created):,} webhooks"
    print(
        f"checked: {len(accepted_numbers):,} webhook incidents readable, {deduplicated:,} dedup hits counted on "
        f"{hit} incidents, list total {total_before:,} -> {total_after:,} ({created})"
    )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--base-url", help="a running stack (127.0.0.1 only); default: start one")
    parser.add_argument("--demo", type=Path, default=Path(".local/demo.json"), help="with --base-url: its demo.json")
    arguments = parser.parse_args(argv)
    stack = None
    if arguments.base_url:
        if not arguments.base_url.startswith(("http://127.0.0.1:", "http://localhost:")):
            parser.error("--base-url must be a local stack on 127.0.0.1")
        base_url, demo = arguments.base_url.rstrip("/"), json.loads(arguments.demo.read_text())
    else:
        local_dir = Path(tempfile.mkdtemp(prefix="tocsin-load-")) / "local"
        limits = {"RATE_LIMIT_API_KEY": "10000000", "RATE_LIMIT_WEBHOOK": "10000000"}
        stack = _stack.start(local_dir, fresh=True, environment=limits)
        base_url, demo = stack.base_url, stack.demo
        print(f"started a stack in {stack.ready_seconds:.1f}s at {base_url} (data in {local_dir})")
    try:
        headers = {"Authorization": f"Bearer {demo['api_keys']['owner']}"}
        total_before = list_total(base_url, headers)
        results = Results()
        driver = Driver(base_url, demo, results, uuid.uuid4().hex[:8])
        began = time.monotonic()
        deadline = began + arguments.seconds
        threads = [
            threading.Thread(target=driver.run, args=(deadline, index), daemon=True)
            for index in range(arguments.threads)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        report(results, time.monotonic() - began)
        problems = verify(base_url, demo, results, total_before)
    finally:
        if stack is not None:
            _stack.stop(stack)
    for problem in problems[:20]:
        print(f"LOST: {problem}")
    print("nothing lost" if not problems else f"{len(problems)} problems")
    return 1 if problems or results.errors else 0


if __name__ == "__main__":
    sys.exit(main())
