"""Fixed-window counting in DynamoDB (moto), with explicit `now`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.errors import RateLimited
from chalicelib.ratelimit import service as ratelimit
from chalicelib.ratelimit.tables import RateLimitWindowRecord
from chalicelib.ratelimit.window import RateLimitDecision
from chalicelib.settings import get_settings
from tests.conftest import NOW, reconfigure

WINDOW_START = NOW  # 12:00:00 is a multiple of 60 s


def hit(identity: str = "key-1", *, now: datetime, limit: int = 3, category: str = "api_key") -> RateLimitDecision:
    return ratelimit.hit(category=category, identity=identity, limit=limit, window_seconds=60, now=now)


def test_hits_are_counted_within_a_window(aws_env: None) -> None:
    decisions = [hit(now=NOW + timedelta(seconds=s)) for s in (0, 10, 20, 59)]
    assert [d.hits for d in decisions] == [1, 2, 3, 4]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    reset = int(NOW.timestamp()) + 60
    assert {d.reset_at for d in decisions} == {reset}
    assert decisions[-1].retry_after == 1
    assert decisions[-1].headers()["Retry-After"] == "1"


def test_counter_resets_at_the_window_edge(aws_env: None) -> None:
    for _ in range(4):
        last = hit(now=NOW + timedelta(seconds=59, milliseconds=999))
    assert not last.allowed
    fresh = hit(now=NOW + timedelta(seconds=60))
    assert fresh.allowed
    assert fresh.hits == 1
    assert fresh.reset_at == int(NOW.timestamp()) + 120


def test_buckets_are_separate_per_identity_and_category(aws_env: None) -> None:
    for _ in range(3):
        hit("key-1", now=NOW)
    assert not hit("key-1", now=NOW).allowed
    assert hit("key-2", now=NOW).hits == 1
    assert hit("key-1", now=NOW, category="session").hits == 1


def test_window_item_expires_a_window_after_its_end(aws_env: None) -> None:
    hit(now=NOW + timedelta(seconds=5))
    hit(now=NOW + timedelta(seconds=50))
    record = RateLimitWindowRecord.get(f"api_key#key-1#{int(NOW.timestamp())}")
    assert record.hits == 2
    assert record.expires_at == datetime.fromtimestamp(NOW.timestamp() + 120, UTC)


def test_charge_raises_rate_limited_with_headers(aws_env: None) -> None:
    from chalicelib.ratelimit import buckets

    reconfigure(RATE_LIMIT_API_KEY="2")
    buckets.charge(category="api_key", identity="k", now=NOW, settings=get_settings())
    buckets.charge(category="api_key", identity="k", now=NOW, settings=get_settings())
    with pytest.raises(RateLimited) as caught:
        buckets.charge(category="api_key", identity="k", now=NOW + timedelta(seconds=15), settings=get_settings())
    assert caught.value.status == 429
    assert caught.value.headers["Retry-After"] == "45"
    assert caught.value.headers["X-RateLimit-Category"] == "api_key"
    assert caught.value.headers["X-RateLimit-Remaining"] == "0"


def test_a_bucket_says_what_its_429_says(aws_env: None) -> None:
    from chalicelib.ratelimit import buckets

    reconfigure(RATE_LIMIT_WEBHOOK="1")
    pings = buckets.Bucket("webhook", "heartbeat#hb_1", "More than the allowed pings per minute; retry later.")
    assert buckets.charge_bucket(pings, NOW, settings=get_settings()).remaining == 0
    with pytest.raises(RateLimited) as caught:
        buckets.charge_bucket(pings, NOW, settings=get_settings())
    assert (caught.value.message, caught.value.headers["X-RateLimit-Category"]) == (pings.refusal, "webhook")


def test_limits_per_category_come_from_settings(aws_env: None) -> None:
    from chalicelib.ratelimit import buckets

    reconfigure(RATE_LIMIT_SESSION="7", RATE_LIMIT_ANONYMOUS="5", RATE_LIMIT_WEBHOOK="9", RATE_LIMIT_API_KEY="11")
    assert buckets.charge(category="session", identity="u", now=NOW, settings=get_settings()).limit == 7
    assert buckets.charge(category="anonymous", identity="1.2.3.4", now=NOW, settings=get_settings()).limit == 5
    assert buckets.charge(category="webhook", identity="rk", now=NOW, settings=get_settings()).limit == 9
    assert buckets.charge(category="api_key", identity="k", now=NOW, settings=get_settings()).limit == 11


def test_a_model_imported_after_binding_is_bound_too(aws_env: None) -> None:
    """Regression: a domain's tables imported lazily, after the first bind_tables, used the bare short
    name and no region (the rate-limit table broke whenever a test process started with it)."""
    from pynamodb.attributes import UnicodeAttribute

    from chalicelib import aws
    from chalicelib.settings import get_settings
    from chalicelib.store.model import TocsinModel

    aws.bind_tables()

    @aws.register_model
    class LateRecord(TocsinModel):
        class Meta(TocsinModel.Meta):
            table_name = "late"

        late_id = UnicodeAttribute(hash_key=True)

    try:
        assert LateRecord.Meta.table_name == "tocsin-test-late"
        assert LateRecord.Meta.region == get_settings().aws_region  # type: ignore[attr-defined]
    finally:
        aws._models.remove(LateRecord)


def test_subscribing_callers_are_counted_by_ipv6_network_and_ipv4_address(aws_env: None) -> None:
    from chalicelib.ratelimit.buckets import charge

    reconfigure(RATE_LIMIT_STATUS_SUBSCRIBE="2")
    # Two addresses of one /64 spend one budget: the third request from it is refused.
    charge(category="status_subscribe", identity="2001:db8:7:1::10", now=NOW, settings=get_settings())
    charge(category="status_subscribe", identity="2001:db8:7:1:abcd::99", now=NOW, settings=get_settings())
    with pytest.raises(RateLimited):
        charge(category="status_subscribe", identity="2001:db8:7:1::ffff", now=NOW, settings=get_settings())
    assert (
        charge(category="status_subscribe", identity="2001:db8:7:2::10", now=NOW, settings=get_settings()).hits == 1
    )  # the next /64
    # IPv4 stays per address.
    charge(category="status_subscribe", identity="203.0.113.1", now=NOW, settings=get_settings())
    charge(category="status_subscribe", identity="203.0.113.1", now=NOW, settings=get_settings())
    assert charge(category="status_subscribe", identity="203.0.113.2", now=NOW, settings=get_settings()).hits == 1
    # Other buckets keep their identity as given.
    assert charge(category="anonymous", identity="2001:db8:7:1::10", now=NOW, settings=get_settings()).hits == 1
    assert charge(category="anonymous", identity="2001:db8:7:1::11", now=NOW, settings=get_settings()).hits == 1
