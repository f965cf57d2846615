"""Re-run a read-modify-write when another writer got there first.

One helper for every optimistic write: the operation reads, changes and writes conditionally,
and raises RetryableConflict when its condition (a version, an expected state) was false. The
helper runs it again after a short random wait that doubles with each attempt (so racing writers
spread out), and after the last attempt answers errors.Conflict (409): the caller may retry.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from chalicelib.errors import Conflict

T = TypeVar("T")

DEFAULT_ATTEMPTS = 25
BASE_DELAY_SECONDS = 0.005
MAX_DOUBLINGS = 6  # the longest wait is at most BASE_DELAY_SECONDS * 2**6


class RetryableConflict(Exception):
    """Another writer got there first; re-read and try again."""


def backoff_seconds(
    attempt: int, *, base: float = BASE_DELAY_SECONDS, draw: Callable[[float, float], float] = random.uniform
) -> float:
    """The wait after failed attempt number `attempt` (0-based): uniform in [0, base * 2**attempt], capped."""
    return draw(0.0, base * 2 ** min(attempt, MAX_DOUBLINGS))


def retry_on_conflict(
    operation: Callable[[], T],
    *,
    what: str,
    attempts: int = DEFAULT_ATTEMPTS,
    base_delay: float = BASE_DELAY_SECONDS,
    message: str | None = None,
) -> T:
    """Run `operation`, re-running it while it raises RetryableConflict, at most `attempts` times.

    Raises Conflict when every attempt lost, with `message` or one naming `what`.
    """
    for attempt in range(attempts):
        try:
            return operation()
        except RetryableConflict:
            if attempt + 1 < attempts:
                time.sleep(backoff_seconds(attempt, base=base_delay))
    raise Conflict(message or f"The {what} was changed concurrently too many times; retry the request.")
