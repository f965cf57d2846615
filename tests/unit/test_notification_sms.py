"""The SMS text: one SMS, always at most 160 GSM-7 characters, whatever the title, service and link
hold: severity, number, service, title, the console link on its own line, the reply words. No AWS."""

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
TAIL = f"\n{URL}\n{HINT}"


def note(
    title: str,
    severity: str = "SEV1",
    number: str = "INC-2026-0042",
    service: str | None = None,
    url: str = URL,
    description: str | None = None,
) -> Notification:
    return Notification(number, title, severity, "high", None, url, service_name=service, description=description)


def is_gsm7(text: str) -> bool:
    return all(character in GSM_ALPHABET for character in text)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Checkout 500s", f"[SEV1] INC-2026-0042 Checkout 500s.{TAIL}"),
        ("Checkout down!", f"[SEV1] INC-2026-0042 Checkout down!{TAIL}"),
        ("  Checkout\n\tdown  ", f"[SEV1] INC-2026-0042 Checkout down.{TAIL}"),
        ("Caf\u00e9 \u00fcber na\u00efve", f"[SEV1] INC-2026-0042 Caf\u00e9 \u00fcber naive.{TAIL}"),
        ("\u201cQuoted\u201d \u2014 it\u2019s down\u2026", f'[SEV1] INC-2026-0042 "Quoted" - it\'s down...{TAIL}'),
        ("Pay \U0001f525\U0001f525 down \U0001f680", f"[SEV1] INC-2026-0042 Pay down.{TAIL}"),
        ("\U0001f525\U0001f525\U0001f525", f"[SEV1] INC-2026-0042.{TAIL}"),
        ("\u652f\u6255\u3044\u969c\u5bb3", f"[SEV1] INC-2026-0042.{TAIL}"),
        ("\uff21\uff30\uff29 \ufb01x", f"[SEV1] INC-2026-0042 API fix.{TAIL}"),
        ("Pr\u00e8s de \u0141\u00f3d\u017a", f"[SEV1] INC-2026-0042 Pr\u00e8s de Lodz.{TAIL}"),
        ("{json} [x] ~y | z", f"[SEV1] INC-2026-0042 {{json}} [x] ~y | z.{TAIL}"),
    ],
)
def test_page_text_table(title: str, expected: str) -> None:
    text = sms.page_text(note(title))
    assert text == expected
    assert sms.septets(text) <= sms.SMS_LIMIT and is_gsm7(text)


@pytest.mark.parametrize(
    ("title", "service", "url", "expected"),
    [
        # With a service: named before the title.
        ("Checkout 500s", "Checkout", URL, f"[SEV1] INC-2026-0042 Checkout: Checkout 500s.{TAIL}"),
        # A long service name is cut to 24 septets, the title keeps the rest.
        (
            "Checkout 500s",
            "Payments and checkout platform EU",
            URL,
            f"[SEV1] INC-2026-0042 Payments and checkout...: Checkout 500s.{TAIL}",
        ),
        # No title: the service ends the first line.
        ("\U0001f525", "Checkout", URL, f"[SEV1] INC-2026-0042 Checkout.{TAIL}"),
        # A service in a script GSM-7 lacks is left out, not shown as nothing.
        ("Down", "\u652f\u6255\u3044", URL, f"[SEV1] INC-2026-0042 Down.{TAIL}"),
        # A console link longer than MAX_LINK is left out whole, never cut: one line then.
        ("Down", "Checkout", "https://tocsin.example/" + "a" * 80, f"[SEV1] INC-2026-0042 Checkout: Down. {HINT}"),
        # A link outside GSM-7 (it would switch the SMS to UCS-2) is left out too.
        ("Down", None, "https://tocsin.example/app/\u0107", f"[SEV1] INC-2026-0042 Down. {HINT}"),
        # An empty link: nothing to show.
        ("Down", None, "", f"[SEV1] INC-2026-0042 Down. {HINT}"),
    ],
)
def test_page_text_with_service_and_link_table(title: str, service: str | None, url: str, expected: str) -> None:
    text = sms.page_text(note(title, service=service, url=url))
    assert text == expected
    assert sms.septets(text) <= sms.SMS_LIMIT and is_gsm7(text)


def test_the_description_never_makes_the_sms_longer() -> None:
    plain = sms.page_text(note("Checkout 500s", service="Checkout"))
    described = sms.page_text(note("Checkout 500s", service="Checkout", description="Error rate above 5%. " * 50))
    assert described == plain


def test_a_long_title_pushes_the_service_out_before_it_is_cut_to_nothing() -> None:
    # The service stays while the title keeps at least MIN_TITLE septets.
    text = sms.page_text(note(LONG_TITLE, service="Checkout"))
    first = text.split("\n")[0]
    assert first.startswith("[SEV1] INC-2026-0042 Checkout: Checkout returns 500") and first.endswith("...")
    assert sms.septets(text) <= sms.SMS_LIMIT
    long_url = "https://tocsin.example/app/incidents/" + "9" * 40  # 77 septets: still kept
    crowded = sms.page_text(note(LONG_TITLE, service="S" * 30, url=long_url))
    assert long_url in crowded and sms.septets(crowded) <= sms.SMS_LIMIT
    head = crowded.split("\n")[0]
    assert sms.septets(head.removeprefix("[SEV1] INC-2026-0042 ")) >= sms.MIN_TITLE


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
def test_long_titles_are_shortened_with_an_ellipsis_and_keep_the_link_and_reply_codes(title: str) -> None:
    text = sms.page_text(note(title))
    assert sms.septets(text) <= sms.SMS_LIMIT and is_gsm7(text)
    assert text.startswith("[SEV1] INC-2026-0042 ")
    assert text.endswith(f"...{TAIL}")


def test_a_title_that_just_fits_is_not_shortened() -> None:
    # "[" and "]" are GSM-7 extension characters: the head "[SEV1] INC-2026-0042" takes 22 septets;
    # the link line and the reply line take 50 and 30 (their line breaks included).
    room = sms.SMS_LIMIT - sms.septets(f"[SEV1] INC-2026-0042 .{TAIL}")
    assert room == 56
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


def test_an_absurd_severity_still_keeps_the_reply_words() -> None:
    text = sms.page_text(note("Down", severity="S" * 200))
    assert sms.septets(text) <= sms.SMS_LIMIT and text.endswith(f"... {HINT}")


@given(
    title=st.text(max_size=400),
    severity=st.sampled_from(["SEV0", "SEV1", "SEV2", "SEV3", "SEV4"]),
    service=st.none() | st.text(max_size=120),
)
def test_any_title_and_service_give_one_gsm7_sms(title: str, severity: str, service: str | None) -> None:
    text = sms.page_text(note(title, severity, service=service))
    assert sms.septets(text) <= sms.SMS_LIMIT
    assert is_gsm7(text)
    assert text.startswith(f"[{severity}] INC-2026-0042") and text.endswith(sms.REPLY_HINT)


@pytest.mark.parametrize(
    ("value", "valid"),
    [("+15551234567", True), ("+442071838750", True), ("15551234567", False), ("+0555123", False), (None, False)],
)
def test_phone_numbers_are_e164(value: str | None, valid: bool) -> None:
    assert sms.is_phone_number(value) is valid
