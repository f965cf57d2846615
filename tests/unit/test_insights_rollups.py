"""Insights rules as tables: histogram buckets and percentiles, what each happening adds where."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.insights import histogram, rollups
from chalicelib.insights.rollups import IncidentFacts, Target

OPENED_AT = datetime(2026, 3, 2, 9, 41, 7, tzinfo=UTC)
FACTS = IncidentFacts("INC-2026-0001", OPENED_AT, "SEV2", "high", ("svc_a", "svc_b"), "team_1")


@pytest.mark.parametrize(
    ("seconds", "index"),
    [(0, 0), (1, 0), (1.5, 1), (2, 1), (59, 16), (60, 16), (61, 17), (2592000, 64), (2592001, 65), (-5, 0)],
)
def test_bucket_of_puts_a_duration_in_the_first_bucket_whose_bound_holds_it(seconds: float, index: int) -> None:
    assert histogram.bucket_of(seconds) == index
    if index < len(histogram.BOUNDS):
        assert max(0, seconds) <= histogram.BOUNDS[index]


def test_bounds_are_increasing_and_hold_the_prometheus_bounds() -> None:
    assert list(histogram.BOUNDS) == sorted(set(histogram.BOUNDS))
    assert set(histogram.PROMETHEUS_BOUNDS) <= set(histogram.BOUNDS)
    assert len(histogram.BOUNDS) + 1 == histogram.BUCKETS


def _of(*durations: float) -> histogram.Histogram:
    found: histogram.Histogram = {}
    for seconds in durations:
        index = histogram.bucket_of(seconds)
        found[index] = found.get(index, 0) + 1
    return found


@pytest.mark.parametrize(
    ("durations", "fraction", "expected"),
    [
        ((60, 120, 300), 0.5, 120.0),  # on bounds: exact
        ((60, 120, 300), 0.9, 300.0),
        ((60,), 0.5, 60.0),
        ((600, 600, 600, 600), 0.5, 570.0),  # ranks spread over the bucket (540, 600]
        ((300, 600, 900, 1200), 0.5, 600.0),
        ((3600,) * 9 + (7200,), 0.9, 3600.0),
        ((3600,) * 9 + (7200,), 0.91, 7200.0),
        ((10**8,), 0.5, 2592000.0),  # the open-ended bucket reads as its lower bound
    ],
)
def test_percentile_is_the_nearest_rank_read_from_the_histogram(
    durations: tuple[float, ...], fraction: float, expected: float
) -> None:
    assert histogram.percentile(_of(*durations), fraction) == expected


def test_percentile_interpolates_inside_a_bucket_and_is_none_when_empty() -> None:
    # 61..75 s share the bucket (60, 75]: the first of two reads halfway.
    assert histogram.percentile(_of(62, 70), 0.5) == 67.5
    assert histogram.percentile({}, 0.5) is None
    assert histogram.percentile({3: 0}, 0.9) is None


def test_merged_and_cumulative() -> None:
    both = histogram.merged([_of(30, 60), _of(60, 4000)])
    assert sum(both.values()) == 4
    assert histogram.cumulative(both, (30, 60, 3600)) == [(30, 1), (60, 3), (3600, 3)]


def test_keys_are_the_utc_hour_in_a_month_partition() -> None:
    local = datetime(2026, 3, 31, 23, 30, tzinfo=UTC) + timedelta(hours=1)  # 2026-04-01 00:30 UTC
    assert rollups.partition("org_1", rollups.SERVICE, local) == "org_1#service#2026-04"
    assert rollups.slot(local, "svc_a") == "2026-04-01T00#svc_a"
    assert rollups.parse_hour("2026-04-01T00") == datetime(2026, 4, 1, tzinfo=UTC)
    assert rollups.total_slot(rollups.TOTAL_CHANNEL, "sms") == "channel#sms"


def test_an_opened_incident_adds_one_to_each_dimension_of_its_opening_hour_and_its_totals() -> None:
    happening = rollups.opened("org_1", FACTS)
    assert happening.happening_id == "opened#INC-2026-0001"
    targets = [addition.target for addition in happening.additions]
    assert targets == [
        Target("all", "-", OPENED_AT),
        Target("service", "svc_a", OPENED_AT),
        Target("service", "svc_b", OPENED_AT),
        Target("team", "team_1", OPENED_AT),
        Target("severity", "SEV2", OPENED_AT),
        Target("urgency", "high", OPENED_AT),
        Target("combined", "svc_a|team_1|SEV2|high", OPENED_AT),
        Target("combined", "svc_b|team_1|SEV2|high", OPENED_AT),
        Target("service_severity", "svc_a|SEV2"),
        Target("service_severity", "svc_b|SEV2"),
    ]
    assert all(addition.counters == {"opened": 1} for addition in happening.additions)
    assert rollups.split_combined("svc_a|-|SEV2|high") == {
        "service": "svc_a", "team": "-", "severity": "SEV2", "urgency": "high",
    }  # fmt: skip


def test_an_acknowledgement_counts_its_seconds_bucket_and_sla_on_the_opening_hour_and_the_person_now() -> None:
    at = OPENED_AT + timedelta(minutes=5)
    happening = rollups.acknowledged("org_1", FACTS, acknowledged_at=at, within_sla=True, person="usr_1")
    first = happening.additions[0]
    assert first.target == Target("all", "-", OPENED_AT)
    assert first.counters == {"acked": 1, "ack_s": 300, "ah25": 1, "ack_sla": 1}
    assert happening.additions[-1].target == Target("person", "usr_1", at)
    assert happening.additions[-1].counters == {"p_acked": 1}
    late = rollups.acknowledged("org_1", FACTS, acknowledged_at=at, within_sla=False, person=None)
    assert "ack_sla" not in late.additions[0].counters
    assert all(addition.target.kind != "person" for addition in late.additions)


def test_a_reopen_takes_back_exactly_what_its_resolution_added() -> None:
    at = OPENED_AT + timedelta(hours=2)
    resolved = rollups.resolved("org_1", FACTS, resolved_at=at, person="usr_1")
    undone = rollups.resolved("org_1", FACTS, resolved_at=at, person=None, sign=-1)
    assert resolved.happening_id != undone.happening_id
    assert resolved.additions[0].counters == {"resolved": 1, "res_s": 7200, "rh43": 1}
    assert undone.additions[0].counters == {"resolved": -1, "res_s": -7200, "rh43": -1}
    assert resolved.happening_id.startswith("resolved#INC-2026-0001#2026-03-02T11:41:07")


def test_a_page_is_one_interruption_with_its_channels_and_urgency_and_totals_by_channel() -> None:
    at = OPENED_AT
    happening = rollups.paged(
        "org_1", delivery_id="d1", person="usr_1", channels=["sms", "voice", "sms", "fax"], urgency="low", at=at,
        failed_channels=["email"],
    )  # fmt: skip
    person, *totals = happening.additions
    assert person.target == Target("person", "usr_1", at)
    assert person.counters == {"pages": 1, "page_u_low": 1, "page_sms": 1, "page_voice": 1}
    assert {(t.target.value, tuple(t.counters.items())) for t in totals} == {
        ("sms", (("pages", 1),)),
        ("voice", (("pages", 1),)),
        ("email", (("pages_failed", 1),)),
    }
    nothing_sent = rollups.paged("org_1", delivery_id="d2", person="u", channels=[], urgency="high", at=at)
    assert nothing_sent.additions == ()


@pytest.mark.parametrize(
    ("outcome", "suppressed_by", "counters"),
    [
        ("created", None, {"events": 1, "alerts": 1, "alert_incidents": 1}),
        ("grouped", None, {"events": 1, "alerts": 1}),
        ("deduplicated", None, {"events": 1}),
        ("suppressed", "maintenance", {"events": 1, "alerts": 1, "sup_maint": 1}),
        ("suppressed", "event_rule", {"events": 1, "alerts": 1, "sup_rule": 1}),
        ("dropped", None, {"events": 1, "dropped": 1}),
    ],
)
def test_an_alert_event_counts_by_its_outcome(outcome: str, suppressed_by: str | None, counters: dict) -> None:
    facts = rollups.AlertFacts("ev1", outcome, OPENED_AT, "datadog", "svc_a", "disk-full", suppressed_by)
    happening = rollups.alert_event("org_1", facts)
    kinds = [addition.target.kind for addition in happening.additions]
    assert kinds == ["alert_source", "alert_service", "alert_key", "inbound"]
    assert happening.additions[0].counters == counters
    assert happening.additions[-1].target.value == outcome


def test_an_auto_resolved_alert_records_how_long_it_lived() -> None:
    facts = rollups.AlertFacts("a1#resolved", "resolved", OPENED_AT + timedelta(minutes=4), "x", None, "k")
    happening = rollups.alert_auto_resolved("org_1", facts, opened_at=OPENED_AT)
    assert happening.additions[0].counters == {"auto_resolved": 1, "fh24": 1}
    assert rollups.histogram_of("fh", happening.additions[0].counters) == {24: 1}


@pytest.mark.parametrize(
    ("count", "told"), [(1, 1), (2, 1), (5, 1), (6, 0), (99, 0), (100, 95), (101, 0), (200, 100), (1000, 100)]
)
def test_repeats_on_a_dedup_key_are_told_a_hundred_at_a_time_past_the_fifth(count: int, told: int) -> None:
    from chalicelib.integration.outcomes import events_told

    assert events_told(count) == told


def test_a_told_batch_of_repeats_counts_its_events_once() -> None:
    facts = rollups.AlertFacts("ev100", "deduplicated", OPENED_AT, "datadog", "svc_a", "disk-full", events=95)
    happening = rollups.alert_event("org_1", facts)
    assert happening.additions[0].counters == {"events": 95}
    assert happening.additions[-1].counters == {"events": 95}
