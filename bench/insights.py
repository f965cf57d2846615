"""What each insights query costs over a month and a year of history: time and DynamoDB requests.

    .venv/bin/python bench/insights.py [--incidents 100000] [--days 365] [--repeats 7] [--seed 30]

Runs in-process on moto. The history is made of the happenings the workers count (each incident
opened, most acknowledged and resolved at random offsets, some escalated; one or two pages of a
person each, by channel, urgency and hour; one to three alert events each with their outcome and
flapping alerts), added up with the same rules as the consumers (chalicelib/insights/rollups.py)
and written straight into the insights table with BatchWriteItem: what the consumers would have
written, without a transaction per happening. Eight people rotate weekly on one schedule with an
override a week, for the hours on call.

Then each query (the service functions behind the routes, and the /metrics text) runs `--repeats`
times over the last month and the last year: p50/p95 seconds and the DynamoDB requests, items and
read units each costs (counted at the client with botocore event hooks). The requests follow the
range and the values per hour, not the history: compare the month with the year, or run again
with fewer `--incidents` over the same days.

On moto the times are the emulator's: its Query walks every item of the table to find the
partition (moto/dynamodb/models/table.py), so they grow with the table, which DynamoDB's do not; a
100,000-incident year makes about a million items and minutes per query there. The requests,
items and read units are what DynamoDB would serve. `--incidents 10000` is a quicker run.

Prints figures only; never fails on them, always exits 0.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._support import DynamoCounter, configure_environment, moto_account, read_units, table  # noqa: E402

END = datetime(2026, 11, 1, tzinfo=UTC)
SERVICES = 12
TEAMS = 4
PEOPLE = 8
SOURCES = ("prometheus", "datadog", "cloudwatch", "sentry", "custom")
KEYS = 400
SEVERITIES = (("SEV1", 5), ("SEV2", 20), ("SEV3", 45), ("SEV4", 30))
CHANNELS = ("email", "slack", "sms", "voice")


def history(
    organization_id: str, made_services: list[str], incidents: int, days: int, seed: int
) -> tuple[list[Any], dict[str, Any]]:
    """The happenings of `incidents` incidents spread over `days` before END."""
    from chalicelib.insights import rollups
    from chalicelib.insights.rollups import AlertFacts, IncidentFacts

    rng = random.Random(seed)
    services = made_services
    teams = [f"team_{n}" for n in range(TEAMS)]
    people = [f"usr_{n}" for n in range(PEOPLE)]
    names = [name for name, _ in SEVERITIES]
    weights = [weight for _, weight in SEVERITIES]
    happenings = []
    start = END - timedelta(days=days)
    for number in range(incidents):
        opened = start + timedelta(seconds=rng.uniform(0, days * 86400))
        service = rng.choice(services)
        severity = rng.choices(names, weights)[0]
        urgency = "high" if severity in ("SEV1", "SEV2") else "low"
        facts = IncidentFacts(f"INC-{number}", opened, severity, urgency, (service,), teams[hash(service) % TEAMS])
        happenings.append(rollups.opened(organization_id, facts))
        person = rng.choice(people)
        for page in range(rng.choice((1, 1, 2))):
            at = opened + timedelta(seconds=30 + page * 300)
            channels = rng.sample(CHANNELS, rng.choice((1, 2)))
            happenings.append(
                rollups.paged(
                    organization_id,
                    delivery_id=f"d{number}-{page}",
                    person=person,
                    channels=channels,
                    urgency=urgency,
                    at=at,
                )
            )
        if rng.random() < 0.9:
            acked = opened + timedelta(seconds=rng.lognormvariate(5, 1))
            happenings.append(
                rollups.acknowledged(
                    organization_id, facts, acknowledged_at=acked, within_sla=rng.random() < 0.8, person=person
                )
            )
        if rng.random() < 0.95:
            resolved = opened + timedelta(seconds=rng.lognormvariate(8, 1.2))
            happenings.append(rollups.resolved(organization_id, facts, resolved_at=resolved, person=person))
        if rng.random() < 0.1:
            happenings.append(rollups.escalated(organization_id, facts))
        for event in range(rng.choice((1, 1, 2, 3))):
            outcome = "created" if event == 0 else rng.choice(("deduplicated", "grouped", "suppressed", "dropped"))
            suppressed_by = "maintenance" if rng.random() < 0.3 else "event_rule"
            key = f"key-{rng.randrange(KEYS)}"
            alert = AlertFacts(f"e{number}-{event}", outcome, opened, rng.choice(SOURCES), service, key, suppressed_by)
            happenings.append(rollups.alert_event(organization_id, alert))
            if rng.random() < 0.3:
                happenings.append(
                    rollups.alert_auto_resolved(
                        organization_id, alert, opened_at=opened - timedelta(seconds=rng.lognormvariate(5, 1.5))
                    )
                )
    return happenings, {"services": services, "people": people}


def write(organization_id: str, happenings: list[Any]) -> int:
    """Add the happenings up per item and write the items (what the consumers would have written)."""
    from chalicelib.insights.tables import RollupRecord
    from chalicelib.insights.writer import item_of

    items: dict[tuple[str, str], dict[str, int]] = {}
    for happening in happenings:
        for addition in happening.additions:
            item = item_of(organization_id, addition)
            counters = items.setdefault((item.partition, item.slot), {})
            for name, amount in addition.counters.items():
                counters[name] = counters.get(name, 0) + amount
    with RollupRecord.batch_write() as batch:
        for (partition, slot), counters in items.items():
            record = RollupRecord(partition, slot)
            for name, amount in counters.items():
                setattr(record, name, amount)
            batch.save(record)
    return len(items)


def people_and_schedule(organization_id: str, days: int) -> None:
    from chalicelib.directory.users import create_user
    from chalicelib.oncall.schedule import Layer
    from chalicelib.oncall.service import add_override, create_schedule, new_layer_id

    users = [
        create_user(
            organization_id=organization_id,
            name=f"Person {n}",
            email=f"p{n}@bench.test",
            role="responder",
            now=END - timedelta(days=days + 1),
        )
        for n in range(PEOPLE)
    ]
    layer = Layer(
        new_layer_id(), "Weekly", tuple(user.user_id for user in users), "weekly", "09:00", END - timedelta(days=days)
    )
    stored = create_schedule(
        organization_id=organization_id,
        name="Primary",
        time_zone="Europe/Paris",
        layers=[layer],
        now=END - timedelta(days=days),
    )
    for week in range(4):  # overrides older than 30 days are pruned by the schedule's writes
        start = END - timedelta(days=7 * week + 3)
        add_override(
            organization_id=organization_id,
            schedule_id=stored.schedule_id,
            user_id=users[week].user_id,
            start=start,
            end=start + timedelta(hours=12),
            now=END,
        )


def queries(organization_id: str, services: list[str]) -> dict[str, Callable[[datetime, datetime], Any]]:
    from chalicelib.insights import openmetrics, reading, responders, service
    from chalicelib.insights.models import AlertInsightsQuery, IncidentInsightsQuery, ResponderInsightsQuery

    def incidents(**extra: Any) -> Callable[[datetime, datetime], Any]:
        def run(since: datetime, until: datetime) -> Any:
            query = IncidentInsightsQuery.model_validate({"since": since, "until": until, **extra})
            return service.incident_insights(organization_id=organization_id, query=query, now=END)

        return run

    def people(since: datetime, until: datetime) -> Any:
        query = ResponderInsightsQuery.model_validate({"since": since, "until": until})
        return responders.responder_insights(organization_id=organization_id, query=query, now=END)

    def alerts(since: datetime, until: datetime) -> Any:
        query = AlertInsightsQuery.model_validate({"since": since, "until": until})
        return service.alert_insights(organization_id=organization_id, query=query, now=END)

    def metrics(since: datetime, until: datetime) -> Any:
        return openmetrics.render(reading.totals(organization_id))

    return {
        "incidents, by day": incidents(),
        "incidents, by week, per service": incidents(interval="week", group_by="service"),
        "incidents, SEV1-2 of 2 services, per severity": incidents(
            interval="month", group_by="severity", severities=["SEV1", "SEV2"], service_ids=services[:2]
        ),
        "responders": people,
        "alerts (top 10s)": alerts,
        "/metrics (all time)": metrics,
    }


def measure(
    counter: DynamoCounter, run: Callable[[datetime, datetime], Any], since: datetime, until: datetime, repeats: int
) -> list[str]:
    seconds = []
    for _ in range(repeats):
        began = time.perf_counter()
        with counter.measure() as measurement:
            run(since, until)
        seconds.append(time.perf_counter() - began)
    calls = measurement.calls
    items = sum(call.count or 0 for call in calls)
    units = sum(read_units(call.bytes_read) for call in calls)
    by_kind: dict[str, int] = {}
    for call in calls:
        by_kind[call.operation] = by_kind.get(call.operation, 0) + 1
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    kinds = " ".join(f"{name}x{count}" for name, count in sorted(by_kind.items()))
    return [
        f"{statistics.median(seconds) * 1000:.0f}",
        f"{p95 * 1000:.0f}",
        str(len(calls)),
        kinds,
        str(items),
        f"{units:.0f}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--incidents", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--seed", type=int, default=30)
    args = parser.parse_args(argv)
    configure_environment()
    from chalicelib.catalog.service import create_service
    from chalicelib.organization.service import create_organization

    started = time.perf_counter()
    with moto_account():
        counter = DynamoCounter()
        counter.install_on_app_clients()
        organization_id = create_organization(
            name="Insights Bench", now=END - timedelta(days=args.days + 2), time_zone="Europe/Paris"
        ).organization_id
        people_and_schedule(organization_id, args.days)
        services = [
            create_service(
                organization_id=organization_id, name=f"Service {n}", now=END - timedelta(days=args.days + 1)
            )
            for n in range(SERVICES)
        ]
        began = time.perf_counter()
        keys = [made.service_key for made in services]
        happenings, made = history(organization_id, keys, args.incidents, args.days, args.seed)
        written = write(organization_id, happenings)
        took = time.perf_counter() - began
        print(
            f"Insights: {args.incidents:,} incidents over {args.days} days ({len(happenings):,} happenings) "
            f"-> {written:,} rollup items, written in {took:.0f} s (in-process moto)."
        )
        ranges = {"month": (END - timedelta(days=30), END), "year": (END - timedelta(days=min(args.days, 365)), END)}
        rows = []
        for name, run in queries(organization_id, made["services"]).items():
            for label, (since, until) in ranges.items():
                rows.append([name, label, *measure(counter, run, since, until, args.repeats)])
        headers = ["query", "range", "p50 ms", "p95 ms", "requests", "by operation", "items", "read units"]
        print(table(headers, rows, right=frozenset({2, 3, 4, 6, 7})))
    print(
        "Read units: eventually consistent, 4 KB each, from the sizes of the items returned. Times are moto's "
        f"(its Query walks the whole table). Total run time {time.perf_counter() - started:.0f} s."
    )
    return 0


if __name__ == "__main__":
    main()
