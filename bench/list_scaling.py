"""Items the incident list reads as the history grows: default list against filtered lists.

    .venv/bin/python bench/list_scaling.py [--sizes 100,1000,10000] [--open-percent 5]

Runs in-process on moto. Incidents are written straight to the incidents table with PynamoDB
batch_write (25 per request), shaped exactly as chalicelib/incident/service.py writes them
(partition, list_key, created_sort, version), one every hour, every twentieth left open and the
rest resolved. Each list is chalicelib.incident.listing.list_incidents, the function behind
GET /api/v1/incidents; what it read is its `items_read`, cross-checked with the ScannedCount
and ConsumedCapacity DynamoDB reports for each Query (counted at the client, botocore events).

Prints figures only; never fails on them, always exits 0.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._support import (  # noqa: E402
    DynamoCounter,
    Measurement,
    configure_environment,
    moto_account,
    read_units,
    table,
)

DEFAULT_SIZES = (100, 1_000, 10_000)
DEFAULT_OPEN_PERCENT = 5
FIRST_CREATED = datetime(2025, 1, 1, tzinfo=UTC)
SPACING = timedelta(hours=1)
SEVERITIES = ("SEV0", "SEV1", "SEV2", "SEV3", "SEV4")
SEVERITY_WEIGHTS = (2, 18, 30, 35, 15)
OPEN_STATUSES = ("new", "investigating", "identified", "monitoring")
FLAT_OPEN = 50  # the extra row: the largest history with only this many still open


@dataclass(frozen=True)
class ListRun:
    label: str
    items_read: int  # listing.list_incidents' own count
    scanned: int  # sum of the Queries' ScannedCount
    queries: int
    capacity: float  # read capacity units the Queries would consume on DynamoDB (from the bytes returned)
    kilobytes: float  # what the Queries returned
    moto_capacity: float  # the ConsumedCapacity moto reported (it does not size reads)
    matched: int  # the page's total
    seconds: float

    def cell(self) -> str:
        check = "" if self.items_read == self.scanned else f" (scanned {self.scanned:,})"
        return f"{self.items_read:,}{check}"


# ---------------------------------------------------------------- seeding


def incident_number(index: int, created_at: datetime) -> str:
    from chalicelib.incident.service import incident_number as formatted

    return formatted(created_at.year, index + 1)


def created_at_of(index: int) -> datetime:
    return FIRST_CREATED + index * SPACING


def is_open(index: int, open_every: int) -> bool:
    return index % open_every == open_every - 1


def make_record(organization_id: str, index: int, open_every: int, rng: random.Random, *, still_open: bool) -> Any:
    """One incident item as service.create_incident writes it, moved on as change_status would."""
    from chalicelib import clock
    from chalicelib.incident.service import created_sort_key
    from chalicelib.incident.tables import IncidentRecord, incident_partition, list_partition

    created = created_at_of(index)
    number = incident_number(index, created)
    severity = rng.choices(SEVERITIES, weights=SEVERITY_WEIGHTS)[0]
    status = OPEN_STATUSES[index % len(OPEN_STATUSES)] if still_open else "resolved"
    resolved = None if still_open else created + timedelta(minutes=20 + index % 240)
    record = IncidentRecord(
        incident_partition(organization_id, number),
        organization_id=organization_id,
        incident_number=number,
        title=f"Synthetic incident {index + 1}: elevated error rate on checkout",
        description="Seeded by bench/list_scaling.py.",
        status=status,
        status_category=("triggered" if status == "new" else "active") if still_open else "resolved",
        severity=severity,
        service_keys=["svc_bench00001"],
        team_id="team-bench",
        team_name="Payments",
        created_at=created,
        updated_at=resolved or created,
        created_by="bench (API key)",
        resolved_at=resolved,
        resolved_by_email=None if still_open else "alice@example.com",
        resolved_by_name=None if still_open else "alice@example.com",
        sla={
            "acknowledge_due_at": clock.isoformat(created + timedelta(minutes=15)),
            "resolve_due_at": clock.isoformat(created + timedelta(hours=4)),
        },
        list_key=list_partition(organization_id, is_open=still_open),
        created_sort=created_sort_key(created, number),
    )
    record.version = 1  # what the conditional save in repository.commit leaves on a new incident
    return record


def seed(organization_id: str, start: int, stop: int, open_every: int) -> float:
    """Write incidents [start, stop); returns seconds taken."""
    from chalicelib.incident.tables import IncidentRecord

    began = time.perf_counter()
    with IncidentRecord.batch_write() as batch:
        for index in range(start, stop):
            rng = random.Random(index)  # the same incident whatever the sizes asked for
            batch.save(make_record(organization_id, index, open_every, rng, still_open=is_open(index, open_every)))
    return time.perf_counter() - began


def resolve_all_but(organization_id: str, stored: int, open_every: int, keep_open: int) -> int:
    """Move the oldest open incidents to the closed partition, leaving the newest `keep_open` open."""
    from chalicelib.incident.tables import IncidentRecord

    open_indexes = [index for index in range(stored) if is_open(index, open_every)]
    to_close = open_indexes[: max(0, len(open_indexes) - keep_open)]
    with IncidentRecord.batch_write() as batch:
        for index in to_close:
            batch.save(make_record(organization_id, index, open_every, random.Random(index), still_open=False))
    return len(open_indexes) - len(to_close)


# ---------------------------------------------------------------- measuring


def run_list(counter: DynamoCounter, organization_id: str, label: str, **filters: Any) -> ListRun:
    from chalicelib.incident.listing import list_incidents
    from chalicelib.incident.models import IncidentListQuery

    query = IncidentListQuery.model_validate(filters)
    began = time.perf_counter()
    with counter.measure() as measurement:
        page = list_incidents(organization_id=organization_id, query=query)
    seconds = time.perf_counter() - began
    queries = queries_of(measurement)
    return ListRun(
        label=label,
        items_read=page.items_read,
        scanned=sum(call.scanned_count or 0 for call in queries),
        queries=len(queries),
        capacity=sum(read_units(call.bytes_read) for call in queries),
        kilobytes=sum(call.bytes_read for call in queries) / 1024,
        moto_capacity=sum(call.capacity_units or 0.0 for call in queries),
        matched=page.total,
        seconds=seconds,
    )


def queries_of(measurement: Measurement) -> list[Any]:
    return [call for call in measurement.calls if call.operation == "Query"]


@dataclass(frozen=True)
class SizeResult:
    stored: int
    open: int
    default: ListRun
    severity_only: ListRun
    filtered: ListRun | None  # None: not measured (the closed partition did not change)
    narrowed: ListRun | None
    seed_seconds: float


def measure_size(
    counter: DynamoCounter, organization_id: str, stored: int, open_count: int, seeded: float, *, closed: bool = True
) -> SizeResult:
    from chalicelib import clock

    last = created_at_of(stored - 1)
    after = created_at_of(0) + (last - created_at_of(0)) * 0.9
    resolved_sev1: dict[str, Any] = {"status": ["resolved"], "severity": ["SEV1"]}
    return SizeResult(
        stored=stored,
        open=open_count,
        default=run_list(counter, organization_id, "default"),
        severity_only=run_list(counter, organization_id, "severity", severity=["SEV1"]),
        filtered=run_list(counter, organization_id, "status+severity", **resolved_sev1) if closed else None,
        narrowed=(
            run_list(counter, organization_id, "narrowed", **resolved_sev1, created_after=clock.isoformat(after))
            if closed
            else None
        ),
        seed_seconds=seeded,
    )


# ---------------------------------------------------------------- reporting


def _cells(run: ListRun | None, *fields: str) -> list[str]:
    if run is None:
        return ["-"] * len(fields)
    values = {
        "read": run.cell(),
        "queries": str(run.queries),
        "rcu": f"{run.capacity:g}",
        "kb": f"{run.kilobytes:,.0f}",
        "matched": f"{run.matched:,}",
    }
    return [values[name] for name in fields]


def print_results(results: list[SizeResult]) -> None:
    print("Columns per list: items read | Query calls | RCU (estimated) | KB returned | matches (the page's total)")
    print()
    headers = [
        "stored",
        "open",
        "default: read",
        "Query",
        "RCU",
        "?severity=SEV1: read",
        "Query",
        "?status=resolved&severity=SEV1: read",
        "Query",
        "RCU",
        "KB",
        "matched",
        "same + created_after last 10%: read",
        "Query",
        "matched",
    ]
    rows = [
        [
            f"{r.stored:,}",
            f"{r.open:,}",
            *_cells(r.default, "read", "queries", "rcu"),
            *_cells(r.severity_only, "read", "queries"),
            *_cells(r.filtered, "read", "queries", "rcu", "kb", "matched"),
            *_cells(r.narrowed, "read", "queries", "matched"),
        ]
        for r in results
    ]
    print(table(headers, rows, right=frozenset(range(len(headers)))))


def print_timings(results: list[SizeResult]) -> None:
    print("Wall time on in-process moto (its response serializer costs ~5 ms per item and it scans the whole table")
    print("for an index Query: these times say nothing about DynamoDB latency):")
    for r in results:
        lists = [("default", r.default), ("severity", r.severity_only), ("resolved+SEV1", r.filtered)]
        lists.append(("narrowed", r.narrowed))
        timings = ", ".join(f"{label} {run.seconds:.2f} s" for label, run in lists if run is not None)
        print(f"  {r.stored:>6,} stored, {r.open:>4,} open: written in {r.seed_seconds:5.1f} s; lists: {timings}")


def print_footer(results: list[SizeResult], open_every: int) -> None:
    measured = [r for r in results if r.filtered is not None and r.narrowed is not None]
    largest = max(measured, key=lambda r: r.stored)
    assert largest.filtered is not None and largest.narrowed is not None
    flat = results[-1] if results[-1].filtered is None else None
    print()
    print("What this shows:")
    print("- The default list (no status filter), and ?severity=SEV1 alone, read only the organization's open")
    print("  partition of the list index: every item they read is an open incident, never a resolved one. Their")
    print("  cost follows how many incidents are open, not how many are stored.")
    same = all(r.default.items_read == r.open == r.severity_only.items_read for r in results)
    print(f"  Read = open incidents, for both, {'in every row' if same else 'NOT in every row (see the table)'}.")
    if flat is not None:
        print(
            f"  The last row keeps {flat.stored:,} stored with {flat.open} open and reads "
            f"{flat.default.items_read:,}: the same as at {flat.open * open_every:,} stored."
        )
        print(f"  (Above it, 1 in {open_every} is open, so there the open count grows with the table.)")
    print("- A filter naming a resolved status reads the whole closed partition, so it grows with the history:")
    print(
        f"  {largest.filtered.items_read:,} items ({largest.filtered.kilobytes:,.0f} KB, "
        f"{largest.filtered.queries} Query pages of at most 1 MB, ~{largest.filtered.capacity:g} RCU) at "
        f"{largest.stored:,} stored,"
    )
    print(
        f"  to return {largest.filtered.matched:,} matches. Severity, team, assignee and resolved_* filters are "
        "applied after"
    )
    print("  the read; they do not narrow it.")
    print("- created_after/created_before do narrow it, with the index's sort key: created_after = the start of the")
    print(
        f"  last 10% of the time range read {largest.narrowed.items_read:,} items in {largest.narrowed.queries} "
        f"Query call(s) instead of {largest.filtered.items_read:,}."
    )
    print("- Every list reads all of its partition whatever the page size (limit 20 here): the response carries")
    print("  `total`, so the default list costs one item per open incident, not one page.")
    runs = [run for r in results for run in (r.default, r.severity_only, r.filtered, r.narrowed) if run is not None]
    agree = all(run.items_read == run.scanned for run in runs)
    print(
        f"- ScannedCount (summed over each list's Query pages) {'equalled' if agree else 'differed from'} "
        f"listing's items_read in {'every one' if agree else 'some'} of the {len(runs)} lists."
    )
    print("- Timeline entries share the incidents table but carry no list_key, so the sparse index never holds them;")
    print("  none were seeded. RCU are estimated from the bytes each Query returned (4 KB units, halved for the")
    print(
        "  index's eventually consistent reads): moto does not size reads, it reported "
        f"{largest.filtered.moto_capacity:g} RCU for that largest read."
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(str(s) for s in DEFAULT_SIZES), help="stored incident counts")
    parser.add_argument("--open-percent", type=int, default=DEFAULT_OPEN_PERCENT, help="share left open (5)")
    args = parser.parse_args(argv)
    sizes = sorted({int(size) for size in args.sizes.split(",") if size.strip()})
    open_every = max(1, round(100 / max(1, args.open_percent)))

    configure_environment()
    from chalicelib.organization.service import create_organization

    started = time.perf_counter()
    print("Incident list: items read as the history grows (in-process moto; listing.list_incidents)")
    print(
        f"Seeded: one incident an hour from {FIRST_CREATED:%Y-%m-%d}, 1 in {open_every} open, the rest resolved; "
        "severity SEV0..SEV4 weighted 2/18/30/35/15."
    )
    print("read = items the Queries returned to listing (ScannedCount shown only if it differs).")
    print()
    results: list[SizeResult] = []
    with moto_account():
        counter = DynamoCounter()
        counter.consumed_capacity = True  # ReturnConsumedCapacity=TOTAL on every read
        counter.install_on_app_clients()
        organization_id = create_organization(name="Scaling Org", now=FIRST_CREATED).organization_id
        stored = 0
        for size in sizes:
            seconds = seed(organization_id, stored, size, open_every)
            stored = size
            open_count = sum(1 for index in range(stored) if is_open(index, open_every))
            results.append(measure_size(counter, organization_id, stored, open_count, seconds))
        if stored > FLAT_OPEN * open_every:
            began = time.perf_counter()
            still_open = resolve_all_but(organization_id, stored, open_every, FLAT_OPEN)
            seconds = time.perf_counter() - began
            results.append(measure_size(counter, organization_id, stored, still_open, seconds, closed=False))
    print_results(results)
    print()
    print_timings(results)
    print_footer(results, open_every)
    print()
    print(f"Total run time {time.perf_counter() - started:.0f} s.")
    return 0


if __name__ == "__main__":
    main()
