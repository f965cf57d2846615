"""The pure contact rules: addresses, labels, defaults, rule validation and ordering, and the
arithmetic of verification codes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.contact import rules
from chalicelib.contact.rules import SendWindow, Step
from chalicelib.errors import Conflict, NoVerificationCode, RateLimited, ValidationFailed

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("method_type", "given", "stored"),
    [
        ("email", "  Ann@Example.COM ", "ann@example.com"),
        ("slack", " U024BE7LH ", "U024BE7LH"),
        ("sms", "+15551234567", "+15551234567"),
        ("voice", "+442071838750", "+442071838750"),
        ("sms", "+12345678", "+12345678"),  # 8 digits: the shortest E.164 we take
        ("sms", "+123456789012345", "+123456789012345"),  # 15 digits: the longest
    ],
)
def test_addresses_are_normalized(method_type: str, given: str, stored: str) -> None:
    assert rules.normalize_address(method_type, given) == stored


@pytest.mark.parametrize(
    ("method_type", "given"),
    [
        ("email", "not-an-email"),
        ("slack", "U1 2"),
        ("slack", ""),
        ("slack", "U" * 65),
        ("sms", "15551234567"),  # no +
        ("sms", "+05551234567"),  # country code cannot start with 0
        ("voice", "+1 555 123 4567"),  # formatted: E.164 only
        ("sms", "+1234567"),  # too short
        ("sms", "+1234567890123456"),  # too long
        ("sms", "+1555123456a"),
        ("pager", "+15551234567"),
    ],
)
def test_bad_addresses_are_400_on_address_or_type(method_type: str, given: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        rules.normalize_address(method_type, given)
    assert raised.value.details is not None
    assert raised.value.details["fields"][0]["field"] in ("address", "type")  # type: ignore[call-overload]


def test_only_phone_methods_start_unverified_and_only_verified_phones_are_indexed() -> None:
    assert [t for t in rules.CONTACT_TYPES if rules.verified_on_creation(t)] == ["email", "slack"]
    assert rules.address_key("sms", "+15551234567", True) == "sms#+15551234567"
    assert rules.address_key("voice", "+15551234567", True) == "voice#+15551234567"
    assert rules.address_key("sms", "+15551234567", False) is None
    assert rules.address_key("email", "a@b.co", True) is None


def test_labels_default_to_the_type_and_are_trimmed() -> None:
    assert rules.clean_label(None, "sms") == "SMS"
    assert rules.clean_label("   ", "voice") == "Voice call"
    assert rules.clean_label("  Work   phone ", "sms") == "Work phone"
    with pytest.raises(ValidationFailed):
        rules.clean_label("x" * 101, "sms")


def test_defaults_are_the_account_email_plus_slack_when_known() -> None:
    both = rules.default_methods("ann@example.com", "U1")
    assert [(m.contact_method_id, m.type, m.address, m.follows_account_email) for m in both] == [
        ("default-email", "email", "ann@example.com", True),
        ("default-slack", "slack", "U1", False),
    ]
    assert rules.default_steps(both) == [Step("default-email", 0), Step("default-slack", 0)]
    assert [m.type for m in rules.default_methods("ann@example.com", None)] == ["email"]
    assert rules.default_methods(None, None) == []


def test_duplicates_and_the_limit_are_conflicts() -> None:
    existing = [("email", "a@b.co"), ("sms", "+15551234567")]
    rules.check_can_add(existing, "voice", "+15551234567", count=2)  # same number, other type: fine
    with pytest.raises(Conflict):
        rules.check_can_add(existing, "sms", "+15551234567", count=2)
    rules.check_can_add([], "sms", "+15551234567", count=rules.MAX_METHODS - 1)
    with pytest.raises(Conflict):
        rules.check_can_add([], "sms", "+15551234567", count=rules.MAX_METHODS)


def test_steps_are_sorted_by_delay_keeping_the_given_order_on_ties() -> None:
    steps = [Step("b", 5), Step("a", 0), Step("c", 5), Step("a", 1440)]
    assert rules.clean_steps("high", steps, ["a", "b", "c"]) == [
        Step("a", 0),
        Step("b", 5),
        Step("c", 5),
        Step("a", 1440),
    ]
    assert rules.clean_steps("low", [], ["a"]) == []


@pytest.mark.parametrize(
    ("steps", "field", "message"),
    [
        ([Step("ghost", 0)], "high.0.contact_method_id", "not a contact method of this user"),
        ([Step("a", -1)], "high.0.delay_minutes", "must be 0 to 1440"),
        ([Step("a", 1441)], "high.0.delay_minutes", "must be 0 to 1440"),
        ([Step("a", 0), Step("a", 0)], "high.1", "the same method at the same delay is listed twice"),
        ([Step("a", n) for n in range(11)], "high", "at most 10 steps"),
    ],
)
def test_invalid_steps_name_the_field(steps: list[Step], field: str, message: str) -> None:
    with pytest.raises(ValidationFailed) as raised:
        rules.clean_steps("high", steps, ["a"])
    assert {"field": field, "message": message} in raised.value.details["fields"]  # type: ignore[call-overload,index]


def test_removing_a_method_from_steps() -> None:
    assert rules.without_method([Step("a", 0), Step("b", 1), Step("a", 5)], "a") == [Step("b", 1)]


def test_codes_are_six_digits_and_digests_bind_the_method_and_address() -> None:
    codes = {rules.new_code() for _ in range(200)}
    assert all(re.fullmatch(r"[0-9]{6}", code) for code in codes)
    assert len(codes) > 150
    base = {"user_key": "org#u", "contact_method_id": "m", "address": "+15551234567", "code": "123456"}
    digest = rules.code_digest("secret", **base)
    assert "123456" not in digest and len(digest) == 64
    assert rules.code_matches(digest, rules.code_digest("secret", **base))
    for change in ({"code": "123457"}, {"address": "+15551234568"}, {"contact_method_id": "n"}, {"user_key": "o#u"}):
        assert not rules.code_matches(digest, rules.code_digest("secret", **{**base, **change}))
    assert not rules.code_matches(digest, rules.code_digest("other", **base))


def test_first_send_opens_a_window_and_the_cooldown_holds_30_seconds() -> None:
    first = rules.next_send(last_sent_at=None, window=SendWindow(None, 0), now=NOW)
    assert first == SendWindow(NOW, 1)
    with pytest.raises(RateLimited) as raised:
        rules.next_send(last_sent_at=NOW, window=first, now=NOW + timedelta(seconds=10))
    assert raised.value.headers["Retry-After"] == "20"
    assert raised.value.status == 429
    second = rules.next_send(last_sent_at=NOW, window=first, now=NOW + timedelta(seconds=30))
    assert second == SendWindow(NOW, 2)


def test_at_most_five_codes_an_hour() -> None:
    full = SendWindow(NOW, rules.SENDS_PER_WINDOW)
    later = NOW + timedelta(minutes=20)
    with pytest.raises(RateLimited) as raised:
        rules.next_send(last_sent_at=NOW + timedelta(minutes=10), window=full, now=later)
    assert raised.value.headers["Retry-After"] == str(40 * 60)
    assert rules.next_send(last_sent_at=NOW, window=full, now=NOW + timedelta(hours=1)) == SendWindow(
        NOW + timedelta(hours=1), 1
    )


@pytest.mark.parametrize(
    ("digest", "expires_at", "attempts", "reason"),
    [
        (None, None, 0, "not_sent"),
        ("d", NOW - timedelta(seconds=1), 0, "expired"),
        ("d", NOW, 0, "expired"),
        ("d", NOW + timedelta(minutes=1), 5, "attempts_exhausted"),
    ],
)
def test_unusable_codes(digest: str | None, expires_at: datetime | None, attempts: int, reason: str) -> None:
    with pytest.raises(NoVerificationCode) as raised:
        rules.check_code_usable(digest=digest, expires_at=expires_at, attempts=attempts, now=NOW)
    assert raised.value.details == {"reason": reason}
    assert raised.value.status == 409


def test_a_usable_code() -> None:
    rules.check_code_usable(digest="d", expires_at=NOW + timedelta(seconds=1), attempts=4, now=NOW)
