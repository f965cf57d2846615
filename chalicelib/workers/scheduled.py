"""The scheduled entry points (EventBridge every minute on AWS; the local worker loop every
LOCAL_SCHEDULE_SECONDS): each binds the tables, reads the clock and the settings once and hands them down."""

from __future__ import annotations

from typing import Any

from chalicelib import aws, clock
from chalicelib.settings import get_settings


def move_due_maintenance(_event: Any = None) -> dict[str, int]:
    """Start and complete the status pages' maintenance windows that are due."""
    from chalicelib.statuspage.scheduled_maintenance import run_scheduler

    aws.bind_tables()
    run = run_scheduler(now=clock.now(), settings=get_settings())
    return {"started": run.started, "completed": run.completed, "skipped": run.skipped}


def send_handoff_notices(_event: Any = None) -> dict[str, int]:
    """Tell the people going on and off call at the boundaries that are due."""
    from chalicelib.oncall.handoff_notices import HandoffNoticesFailed, send_due_notices

    aws.bind_tables()
    run = send_due_notices(now=clock.now())
    if run.failed:
        raise HandoffNoticesFailed(f"handoff notices failed for {run.failed} schedule(s): {run.as_dict()}")
    return run.as_dict()


def check_heartbeats(_event: Any = None) -> dict[str, int]:
    """Open one incident per outage for every overdue heartbeat."""
    from chalicelib.heartbeat.overdue import HeartbeatCheckFailed, check_overdue

    aws.bind_tables()
    run = check_overdue(now=clock.now(), settings=get_settings())
    if run.failed:
        raise HeartbeatCheckFailed(f"heartbeat check failed for {run.failed} heartbeat(s): {run.as_dict()}")
    return run.as_dict()


def check_coverage(_event: Any = None) -> dict[str, int]:
    """Tell owners, once per gap, of the schedules and policies that page nobody for a while ahead."""
    from chalicelib.paging.coverage_check import CoverageCheckFailed, check_due

    aws.bind_tables()
    run = check_due(now=clock.now())
    if run.failed:
        raise CoverageCheckFailed(f"coverage check failed for {run.failed} schedule(s) or policies: {run.as_dict()}")
    return run.as_dict()
