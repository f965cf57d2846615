"""The one place that reads the wall clock. Tests freeze it with `frozen`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

_frozen_at: datetime | None = None


def now() -> datetime:
    if _frozen_at is not None:
        return _frozen_at
    return datetime.now(UTC)


def freeze(moment: datetime | None) -> None:
    global _frozen_at
    _frozen_at = moment


@contextlib.contextmanager
def frozen(moment: datetime) -> Iterator[None]:
    previous = _frozen_at
    freeze(moment)
    try:
        yield
    finally:
        freeze(previous)


def scaled(duration: timedelta, *, scale: float) -> timedelta:
    """A wait the workers schedule (an escalation level's delay, an SLA target, a webhook retry's
    delay) divided by `scale`, the TIME_SCALE setting's effective value (Settings.effective_time_scale):
    always 1 outside the local and test stages, where a time-driven end-to-end test raises it to
    wait seconds instead of minutes."""
    return duration if scale == 1 else duration / scale


def isoformat(moment: datetime) -> str:
    """RFC 3339 in UTC with millisecond precision and a Z suffix."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
