"""Alert storms on the local stack: grouping, accounting, and the emulator's cost per event.

    .venv/bin/python bench/storm.py [--events 1000] [--threads 8] [--window 15]

Starts the real local stack (`python -m chalicelib.local`, as `make run` does, in a temporary
directory, RATE_LIMIT_WEBHOOK raised so the 100/min webhook limit does not throttle the storm),
then through the API makes three services with time grouping ({type: time, window_minutes:
--window}) and one custom webhook, and sends two storms from --threads threads, each keeping
one HTTP connection:

  (a) --events alerts with distinct dedup keys, spread round-robin over the three services:
      at most three incidents may come of it (one per service), and every alert must be on
      record: the alerts of those incidents add up to --events, and so do the per-service lists;
  (b) --events events with one dedup key: one incident, one alert whose count is --events.

Cost: a monitor thread reads the emulator's CPU time (/proc of the moto server, a child of the
stack) as the accepted-event counter passes each hundred; the figure per hundred is CPU ms per
event in that hundred. Flat means the last hundreds cost what the first ones did: the per-event
path reads and writes by key only, whatever the size of the tables. The stack's own process (API
and the worker loop) is shown beside it. Prints figures; never fails on them; always exits 0.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import _stack  # noqa: E402

SERVICES = ("Storm edge", "Storm core", "Storm data")
SINGLE_SERVICE = "Storm single key"  # no grouping: (b) opens its own incident


def cpu_seconds(pid: int | None) -> float:
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


@dataclass
class Storm:
    name: str
    events: int
    elapsed: float = 0.0
    statuses: Counter[int] = field(default_factory=Counter)
    incidents: Counter[str] = field(default_factory=Counter)
    alerts: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    # (accepted events, emulator CPU s, stack CPU s) each time the count passed a hundred.
    samples: list[tuple[int, float, float]] = field(default_factory=list)

    @property
    def accepted(self) -> int:
        return sum(n for status, n in self.statuses.items() if status < 300)


def storm(
    stack: _stack.RunningStack,
    name: str,
    url: str,
    body_for: Callable[[int], dict[str, Any]],
    events: int,
    threads: int,
) -> Storm:
    import requests

    result = Storm(name, events)
    lock = threading.Lock()
    counter = itertools.count()
    done = [0]
    barrier = threading.Barrier(threads + 1)
    finished = threading.Event()
    emulator, own = stack.emulator_pid(), stack.process.pid

    def client() -> None:
        session = requests.Session()
        barrier.wait()
        while True:
            with lock:
                index = next(counter)
            if index >= events:
                break
            try:
                response = session.post(url, json=body_for(index), timeout=60)
            except requests.RequestException as error:
                with lock:
                    result.errors[type(error).__name__] += 1
                continue
            answer = response.json() if response.headers.get("Content-Type", "").startswith("application/json") else {}
            with lock:
                result.statuses[response.status_code] += 1
                if response.status_code < 300:
                    done[0] += 1
                    result.incidents[str((answer.get("incident") or {}).get("id"))] += 1
                    result.alerts[str((answer.get("alert") or {}).get("id"))] += 1
        session.close()

    def monitor() -> None:
        next_mark = 0
        while True:
            current = done[0]
            if current >= next_mark:
                result.samples.append((current, cpu_seconds(emulator), cpu_seconds(own)))
                next_mark = (current // 100 + 1) * 100
            elif finished.is_set():
                result.samples.append((current, cpu_seconds(emulator), cpu_seconds(own)))
                return
            else:
                time.sleep(0.005)

    workers = [threading.Thread(target=client) for _ in range(threads)]
    watcher = threading.Thread(target=monitor)
    for worker in workers:
        worker.start()
    watcher.start()
    started = time.perf_counter()
    barrier.wait()
    for worker in workers:
        worker.join()
    result.elapsed = time.perf_counter() - started
    finished.set()
    watcher.join()
    return result


def print_cost(result: Storm) -> None:
    print(f"  emulator CPU per event, per hundred events ({result.name}):")
    print("    events        emulator ms/event   stack ms/event")
    for (count_a, emu_a, own_a), (count_b, emu_b, own_b) in itertools.pairwise(result.samples):
        if count_b <= count_a:
            continue
        span = count_b - count_a
        print(
            f"    {count_a + 1:>5}-{count_b:<5}   {1000 * (emu_b - emu_a) / span:>10.1f}"
            f"          {1000 * (own_b - own_a) / span:>10.1f}"
        )
    per_hundred = [
        1000 * (b[1] - a[1]) / (b[0] - a[0]) for a, b in itertools.pairwise(result.samples) if b[0] - a[0] >= 50
    ]
    if len(per_hundred) >= 4:
        first, last = sum(per_hundred[:2]) / 2, sum(per_hundred[-2:]) / 2
        print(f"  first two hundreds {first:.1f} ms/event, last two {last:.1f} ms/event: ratio {last / first:.2f}")


class Api:
    def __init__(self, base_url: str, key: str) -> None:
        import requests

        self.base_url, self.session = base_url, requests.Session()
        self.session.headers["Authorization"] = f"Bearer {key}"

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self.session.request(method, self.base_url + path, json=body, timeout=60)
        if response.status_code >= 300:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:300]}")
        return response.json()["data"]

    def total(self, path: str) -> int:
        return int(self.call("GET", path + ("&" if "?" in path else "?") + "limit=1")["total"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--window", type=int, default=15, help="time grouping window, minutes")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="tocsin-bench-storm-") as directory:
        print("Starting a local stack (python -m chalicelib.local) ...", flush=True)
        stack = _stack.start(
            Path(directory), fresh=True, environment={"RATE_LIMIT_WEBHOOK": "1000000", "RATE_LIMIT_API_KEY": "100000"}
        )
        try:
            run(stack, args)
        finally:
            _stack.stop(stack)


def run(stack: _stack.RunningStack, args: argparse.Namespace) -> None:
    api = Api(stack.base_url, stack.owner_key)
    grouping = {"type": "time", "window_minutes": args.window}
    services = [api.call("POST", "/api/v1/services", {"name": name, "alert_grouping": grouping}) for name in SERVICES]
    single = api.call("POST", "/api/v1/services", {"name": SINGLE_SERVICE})
    hook = api.call("POST", "/api/v1/integrations", {"type": "custom", "name": "Storm bench"})
    url = f"{stack.base_url}/webhooks/{hook['routing_key']}"
    ids = [service["service_id"] for service in services]
    print(f"Services {', '.join(ids)} with alert_grouping {grouping}; {args.threads} threads.\n")

    def distinct(index: int) -> dict[str, Any]:
        return {"title": f"Router {index} unreachable", "service_id": ids[index % 3], "dedup_key": f"storm-{index}"}

    a = storm(stack, "distinct keys", url, distinct, args.events, args.threads)
    opened = sorted(number for number in a.incidents if number != "None")
    print(f"(a) {args.events} alerts with distinct keys over 3 services, time grouping on")
    print(f"  sent in {a.elapsed:.1f} s ({a.accepted / a.elapsed:.0f} events/s); answers {dict(a.statuses)}")
    if a.errors:
        print(f"  client errors: {dict(a.errors)}")
    print(f"  incidents opened: {len(opened)} (at most 3): {', '.join(opened)}")
    on_incidents = sum(api.total(f"/api/v1/incidents/{number}/alerts") for number in opened)
    per_service = sum(api.total(f"/api/v1/alerts?service_id={service_id}") for service_id in ids)
    distinct_alerts = len([alert for alert in a.alerts if alert != "None"])
    print(
        f"  alerts on record: {on_incidents} on those incidents, {per_service} in the service lists, "
        f"{distinct_alerts} distinct alert ids answered (each must be {args.events})"
    )
    print_cost(a)

    def same(index: int) -> dict[str, Any]:
        return {"title": "Checkout 500s", "service_id": single["service_id"], "dedup_key": "storm-same-key"}

    b = storm(stack, "one key", url, same, args.events, args.threads)
    opened_b = sorted(number for number in b.incidents if number != "None")
    print(f"\n(b) {args.events} events with one dedup key")
    print(f"  sent in {b.elapsed:.1f} s ({b.accepted / b.elapsed:.0f} events/s); answers {dict(b.statuses)}")
    alert_ids = [alert for alert in b.alerts if alert != "None"]
    count = api.call("GET", f"/api/v1/alerts/{alert_ids[0]}")["count"] if len(alert_ids) == 1 else None
    print(f"  incidents: {len(opened_b)} (must be 1); alerts: {len(alert_ids)} (must be 1), its count {count}")
    print_cost(b)


if __name__ == "__main__":
    main()
