"""A heartbeat's outages as alerts: the origin and the alerts it raises through the one alert
pipeline (chalicelib.integration.ingest), so maintenance windows and the organization's event
rules apply to heartbeats as to any monitoring tool.

Outage n's alert has the dedup key `outage-<n>` (scoped to the heartbeat): a repeated trigger for
the same outage (overlapping checks, a retry after a crash) counts on the same incident, and the
resolve for it finds that incident whenever it runs. Resolves are recorded first in
`unresolved_outages` and removed once done, so one that failed is retried by the next ping.
"""

from __future__ import annotations

import logging
from datetime import datetime

from chalicelib import clock
from chalicelib.heartbeat.rules import Beat, outage_dedup_key
from chalicelib.heartbeat.tables import HeartbeatRecord
from chalicelib.integration.ingest import IngestResult, ingest
from chalicelib.integration.normalized import NormalizedAlert
from chalicelib.integration.origin import AlertOrigin
from chalicelib.settings import Settings
from chalicelib.store import update_unversioned_if

logger = logging.getLogger("tocsin.heartbeat")

INTEGRATION_TYPE = "heartbeat"


def origin_of(record: HeartbeatRecord) -> AlertOrigin:
    return AlertOrigin(
        organization_id=record.organization_id,
        origin_id=record.heartbeat_id,
        integration_type=INTEGRATION_TYPE,
        name=record.name,
        default_service_key=record.service_key,
        integration_id=None,
    )


def _moment(value: datetime | None) -> str:
    return clock.isoformat(value) if value is not None else "never"


def missed_alert(record: HeartbeatRecord, beat: Beat, outage: int) -> NormalizedAlert:
    expected = beat.next_due_at
    last = _moment(beat.last_ping_at)
    return NormalizedAlert(
        source="heartbeat",
        action="trigger",
        title=f"Heartbeat {record.name} missed its ping (expected by {_moment(expected)})",
        summary=f"Heartbeat {record.name} missed its ping",
        description=(
            f"No ping since {last}. The heartbeat expects one every {beat.interval_seconds} s "
            f"with {beat.grace_seconds} s of grace; the next ping resolves this incident."
        ),
        dedup_key=outage_dedup_key(outage),
        metadata={
            "heartbeat_id": record.heartbeat_id,
            "heartbeat_name": record.name,
            "outage": str(outage),
            "expected_at": _moment(expected),
            "last_ping_at": last,
            "interval_seconds": str(beat.interval_seconds),
            "grace_seconds": str(beat.grace_seconds),
        },
    )


def recovered_alert(record: HeartbeatRecord, outage: int) -> NormalizedAlert:
    return NormalizedAlert(
        source="heartbeat",
        action="resolve",
        summary=f"Heartbeat {record.name} pinged again",
        dedup_key=outage_dedup_key(outage),
        metadata={"heartbeat_id": record.heartbeat_id, "outage": str(outage)},
    )


def open_outage(record: HeartbeatRecord, beat: Beat, outage: int, now: datetime, *, settings: Settings) -> IngestResult:
    return ingest(origin_of(record), missed_alert(record, beat, outage), now=now, settings=settings)


def mark_unresolved(record: HeartbeatRecord, outage: int) -> bool:
    """Remember that outage `outage` must be resolved (before resolving it); False when deleted."""
    return update_unversioned_if(
        record, [HeartbeatRecord.unresolved_outages.add({outage})], HeartbeatRecord.heartbeat_id.exists()
    )


def resolve_pending(record: HeartbeatRecord, now: datetime, *, settings: Settings) -> list[int]:
    """Resolve every outage the record lists as unresolved, forgetting each once done; the
    outages resolved. A failure leaves the rest listed for the next ping."""
    done: list[int] = []
    for outage in sorted(int(n) for n in record.unresolved_outages or ()):
        try:
            ingest(origin_of(record), recovered_alert(record, outage), now=now, settings=settings)
        except Exception:  # the ping is recorded whatever happens here; the next ping retries
            logger.exception("heartbeat outage resolve failed", extra={"heartbeat_id": record.heartbeat_id})
            break
        update_unversioned_if(
            record, [HeartbeatRecord.unresolved_outages.delete({outage})], HeartbeatRecord.heartbeat_id.exists()
        )
        done.append(outage)
    return done
