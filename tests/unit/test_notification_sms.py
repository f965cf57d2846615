"""The SMS text: one SMS, always at most 160 GSM-7 characters, whatever the title holds. No AWS."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.notification import sms
from chalicelib.notification.channels import Notification

URL = "http://127.0.0.1:8000/app/incidents/INC-2026-0042"
LONG_TITLE = "Checkout returns 500 for every request from the EU region after the 14:02 deploy " * 4
GSM_ALPHABET = sms._BASIC | sms._EXTENSION
HINT = "Reply 4 to ack, 6 to resolve."


def note(title: str, severity: str = "SEV1", number: str = "INC-2026-0042") -> Notification:
    return Notification(number, title, severity, "high", None, URL)


def is_gsm7(text: str) -> bool:
    return all(character in GSM_ALPHABET for character in text)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Checkout 500s", "[SEV1] INC-2026-0042 Checkout 500s. Reply 4 to ack, 6 to resolve."),
        ("Checkout down!", "[SEV1] INC-2026-0042 Checkout down! Reply 4 to ack, 6 to resolve."),
        ("  Checkout\n\tdown  ", "[SEV1] INC-2026-0042 Checkout down. Reply 4 to ack, 6 to resolve."),
        ("Caf\u00e9 \u00fcber na\u00efve", f"[SEV1] INC-2026-0042 Caf\u00e9 \u00fcber naive. {HINT}"),
        ("\u201cQuoted\u201d \u2014 it\u2019s down\u2026", f'[SEV1] INC-2026-0042 "Quoted" - it\'s down... {HINT}'),
        ("Pay \U0001f525\U0001f525 down \U0001f680", "[SEV1] INC-2026-0042 Pay down. Reply 4 to ack, 6 to resolve."),
        ("\U0001f525\U0001f525\U0001f525", "[SEV1] INC-2026-0042. Reply 4 to ack, 6 to resolve."),
        ("\u652f\u6255\u3044\u969c\u5bb3", "[SEV1] INC-2026-0042. Reply 4 to ack, 6 to resolve."),
        ("\uff21\uff30\uff29 \ufb01x", "[SEV1] INC-2026-0042 API fix. Reply 4 to ack, 6 to resolve."),
        ("Pr\u00e8s de \u0141\u00f3d\u017a", "[SEV1] INC-2026-0042 Pr\u00e8s de Lodz. Reply 4 to ack, 6 to resolve."),
        ("{json} [x] ~y | z", "[SEV1] INC-2026-0042 {json} [x] ~y | z. Reply 4 to ack, 6 to resolve."),
    ],
)
def test_page_text_table(title: str, expected: str) -> None:
    text = sms.page_text(note(title))
    assert text == expected
    assert sms.septets(text) <= sms.SMS_LIMIT and is_gsm7(text)


@pytest.mark.parametrize(
    "title",
    [
        LONG_TITLE,
        "x" * 500,
        "\u00e9" * 300,  # in the alphabet: one septet each
        "[" * 200,  # extension characters: two septets each
        "a]" * 120,
        "\U0001f525 word " * 60,
        "W" + " " * 400 + "X" * 200,
        ("Caf\u00e9 \u2014 " * 40),
    ],
)
def test_long_titles_are_shortened_with_an_ellipsis_and_keep_the_reply_codes(title: str) -> None:
    text = sms.page_text(note(title))
    assert sms.septets(text) <= sms.SMS_LIMIT and is_gsm7(text)
    assert text.startswith("[SEV1] INC-2026-0042 ")
    assert text.endswith("... Reply 4 to ack, 6 to resolve.")


def test_a_title_that_just_fits_is_not_shortened() -> None:
    # "[" and "]" are GSM-7 extension characters: the head "[SEV1] INC-2026-0042" takes 22 septets.
    room = sms.SMS_LIMIT - sms.septets("[SEV1] INC-2026-0042 . Reply 4 to ack, 6 to resolve.")
    assert room == 106
    exact = sms.page_text(note("y" * room))
    assert sms.septets(exact) == sms.SMS_LIMIT and "..." not in exact
    over = sms.page_text(note("y" * (room + 1)))
    assert sms.septets(over) <= sms.SMS_LIMIT and "..." in over


def test_extension_characters_count_twice() -> None:
    assert sms.septets("abc") == 3
    assert sms.septets("[]{}") == 8
    assert sms.septets("\u20ac") == 2


def test_a_long_incident_number_still_fits() -> None:
    text = sms.page_text(note(LONG_TITLE, number="INC-2026-000000000042"))
    assert sms.septets(text) <= sms.SMS_LIMIT and "INC-2026-000000000042" in text
    assert text.endswith("Reply 4 to ack, 6 to resolve.")


@given(title=st.text(max_size=400), severity=st.sampled_from(["SEV0", "SEV1", "SEV2", "SEV3", "SEV4"]))
def test_any_title_gives_one_gsm7_sms(title: str, severity: str) -> None:
    text = sms.page_text(note(title, severity))
    assert sms.septets(text) <= sms.SMS_LIMIT
    assert is_gsm7(text)
    assert text.startswith(f"[{severity}] INC-2026-0042") and text.endswith(sms.REPLY_HINT)


@pytest.mark.parametrize(
    ("value", "valid"),
    [("+15551234567", True), ("+442071838750", True), ("15551234567", False), ("+0555123", False), (None, False)],
)
def test_phone_numbers_are_e164(value: str | None, valid: bool) -> None:
    assert sms.is_phone_number(value) is valid
