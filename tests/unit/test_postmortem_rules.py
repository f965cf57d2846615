"""Postmortem rules: status moves, numbers, durations, the response-timeline prefill, HTML escaping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.errors import TransitionNotAllowed
from chalicelib.postmortem import rules

T0 = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=1)


@pytest.mark.parametrize(
    ("current", "target"),
    [("draft", "in_review"), ("in_review", "published"), ("in_review", "draft")],
)
def test_allowed_moves(current: str, target: str) -> None:
    assert rules.check_transition(current, target) is True


@pytest.mark.parametrize(
    ("current", "target"),
    [
        ("draft", "published"),
        ("published", "draft"),
        ("published", "in_review"),
        ("draft", "archived"),
    ],
)
def test_other_moves_are_refused_with_what_is_allowed(current: str, target: str) -> None:
    with pytest.raises(TransitionNotAllowed) as refused:
        rules.check_transition(current, target)
    assert refused.value.status == 400
    assert refused.value.details == {
        "from": current,
        "to": target,
        "allowed": sorted(rules.ALLOWED_MOVES[current]),
    }


@pytest.mark.parametrize("status", rules.STATUSES)
def test_a_move_to_the_current_status_is_no_change(status: str) -> None:
    assert rules.check_transition(status, status) is False


def test_numbers_and_counter_names() -> None:
    assert rules.postmortem_number(2026, 7) == "PM-2026-0007"
    assert rules.postmortem_number(2027, 12345) == "PM-2027-12345"
    assert rules.counter_name(2026) == "postmortem#2026"


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0, "0s"),
        (59.9, "59s"),
        (60, "1m"),
        (12 * 60 + 59, "12m"),
        (3600, "1h"),
        (3600 + 5 * 60, "1h 5m"),
        (86400, "1d"),
        (86400 * 3 + 4 * 3600 + 59, "3d 4h"),
    ],
)
def test_human_duration(seconds: float, expected: str) -> None:
    assert rules.human_duration(seconds) == expected


def test_first_identified_at_takes_the_earliest_identified_like_move() -> None:
    moves = [
        (T0 + timedelta(minutes=30), "identified"),
        (T0 + timedelta(minutes=5), "investigating"),
        (T0 + timedelta(minutes=20), "Cause_Identified"),
    ]
    assert rules.first_identified_at(moves) == T0 + timedelta(minutes=20)
    assert rules.first_identified_at([(T0, "investigating"), (T0, "resolved")]) is None
    assert rules.first_identified_at([]) is None


def test_prefill_from_the_incident_timestamps() -> None:
    prefill = rules.prefill_response_timeline(
        created_at=T0,
        acknowledged_at=T0 + timedelta(minutes=12),
        identified_at=T0 + timedelta(minutes=40),
        resolved_at=T0 + timedelta(hours=1, minutes=5),
        now=NOW,
    )
    assert prefill == {"time_to_acknowledge": "12m", "time_to_identify": "40m", "time_to_resolve": "1h 5m"}


def test_prefill_is_null_for_unknown_moments_and_impossible_ones() -> None:
    prefill = rules.prefill_response_timeline(
        created_at=T0,
        acknowledged_at=T0 - timedelta(seconds=1),  # before creation
        identified_at=None,
        resolved_at=NOW + timedelta(seconds=1),  # after now: a skewed clock
        now=NOW,
    )
    assert prefill == {"time_to_acknowledge": None, "time_to_identify": None, "time_to_resolve": None}


SCRIPT = "<script>alert('x')</script>"
ATTRIBUTE_BREAKER = '" onmouseover="alert(1)'


def _assert_inert(html: str) -> None:
    assert "<script" not in html
    assert 'onmouseover="' not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html or "&quot; onmouseover=&quot;" in html


def test_impact_html_escapes_every_user_string() -> None:
    html = rules.render_impact(
        {
            "duration": SCRIPT,
            "users_affected": "all & more",
            "services_affected": [SCRIPT, "api"],
            "revenue_impact": None,
        }
    )
    _assert_inert(html)
    assert html == (
        '<dl class="postmortem-impact">'
        "<dt>Duration</dt><dd>&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;</dd>"
        "<dt>Users affected</dt><dd>all &amp; more</dd>"
        "<dt>Services affected</dt><dd>&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;, api</dd>"
        "</dl>"
    )


def test_timeline_html_escapes_timestamps_and_descriptions() -> None:
    html = rules.render_timeline([{"timestamp": SCRIPT, "description": ATTRIBUTE_BREAKER}])
    _assert_inert(html)
    assert html == (
        '<ol class="postmortem-timeline"><li><time>&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;</time> '
        "&quot; onmouseover=&quot;alert(1)</li></ol>"
    )
    assert rules.render_timeline([]) == '<ol class="postmortem-timeline"></ol>'


def test_action_items_html_escapes_text_owner_due_date_and_status_attribute() -> None:
    html = rules.render_action_items(
        [
            {"text": SCRIPT, "owner_email": "a@b.co", "due_date": ATTRIBUTE_BREAKER, "status": ATTRIBUTE_BREAKER},
            {"text": "Add alert", "owner_email": None, "due_date": None, "status": "pending"},
        ]
    )
    _assert_inert(html)
    assert '<li data-status="&quot; onmouseover=&quot;alert(1)">' in html
    assert (
        '<li data-status="pending"><span class="text">Add alert</span> <span class="status">pending</span></li>' in html
    )
    assert '<span class="owner">a@b.co</span>' in html


def test_response_timeline_html_leaves_out_unknown_durations() -> None:
    html = rules.render_response_timeline(
        {"time_to_acknowledge": "12m", "time_to_identify": None, "time_to_resolve": SCRIPT}
    )
    _assert_inert(html)
    assert "Time to identify" not in html
    assert "<dt>Time to acknowledge</dt><dd>12m</dd>" in html


def test_rendered_html_is_null_for_null_and_for_legacy_strings() -> None:
    assert rules.rendered_html("impact", None) is None
    assert rules.rendered_html("impact", "<p>legacy</p>") is None
    assert rules.rendered_html("timeline", []) == '<ol class="postmortem-timeline"></ol>'
