"""A bounded histogram of durations in seconds: fixed, roughly log-spaced bucket bounds.

A rollup item keeps one counter per non-empty bucket, so p50/p90 come out of the rollups (never
the records) and an item's size is bounded whatever the traffic. The bounds are round numbers
(a minute, five minutes, an hour...) so a duration on a bound is reported exactly, and the
OpenMetrics histogram (`PROMETHEUS_BOUNDS`) is a coarser subset of them.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping

# Upper bounds (inclusive, "le") in seconds; a last bucket holds everything above 30 days.
BOUNDS: tuple[int, ...] = (
    1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 45, 50, 60, 75, 90, 105, 120, 150, 180, 210,
    240, 300, 360, 420, 480, 540, 600, 720, 900, 1080, 1200, 1500, 1800, 2100, 2400, 2700, 3600,
    4500, 5400, 7200, 9000, 10800, 14400, 18000, 21600, 28800, 36000, 43200, 57600, 72000, 86400,
    129600, 172800, 259200, 345600, 432000, 604800, 864000, 1209600, 1814400, 2592000,
)  # fmt: skip
BUCKETS = len(BOUNDS) + 1  # the last one is open-ended
# What /metrics exposes as `le` bounds: each one of BOUNDS, so the sums are exact.
PROMETHEUS_BOUNDS: tuple[int, ...] = (30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400, 604800)

Histogram = dict[int, int]  # bucket index -> count (absent: 0)


def bucket_of(seconds: float) -> int:
    """The index of the bucket a duration falls in (negative durations count as 0)."""
    return bisect.bisect_left(BOUNDS, max(0.0, seconds))


def merged(histograms: Iterable[Mapping[int, int]]) -> Histogram:
    total: Histogram = {}
    for histogram in histograms:
        for index, count in histogram.items():
            if count:
                total[index] = total.get(index, 0) + count
    return total


def percentile(histogram: Mapping[int, int], fraction: float) -> float | None:
    """The nearest-rank percentile (`fraction` in (0, 1]), interpolated inside its bucket.

    The rank r = ceil(fraction * n) falls in some bucket (lower, upper]; the estimate moves from
    lower to upper as r moves through that bucket's counts, so the last sample of a bucket reads as
    its upper bound (a duration of exactly 60 s reads 60). None when the histogram is empty. The
    open-ended last bucket reads as its lower bound (more than 30 days).
    """
    total = sum(count for count in histogram.values() if count > 0)
    if total == 0:
        return None
    rank = max(1, _ceil(fraction * total))
    seen = 0
    for index in sorted(histogram):
        count = histogram[index]
        if count <= 0:
            continue
        if seen + count >= rank:
            lower = float(BOUNDS[index - 1]) if index > 0 else 0.0
            if index >= len(BOUNDS):
                return lower
            upper = float(BOUNDS[index])
            return lower + (upper - lower) * (rank - seen) / count
        seen += count
    return None  # unreachable: the ranks add up to the total


def cumulative(histogram: Mapping[int, int], bounds: Iterable[int]) -> list[tuple[int, int]]:
    """(bound, how many durations were <= bound) for each bound (each one of BOUNDS)."""
    answer: list[tuple[int, int]] = []
    for bound in bounds:
        last = BOUNDS.index(bound)
        answer.append((bound, sum(count for index, count in histogram.items() if index <= last)))
    return answer


def _ceil(value: float) -> int:
    whole = int(value)
    return whole if whole >= value - 1e-9 else whole + 1
