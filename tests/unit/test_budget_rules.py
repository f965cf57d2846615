"""The outbound budget's pure rules as tables: destinations, the counters a message charges, the
sliding-window arithmetic and the limits an owner may set."""

from __future__ import annotations

import pytest

from chalicelib.budget import limits
from chalicelib.budget.destinations import destination_key, mailbox_key, phone_key
from chalicelib.budget.rules import Send, allowance, carried_over, counters_for, seconds_until_room, window_start
from chalicelib.errors import ValidationFailed
from chalicelib.settings import Settings

HOUR = 3600


@pytest.mark.parametrize(
    ("given", "key"),
    [
        ("ana@example.com", "ana@example.com"),
        ("Ana@Example.COM", "ana@example.com"),
        (" ana+pager@example.com ", "ana@example.com"),
        ("ana+1+2@example.com", "ana@example.com"),
        ("a.n.a@example.com", "a.n.a@example.com"),  # dots count except where the provider says not
        ("A.N.A+x@gmail.com", "ana@gmail.com"),
        ("a.n.a@googlemail.com", "ana@gmail.com"),
        ("ana@gmail.com.", "ana@gmail.com"),
        ("+tag@example.com", "+tag@example.com"),  # nothing before the tag: kept whole
        ("not-an-address", "not-an-address"),
    ],
)
def test_a_mailbox_is_counted_however_it_is_spelled(given: str, key: str) -> None:
    assert mailbox_key(given) == key


@pytest.mark.parametrize(
    ("given", "key"),
    [
        ("+15550100001", "+15550100001"),
        ("+1 (555) 010-0001", "+15550100001"),
        ("+1.555.010.0001", "+15550100001"),
        ("0015550100001", "+15550100001"),
        (" +44 20 7946 0000 ", "+442079460000"),
    ],
)
def test_a_phone_is_counted_in_e164(given: str, key: str) -> None:
    assert phone_key(given) == key


@pytest.mark.parametrize(
    ("channel", "address", "key"),
    [
        ("sms", "+1 555 010 0001", "phone:+15550100001"),
        ("voice", "+15550100001", "phone:+15550100001"),  # a code by call counts with the SMS ones
        ("email", "Victim+7@Gmail.com", "email:victim@gmail.com"),
        ("slack", " U0ANA ", "slack:U0ANA"),
        ("teams", "29:abc", "teams:29:abc"),
    ],
)
def test_the_destination_key_of_each_channel(channel: str, address: str, key: str) -> None:
    assert destination_key(channel, address) == key


@pytest.mark.parametrize(
    ("send", "counted"),
    [
        (
            Send("sms", "+15550100001", "verification", "o", "u"),
            [
                ("verification_per_destination", "phone:+15550100001"),
                ("verification_per_person", "o/u"),
                ("sms_per_organization", "o"),
            ],
        ),
        (
            Send("voice", "+15550100001", "verification", "o", "u"),
            [
                ("verification_per_destination", "phone:+15550100001"),
                ("verification_per_person", "o/u"),
                ("voice_per_organization", "o"),
            ],
        ),
        (
            Send("sms", "+15550100001", "page", "o", "u"),
            [("page_burst_per_person", "o/u/sms"), ("sms_per_organization", "o")],
        ),
        (
            Send("slack", "U1", "page", "o", "u"),
            [("page_burst_per_person", "o/u/slack"), ("chat_per_organization", "o")],
        ),
        (
            Send("teams", "T1", "page", "o", "u"),
            [("page_burst_per_person", "o/u/teams"), ("chat_per_organization", "o")],
        ),
        (Send("email", "a@x.io", "digest", "o", "u"), [("email_per_organization", "o")]),
        (
            Send("sms", "+15550100001", "unknown_sender_reply", None),
            [("unknown_sender_reply_per_number", "phone:+15550100001"), ("unknown_sender_replies", "deployment")],
        ),
        (
            Send("sms", "+15550100001", "reply", "o", "u"),
            [("messages_per_destination", "o/phone:+15550100001"), ("sms_per_organization", "o")],
        ),
        (
            Send("email", "V+1@gmail.com", "confirmation", "o"),
            [("confirmation_per_destination", "email:v@gmail.com"), ("subscriber_email_per_organization", "o")],
        ),
        (
            Send("email", "v@x.io", "subscriber_notice", "o"),
            [("messages_per_destination", "o/email:v@x.io"), ("subscriber_email_per_organization", "o")],
        ),
        (
            Send("email", "owner@x.io", "notice", "o"),
            [("messages_per_destination", "o/email:owner@x.io"), ("email_per_organization", "o")],
        ),
    ],
)
def test_what_each_message_counts_against_narrowest_first(send: Send, counted: list[tuple[str, str]]) -> None:
    assert [(counter.limit, counter.subject) for counter in counters_for(send)] == counted


def test_a_counter_key_names_the_limit_and_whose() -> None:
    (first, *_) = counters_for(Send("sms", "+15550100001", "verification", "o", "u"))
    assert first.key == "outbound#verification_per_destination#phone:+15550100001"


@pytest.mark.parametrize(
    ("epoch", "seconds", "start"),
    [(0, HOUR, 0), (3599.9, HOUR, 0), (3600, HOUR, 3600), (7250, 600, 7200), (86399, 86400, 0)],
)
def test_fixed_window_starts(epoch: float, seconds: int, start: int) -> None:
    assert window_start(epoch, seconds) == start


@pytest.mark.parametrize(
    ("previous", "elapsed", "carried"),
    [
        (0, 0, 0),
        (3, 0, 3),
        (3, 1, 3),
        (3, 1200, 2),
        (3, 1800, 2),
        (3, 2400, 1),
        (3, 3599, 1),
        (3, 3600, 0),
        (1, 3599, 1),
    ],
)
def test_the_previous_window_counts_by_how_much_of_it_still_overlaps(
    previous: int, elapsed: float, carried: int
) -> None:
    assert carried_over(previous, elapsed, HOUR) == carried


@pytest.mark.parametrize(
    ("limit", "previous", "elapsed", "room"),
    [
        (3, 0, 0, 3),
        (3, 3, 1, 0),
        (3, 3, 1800, 1),
        (3, 3, 2400, 2),
        (5, 2, 0, 3),
        (1, 1, 3599, 0),
        (1, 1, 3600, 1),
        (0, 0, 0, 0),
    ],
)
def test_the_allowance_of_the_current_window(limit: int, previous: int, elapsed: float, room: int) -> None:
    assert allowance(limit, previous, elapsed, HOUR) == room


@pytest.mark.parametrize(
    ("limit", "previous", "current", "elapsed", "wait"),
    [
        (3, 0, 3, 180, 3420 + 1200),  # the next window, once a third of this one has slid out
        (3, 0, 3, 3599, 1 + 1200),
        (1, 0, 1, 0, 3600 + 3600),  # one a window: the whole of this one must slide out
        (3, 3, 0, 0, 1200),  # this window, once a third of the previous has slid out
        (3, 3, 1, 0, 2400),
        (3, 3, 2, 0, 3600),  # full until the previous slides out wholly: the next window, at once
        (0, 0, 0, 600, 3000),
    ],
)
def test_retry_after_is_when_one_more_fits(limit: int, previous: int, current: int, elapsed: float, wait: int) -> None:
    assert seconds_until_room(limit, previous, current, elapsed, HOUR) == wait


def test_retry_after_is_honest_a_send_at_that_moment_fits() -> None:
    for limit in (1, 2, 3, 5, 8):
        for previous in range(limit + 1):
            for current in range(limit + 1):
                elapsed = 900.0
                if allowance(limit, previous, elapsed, HOUR) > current:
                    continue  # not refused
                wait = seconds_until_room(limit, previous, current, elapsed, HOUR)
                later = elapsed + wait
                if later < HOUR:
                    assert allowance(limit, previous, later, HOUR) > current
                else:
                    assert allowance(limit, current, later - HOUR, HOUR) > 0


def test_no_sliding_hour_holds_more_than_the_limit_sending_whenever_allowed() -> None:
    """Send whenever the allowance lets one more in, every minute for 4 hours: any 60-minute span
    holds at most the limit (fixed windows alone would let twice as many through a boundary)."""
    limit, sent_at = 3, []
    for minute in range(4 * 60):
        epoch = minute * 60.0
        start = window_start(epoch, HOUR)
        current = sum(1 for at in sent_at if start <= at < start + HOUR)
        previous = sum(1 for at in sent_at if start - HOUR <= at < start)
        if current < allowance(limit, previous, epoch - start, HOUR):
            sent_at.append(epoch)
    assert len(sent_at) >= 3 * limit
    assert max(sum(1 for at in sent_at if begin <= at < begin + HOUR) for begin in sent_at) <= limit


def test_the_deployment_values_come_from_settings_and_the_owner_only_lowers() -> None:
    settings = Settings(budget_sms_per_organization=50)
    deployment = limits.deployment_values(settings)
    assert deployment["verification_per_destination"] == 3 and deployment["sms_per_organization"] == 50
    assert set(deployment) == set(limits.BY_NAME)
    effective = limits.in_effect(deployment, {"sms_per_organization": 10, "unknown_sender_replies": 1})
    assert effective["sms_per_organization"] == 10
    assert effective["unknown_sender_replies"] == 20  # the deployment's own: an owner's value is ignored
    assert limits.in_effect({"sms_per_organization": 5}, {"sms_per_organization": 10}) == {"sms_per_organization": 5}


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"sms_per_organization": 0}, "limits.sms_per_organization"),
        ({"sms_per_organization": 1001}, "limits.sms_per_organization"),
        ({"no_such_limit": 1}, "limits.no_such_limit"),
        ({"unknown_sender_replies": 5}, "limits.unknown_sender_replies"),
    ],
)
def test_an_owner_cannot_raise_zero_or_set_the_deployments_own(changes: dict[str, int], problem: str) -> None:
    deployment = limits.deployment_values(Settings())
    with pytest.raises(ValidationFailed) as refused:
        limits.check_changes(changes, deployment)
    assert [field["field"] for field in refused.value.details["fields"]] == [problem]


def test_an_owner_may_lower_to_one_or_put_back() -> None:
    deployment = limits.deployment_values(Settings())
    changes = {"sms_per_organization": 1, "page_burst_per_person": 5, "voice_per_organization": None}
    assert limits.check_changes(changes, deployment) == changes


@pytest.mark.parametrize(
    ("seconds", "words"), [(3600, "an hour"), (86400, "a day"), (600, "in 10 minutes"), (60, "in 1 minute")]
)
def test_window_words(seconds: int, words: str) -> None:
    assert limits.window_words(seconds) == words


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (1, "1 second"),
        (45, "45 seconds"),
        (119, "119 seconds"),
        (120, "2 minutes"),
        (4620, "77 minutes"),
        (7200, "2 hours"),
        (86400, "24 hours"),
    ],
)
def test_wait_words(seconds: int, words: str) -> None:
    assert limits.wait_words(seconds) == words
