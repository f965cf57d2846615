"""The scheduled entry point (every minute on AWS; every LOCAL_SCHEDULE_SECONDS locally)."""

from __future__ import annotations

from typing import Any

from chalicelib import clock
from chalicelib.statuspage.maintenance import run_scheduler


def move_due_maintenance(_event: Any = None) -> dict[str, int]:
    run = run_scheduler(now=clock.now())
    return {"started": run.started, "completed": run.completed, "skipped": run.skipped}
