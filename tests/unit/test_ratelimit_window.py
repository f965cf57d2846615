"""Fixed-window arithmetic and the decision's headers: pure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.ratelimit.window import RateLimitDecision, window_for


@pytest.mark.parametrize(
    ("epoch", "size", "start"),
    [
        (0, 60, 0),
        (59.999, 60, 0),
        (60, 60, 60),
        (61, 60, 60),
        (1_795_348_800, 60, 1_795_348_800),
        (1_795_348_859.5, 60, 1_795_348_800),
        (1_795_348_860, 60, 1_795_348_860),
        (125, 1, 125),
        (3599, 3600, 0),
    ],
)
def test_window_boundaries(epoch: float, size: int, start: int) -> None:
    window = window_for(epoch, size)
    assert window.start == start
    assert window.reset_at == start + size


@given(st.floats(min_value=0, max_value=4e9, allow_nan=False), st.integers(min_value=1, max_value=86_400))
def test_every_moment_lies_inside_its_window(epoch: float, size: int) -> None:
    window = window_for(epoch, size)
    assert window.start <= epoch < window.reset_at
    assert window.start % size == 0


def decision(hits: int, *, limit: int = 3, reset_at: int = 1_000_060, now: float = 1_000_030.0) -> RateLimitDecision:
    return RateLimitDecision(category="api_key", limit=limit, hits=hits, reset_at=reset_at, now_epoch=now)


def test_allowed_up_to_and_including_the_limit() -> None:
    assert decision(1).allowed
    assert decision(3).allowed
    assert not decision(4).allowed


def test_remaining_never_negative() -> None:
    assert decision(1).remaining == 2
    assert decision(3).remaining == 0
    assert decision(10).remaining == 0


def test_retry_after_rounds_up_and_is_at_least_one_second() -> None:
    assert decision(4, now=1_000_030.0).retry_after == 30
    assert decision(4, now=1_000_030.2).retry_after == 30
    assert decision(4, now=1_000_059.9).retry_after == 1
    assert decision(4, now=1_000_060.0).retry_after == 1


def test_headers_when_allowed_have_no_retry_after() -> None:
    headers = decision(1).headers()
    assert headers == {
        "X-RateLimit-Category": "api_key",
        "X-RateLimit-Limit": "3",
        "X-RateLimit-Remaining": "2",
        "X-RateLimit-Reset": "1000060",
    }


def test_headers_when_refused_carry_retry_after() -> None:
    headers = decision(4).headers()
    assert headers["Retry-After"] == "30"
    assert headers["X-RateLimit-Remaining"] == "0"
    assert headers["X-RateLimit-Reset"] == "1000060"
