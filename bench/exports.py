"""Exporting a year of incidents: rows per second and peak memory, page by page.

    .venv/bin/python bench/exports.py [--incidents 100000] [--limit 5000] [--format csv]

Runs in-process on moto. `--incidents` incidents are written over one year (batch_write, shaped
as chalicelib/incident/service.py writes them: bench/list_scaling.py's records), then the year
is exported as GET /api/v1/exports/incidents does it (chalicelib.exports.service.export_page,
then the CSV or NDJSON text), following the cursor until the last page. Printed: pages, rows,
seconds, rows per second (all of it, and outside the DynamoDB calls: Tocsin's own work of
reading, converting and rendering rows), the DynamoDB Queries made, and the peak memory traced (tracemalloc)
while exporting (Tocsin's process only: moto runs in a process of its own unless `--in-process`),
with the largest page's text for comparison. Memory should stay flat as the history grows: run
it with two sizes. moto answers each index Query by reading the whole partition, so wall time
here grows with the history where DynamoDB's would not: "rows/s outside moto" is the figure
that says what Tocsin itself costs.

Prints figures only; never fails on them, always exits 0.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._support import DynamoCounter, configure_environment, moto_account, table  # noqa: E402
from chalicelib.settings import get_settings  # noqa: E402

ORGANIZATION = "org_bench_exports"
YEAR = timedelta(days=365)
TRACE = True


@contextmanager
def emulator_process() -> Iterator[None]:
    """moto in a process of its own (the local stack's emulator, provisioned as it provisions), so
    what tracemalloc sees here is Tocsin's memory alone."""
    from chalicelib import aws
    from chalicelib.local.emulator import Emulator, point_environment_at
    from chalicelib.local.provision import provision
    from chalicelib.settings import reset_settings

    emulator = Emulator()
    emulator.start()
    try:
        point_environment_at(emulator.endpoint_url)
        reset_settings()
        aws.reset()
        provision()
        yield
    finally:
        emulator.stop()


def seed(count: int) -> float:
    """`count` incidents spread evenly over a year; seconds taken."""
    import random

    from bench.list_scaling import FIRST_CREATED, make_record
    from chalicelib.incident.service import created_sort_key
    from chalicelib.incident.tables import IncidentRecord

    spacing = YEAR / max(count, 1)
    began = time.perf_counter()
    with IncidentRecord.batch_write() as batch:
        for index in range(count):
            record = make_record(ORGANIZATION, index, 20, random.Random(index), still_open=index % 20 == 19)
            record.created_at = FIRST_CREATED + index * spacing
            record.created_sort = created_sort_key(record.created_at, record.incident_number)
            batch.save(record)
    return time.perf_counter() - began


class StoreClock:
    """Seconds spent inside DynamoDB calls (the emulator, here), measured at the client."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def install(self) -> None:
        from chalicelib import aws

        events = aws._dynamodb_client().meta.events
        events.register("before-call.dynamodb", self._before)
        events.register("after-call.dynamodb", self._after)

    def _before(self, **_: object) -> None:
        self._started = time.perf_counter()

    def _after(self, **_: object) -> None:
        self.seconds += time.perf_counter() - self._started


def export_year(limit: int, export_format: str, counter: DynamoCounter) -> list[str]:
    from bench.list_scaling import FIRST_CREATED
    from chalicelib.exports.columns import COLUMNS
    from chalicelib.exports.formats import render
    from chalicelib.exports.requests import checked_request
    from chalicelib.exports.service import export_page

    request = checked_request(
        organization_id=ORGANIZATION,
        kind="incidents",
        since=FIRST_CREATED,
        until=FIRST_CREATED + YEAR + timedelta(days=1),
        filters={},
    )
    cursor: str | None = None
    pages = rows = queries = largest = 0
    store = StoreClock()
    store.install()
    if TRACE:
        tracemalloc.start()
    began = time.perf_counter()
    while True:
        with counter.measure() as measurement:
            page = export_page(request, cursor=cursor, limit=limit, settings=get_settings())
        text = render("csv" if export_format == "csv" else "ndjson", COLUMNS["incidents"], page.rows)
        queries += sum(1 for call in measurement.calls if call.operation == "Query")
        largest = max(largest, len(text.encode()))
        pages, rows = pages + 1, rows + len(page.rows)
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    seconds = time.perf_counter() - began
    _, peak = tracemalloc.get_traced_memory() if TRACE else (0, 0)
    tracemalloc.stop()
    own = max(seconds - store.seconds, 1e-9)
    return [
        f"{pages:,}",
        f"{rows:,}",
        f"{seconds:.1f}",
        f"{rows / seconds:,.0f}",
        f"{store.seconds:.1f}",
        f"{rows / own:,.0f}",
        f"{queries:,}",
        f"{peak / 2**20:.1f} MiB",
        f"{largest / 2**20:.2f} MiB",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--incidents", type=int, default=100_000)
    parser.add_argument("--limit", type=int, default=5000, help="rows per page, as the API's `limit`")
    parser.add_argument("--format", choices=("csv", "ndjson"), default="csv")
    parser.add_argument("--no-trace", action="store_true", help="skip tracemalloc (it slows Python down)")
    parser.add_argument("--in-process", action="store_true", help="moto in this process (its memory is traced too)")
    arguments = parser.parse_args()
    global TRACE
    TRACE = not arguments.no_trace
    configure_environment()
    counter = DynamoCounter()
    account: AbstractContextManager[None] = moto_account() if arguments.in_process else emulator_process()
    with account:
        counter.install_on_app_clients()
        seeded = seed(arguments.incidents)
        where = "in process" if arguments.in_process else "its own process"
        print(f"seeded {arguments.incidents:,} incidents over a year in {seeded:.1f} s (moto, {where})")
        row = export_year(arguments.limit, arguments.format, counter)
    headers = [
        "pages",
        "rows",
        "seconds",
        "rows/s",
        "in moto (s)",
        "rows/s outside moto",
        "Queries",
        "peak traced",
        "largest page",
    ]
    print(table(headers, [row], right=frozenset(range(len(headers)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
