"""How long `make run` takes to come back with 10,000 incidents stored (README "Local data").

    .venv/bin/python bench/restart.py [--incidents 10000] [--dir DIR]

Starts the real local stack empty (FRESH) in its own directory, writes the incidents straight to
the emulator's incidents table (PynamoDB batch_write, 25 per request: each incident item shaped
as chalicelib/incident/service.py writes it, with its `created` timeline entry, and the year's
incident counter moved on to match), then:

1. stops it cleanly (SIGTERM: the emulator writes a last snapshot) and starts it again;
2. writes 100 more incidents and kills the emulator and the runner with SIGKILL at once (no final
   snapshot: the journal must carry them) and starts it again.

Each restart is timed from starting the process to the API answering with the data: the newest
incident readable over HTTP and the next incident created over HTTP numbered right after it.
Prints figures; exits 1 only if data was missing after a restart.
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import _stack  # noqa: E402


def incident_items(demo: dict[str, Any], first: int, count: int, year: int) -> list[Any]:
    """Incidents first..first+count-1 of `year` (one a minute from January 1), each with its entry."""
    from chalicelib import clock
    from chalicelib.incident import repository
    from chalicelib.incident.service import created_sort_key, incident_number
    from chalicelib.incident.tables import IncidentRecord, incident_partition, list_partition

    organization_id = demo["organization_id"]
    service_key = demo["services"][0]["service_key"]
    items: list[Any] = []
    for sequence in range(first, first + count):
        created = datetime(year, 1, 1, tzinfo=UTC) + timedelta(minutes=sequence)
        number = incident_number(year, sequence)
        still_open = sequence % 20 == 0
        record = IncidentRecord(
            incident_partition(organization_id, number),
            organization_id=organization_id,
            incident_number=number,
            title=f"Seeded incident {sequence}: elevated error rate on checkout",
            description="Seeded by bench/restart.py.",
            status="investigating" if still_open else "resolved",
            status_category="active" if still_open else "resolved",
            severity=("SEV1", "SEV2", "SEV3")[sequence % 3],
            service_keys=[service_key],
            team_id=demo["team"]["id"],
            team_name=demo["team"]["name"],
            created_at=created,
            updated_at=created,
            created_by="bench (API key)",
            resolved_at=None if still_open else created + timedelta(minutes=30),
            sla={
                "acknowledge_due_at": clock.isoformat(created + timedelta(minutes=15)),
                "resolve_due_at": clock.isoformat(created + timedelta(hours=4)),
            },
            list_key=list_partition(organization_id, is_open=still_open),
            created_sort=created_sort_key(created, number),
        )
        record.version = 1
        entry = repository.timeline_entry(
            record, event_type="created", now=created, title=f"Incident created: {record.title}", user="bench"
        )
        items += [record, entry]
    return items


def seed(stack: _stack.RunningStack, first: int, count: int, year: int) -> float:
    from chalicelib import aws
    from chalicelib.incident.tables import IncidentRecord
    from chalicelib.store.counters import CounterRecord

    _stack.aws_environment(stack.demo)  # forgets cached settings and clients: each start has new ports
    aws.bind_tables()
    began = time.monotonic()
    with IncidentRecord.batch_write() as batch:
        for item in incident_items(stack.demo, first, count, year):
            batch.save(item)
    counter = CounterRecord(stack.demo["organization_id"], f"incident#{year}")
    counter.current_value = first + count - 1
    counter.save()
    return time.monotonic() - began


def timed_restart(local_dir: Path, newest: str, expected_next: str) -> tuple[float, float, bool]:
    """(seconds to demo.json, seconds until the data answers over HTTP, data complete)."""
    began = time.monotonic()
    stack = _stack.start(local_dir)
    headers = {"Authorization": f"Bearer {stack.owner_key}"}
    found = requests.get(f"{stack.base_url}/api/v1/incidents/{newest}", headers=headers, timeout=30)
    answered = time.monotonic() - began
    created = requests.post(
        f"{stack.base_url}/api/v1/incidents",
        headers=headers,
        json={"title": "after restart", "service_ids": [stack.demo["services"][0]["service_key"]]},
        timeout=30,
    )
    number = created.json().get("data", {}).get("incident_number") if created.status_code == 201 else None
    complete = found.status_code == 200 and number == expected_next
    if not complete:
        print(f"  missing data: GET {newest} -> {found.status_code}; next number {number}, expected {expected_next}")
    _stack.stop(stack)
    return stack.ready_seconds, answered, complete


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--incidents", type=int, default=10_000)
    parser.add_argument("--dir", type=Path, default=None, help="LOCAL_DIR for the stack (default: a temporary one)")
    arguments = parser.parse_args(argv)
    local_dir = arguments.dir or Path(tempfile.mkdtemp(prefix="tocsin-restart-")) / "local"
    from chalicelib.incident.service import incident_number

    year = datetime.now(UTC).year
    count = arguments.incidents
    print(f"local dir: {local_dir}")

    empty = _stack.start(local_dir, fresh=True)
    print(f"empty start: ready in {empty.ready_seconds:.2f}s")
    seconds = seed(empty, 1, count, year)
    print(f"seeded {count:,} incidents (+{count:,} timeline entries) in {seconds:.1f}s")
    stop_seconds = _stack.stop(empty)
    data_dir = local_dir / "data"
    size = (data_dir / "emulator-state.pickle").stat().st_size
    print(f"clean stop (SIGTERM, final snapshot): {stop_seconds:.2f}s; snapshot {size / 1e6:.1f} MB")

    ready, answered, complete_clean = timed_restart(
        local_dir, incident_number(year, count), incident_number(year, count + 1)
    )
    print(f"restart after a clean stop: ready {ready:.2f}s, data answered {answered:.2f}s")

    stack = _stack.start(local_dir)
    extra_first = count + 2  # count + 1 went to the incident created after the first restart
    seed(stack, extra_first, 100, year)
    _stack.stop(stack, signal.SIGKILL)
    journal = sum(path.stat().st_size for path in data_dir.glob("journal-*.jsonl"))
    ready_killed, answered_killed, complete_killed = timed_restart(
        local_dir, incident_number(year, extra_first + 99), incident_number(year, extra_first + 100)
    )
    print(
        f"restart after SIGKILL of every process (journal {journal / 1e3:.0f} KB to replay): "
        f"ready {ready_killed:.2f}s, data answered {answered_killed:.2f}s"
    )
    log = (data_dir / "emulator.log").read_text().strip().splitlines()
    print("emulator log:\n  " + "\n  ".join(line for line in log if line.startswith("state:")))
    return 0 if complete_clean and complete_killed else 1


if __name__ == "__main__":
    sys.exit(main())
