"""Recompute the incident figures of a range from the incident records (after a change of
definition, or to fill the rollups of history from before they existed).

Reads: the incidents opened in [since, until), by two Queries of the incident list index (the
open and the closed partition, each on its created_sort range): never a Scan. Writes: every
hourly item of the range gets the incident counters it should hold (SET, or REMOVE when none);
the counters a record cannot tell (pages, alert events, dropped events) are left as they are.
All-time totals are recomputed only by a rebuild of the whole history (no `since`).

Markers stay: a message redelivered later is still counted at most once. Run it when the
workers are quiet for the organization, or run it again: it is idempotent.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from pynamodb.expressions.update import Action

from chalicelib import clock
from chalicelib.incident.tables import IncidentRecord, list_partition
from chalicelib.insights import incident_happenings, rollups
from chalicelib.insights.tables import RollupRecord
from chalicelib.insights.writer import item_of

# The counters the incident records decide (the rest come from messages only).
INCIDENT_COUNTERS: frozenset[str] = frozenset(
    {
        rollups.OPENED,
        rollups.ACKED,
        rollups.ACK_SECONDS,
        rollups.ACK_IN_SLA,
        rollups.RESOLVED,
        rollups.RESOLVE_SECONDS,
        rollups.ESCALATED,
        rollups.PERSON_ACKED,
        rollups.PERSON_RESOLVED,
    }
    | {name for name in rollups.counter_names() if name.startswith((rollups.ACK_HISTOGRAM, rollups.RESOLVE_HISTOGRAM))}
)
BEGINNING = datetime(2000, 1, 1, tzinfo=UTC)

Key = tuple[str, str]


def incidents_opened(organization_id: str, since: datetime, until: datetime) -> Iterator[IncidentRecord]:
    low, high = clock.isoformat(since), clock.isoformat(until)
    for is_open in (True, False):
        yield from IncidentRecord.by_list.query(
            list_partition(organization_id, is_open), IncidentRecord.created_sort.between(low, high)
        )


def expected_items(organization_id: str, since: datetime, until: datetime) -> dict[Key, dict[str, int]]:
    """What every item should hold, from the records alone."""
    items: dict[Key, dict[str, int]] = {}
    for incident in incidents_opened(organization_id, since, until):
        if not since <= incident.created_at < until:
            continue
        for happening in incident_happenings.all_of(incident):
            for addition in happening.additions:
                item = item_of(organization_id, addition)
                counters = items.setdefault((item.partition, item.slot), {})
                for name, amount in addition.counters.items():
                    counters[name] = counters.get(name, 0) + amount
    return items


def months(since: datetime, until: datetime) -> list[datetime]:
    first = since.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    found = []
    while first < until:
        found.append(first)
        first = (first + timedelta(days=32)).replace(day=1)
    return found


def stored_items(organization_id: str, since: datetime, until: datetime) -> dict[Key, RollupRecord]:
    """The hourly items of the range, for the dimensions incident figures go to."""
    low, high = rollups.hour_label(since), rollups.hour_label(until - timedelta(microseconds=1)) + "#\uffff"
    found: dict[Key, RollupRecord] = {}
    for month in months(since, until):
        for kind in (*rollups.INCIDENT_KINDS, rollups.PERSON):
            partition = rollups.partition(organization_id, kind, month)
            for record in RollupRecord.query(partition, RollupRecord.slot.between(low, high)):
                found[(record.partition, record.slot)] = record
    return found


def rebuild(organization_id: str, *, since: datetime | None, until: datetime) -> dict[str, Any]:
    whole = since is None
    start = BEGINNING if since is None else rollups.hour_of(since)
    expected = expected_items(organization_id, start, until)
    stored = stored_items(organization_id, start, until)
    if whole:
        for record in RollupRecord.query(rollups.total_partition(organization_id)):
            if record.slot.startswith(rollups.TOTAL_SERVICE_SEVERITY + "#"):
                stored[(record.partition, record.slot)] = record
    written = 0
    for key in sorted(set(expected) | set(stored)):
        partition, slot = key
        if partition == rollups.total_partition(organization_id) and not whole:
            continue
        wanted = {name: value for name, value in expected.get(key, {}).items() if value}
        record = stored.get(key) or RollupRecord(partition, slot)
        has = {name: value for name, value in record.counters().items() if name in INCIDENT_COUNTERS}
        if has == wanted:
            continue
        actions: list[Action] = [RollupRecord.counter(name).set(value) for name, value in wanted.items()]
        actions += [RollupRecord.counter(name).remove() for name in has if name not in wanted]
        RollupRecord(partition, slot).update(actions=actions)
        written += 1
    return {"organization_id": organization_id, "items_written": written, "items_expected": len(expected)}


def cli_command(args: argparse.Namespace) -> dict[str, Any]:
    since = _utc(args.since) if args.since else None
    until = _utc(args.until) if args.until else clock.now()
    return rebuild(args.org, since=since, until=until)


def _utc(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def add_commands(commands: Any) -> None:
    """`insights-rebuild --org ... [--since DATE] [--until DATE]` on the admin CLI."""
    command = commands.add_parser(
        "insights-rebuild", help="recompute the insights rollups' incident figures from the incident records"
    )
    command.add_argument("--org", required=True, help="organization id")
    command.add_argument("--since", help="first UTC day or hour (YYYY-MM-DD[THH]); default: all history")
    command.add_argument("--until", help="end (exclusive), UTC; default: now")
    command.set_defaults(handler=cli_command)
