"""The overdue step: every minute (`check-heartbeats` in app.py; locally the worker loop's
ScheduleWorker) one Query on the sparse due index finds the heartbeats whose ping is overdue
(never a Scan). For each:

1. Read it (a consistent GetItem); skip it unless the rules say it is still overdue.
2. Raise outage n = outages + 1 through the alert pipeline with dedup key `outage-<n>`.
3. Move it to down with that incident, conditional on the state read; this also takes it out of
   the due index.

Two overlapping runs, or a run retried after dying between 2 and 3, raise the same outage n: the
dedup key makes the second trigger count on the first's incident, and only one write of step 3
lands (the other finds `outages` already at n). When step 3 loses to a ping (or a pause, or a
delete) that came after step 1, the heartbeat is no longer overdue: the incident step 2 opened
is resolved at once, so no incident is left open for a heartbeat that is up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from chalicelib.errors import AppError
from chalicelib.heartbeat import outages, repository, rules
from chalicelib.heartbeat.tables import DUE_SHARD, HeartbeatRecord
from chalicelib.settings import Settings
from chalicelib.store import update_unversioned_if

logger = logging.getLogger("tocsin.heartbeat")

# Writes of step 3 one heartbeat may retry when an edit (a rename) moved it meanwhile.
WRITE_ATTEMPTS = 5


@dataclass
class OverdueRun:
    opened: int = 0  # outages this run recorded (their incidents opened, or suppressed)
    lost: int = 0  # another run recorded the outage first, or a ping/pause/delete came first
    failed: int = 0  # heartbeats that failed (retried by the next run)

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


def check_overdue(*, now: datetime, settings: Settings) -> OverdueRun:
    run = OverdueRun()
    for key in HeartbeatRecord.by_due_time.query(DUE_SHARD, HeartbeatRecord.due_at <= now):
        try:
            _fire(key.heartbeat_id, now, run, settings=settings)
        except Exception:  # one heartbeat's failure holds up no other; the next run tries it again
            logger.exception("heartbeat check failed", extra={"heartbeat_id": key.heartbeat_id})
            run.failed += 1
    if run.opened or run.failed:
        logger.info("heartbeat check", extra=run.as_dict())
    return run


def _fire(heartbeat_id: str, now: datetime, run: OverdueRun, *, settings: Settings) -> None:
    record = repository.read(heartbeat_id)
    if record is None:
        return  # deleted since the index was read
    read = repository.beat_of(record)
    if not rules.is_overdue(read, now):
        return
    outage = read.outages + 1
    try:
        incident = outages.open_outage(record, read, outage, now, settings=settings).incident
    except AppError as refused:
        if refused.status >= 500:
            raise
        # The pipeline refused the alert (its service was deleted or deactivated): the outage is
        # still recorded, without an incident, rather than tried again every minute forever.
        logger.warning("heartbeat alert refused: %s", refused.message, extra={"heartbeat_id": heartbeat_id})
        incident = None
    number = incident.incident_number if incident is not None else None
    down = rules.went_down(read, now, number)
    for _ in range(WRITE_ATTEMPTS):
        if update_unversioned_if(record, repository.state_actions(down), repository.unchanged(read)):
            run.opened += 1
            return
        latest = repository.read(heartbeat_id)
        if (
            latest is None
            or int(latest.outages or 0) >= outage
            or not rules.is_overdue(repository.beat_of(latest), now)
        ):
            run.lost += 1
            if not _recorded_as_ours(latest, outage, number):
                # A ping, a pause or a delete came after step 1 (or the outage this run raised
                # again was already over): end the alert this run raised.
                _end(latest if latest is not None else record, outage, now, settings=settings)
            return
        # Edited (renamed, new grace) but still overdue: write again on what is stored now.
        record, read = latest, repository.beat_of(latest)
        down = rules.went_down(read, now, number)
    raise AppError(f"heartbeat {heartbeat_id} kept changing; the next run tries again")


def _recorded_as_ours(latest: HeartbeatRecord | None, outage: int, incident_number: str | None) -> bool:
    """Another run recorded this very outage, down on the incident this run's alert counted on."""
    return (
        latest is not None
        and latest.state == "down"
        and int(latest.outages or 0) == outage
        and latest.incident_number == incident_number
    )


def _end(record: HeartbeatRecord, outage: int, now: datetime, *, settings: Settings) -> None:
    if not outages.mark_unresolved(record, outage):
        record.unresolved_outages = {outage}  # deleted: resolve it without keeping a list
    outages.resolve_pending(record, now, settings=settings)


class HeartbeatCheckFailed(Exception):
    """Raised after a run in which some heartbeat failed, so the function's error alarm sees it."""
