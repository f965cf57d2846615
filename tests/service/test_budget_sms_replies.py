"""Replies to inbound SMS within the outbound budget, and never into a loop (finding 2): an unknown
number gets one reply a day, all of them together 20 an hour; short codes, echoes of Tocsin's
words and the same text again get none; a reply that acts is always answered."""

from __future__ import annotations

from datetime import timedelta

from chalicelib.paging import sms_loops
from chalicelib.paging.sms_reply import Handled, InboundSms, handle
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org, reconfigure
from tests.service.test_sms_reply import PHONE, Texts, _incident, _paged, _person

UNKNOWN = "+15559990000"


def inbound(body: str, sender: str = UNKNOWN, n: int = 0, at: timedelta = timedelta()) -> tuple[Handled, Texts]:
    texts = Texts()
    handled = handle(InboundSms(f"in-{sender}-{n}", sender, body), NOW + at, texts, settings=get_settings())
    assert handled is not None
    return handled, texts


def test_ten_messages_from_an_unknown_number_get_one_reply(org: Org) -> None:
    replies = [inbound(f"hello {n}", n=n)[1].sent for n in range(10)]
    assert sum(len(sent) for sent in replies) == 1
    assert replies[0] == [(UNKNOWN, "This number is not a verified Tocsin SMS contact; nothing was changed.")]
    handled, texts = inbound("hello again", n=10)
    assert texts.sent == [] and handled.replied is False
    assert "unknown_sender_reply_per_number" in str(handled.withheld)
    # A day on, the number gets one more.
    assert len(inbound("still me", n=11, at=timedelta(days=2))[1].sent) == 1


def test_unknown_numbers_together_get_at_most_the_deployments_hourly_replies(org: Org) -> None:
    reconfigure(BUDGET_UNKNOWN_SENDER_REPLIES="4")
    sent = [inbound("hi", sender=f"+1555999{n:04d}")[1].sent for n in range(10)]
    assert sum(len(s) for s in sent) == 4


def test_short_codes_and_tocsins_own_number_get_no_reply(org: Org) -> None:
    reconfigure(SMS_ORIGINATION_NUMBER="+1 555 000 9999")
    for sender in ("12345", "+1234", "TOCSIN", "+15550009999"):
        handled, texts = inbound("STOP", sender=sender)
        assert texts.sent == [] and handled.replied is False


def test_an_auto_responder_echoing_tocsin_gets_no_reply(org: Org) -> None:
    _person(org, "Grace")  # PHONE is a verified contact: not the unknown-number budget
    first, texts = inbound("I am away until Monday.", sender=PHONE, n=1)
    assert len(texts.sent) == 1 and "did not understand" in texts.sent[0][1]
    again, texts = inbound("I am away  until monday.", sender=PHONE, n=2)  # the same text again
    assert texts.sent == [] and again.withheld == sms_loops.SAME_AGAIN
    echo, texts = inbound(f"Auto-reply: {first.text}", sender=PHONE, n=3)
    assert texts.sent == [] and echo.withheld == sms_loops.ECHO
    other, texts = inbound("who is this?", sender=PHONE, n=4)  # a person writing something new is answered
    assert len(texts.sent) == 1 and other.replied


def test_a_reply_that_acts_is_answered_even_when_repeated(org: Org) -> None:
    grace = _person(org, "Grace")
    number = _incident(org)
    _paged(org, number, grace)
    assert inbound("ack", sender=PHONE, n=1)[1].sent == [(PHONE, f"{number} acknowledged by grace@acme.test.")]
    [(to, again)] = inbound("ack", sender=PHONE, n=2)[1].sent
    assert (to, again.removesuffix(again[again.rfind(" at ") :])) == (
        PHONE,
        f"{number} was already acknowledged by grace@acme.test",
    )


def test_a_known_number_is_counted_per_destination(org: Org) -> None:
    grace = _person(org, "Grace")
    number = _incident(org)
    _paged(org, number, grace)
    reconfigure(BUDGET_MESSAGES_PER_DESTINATION="3")
    answered = [inbound("ack", sender=PHONE, n=n)[1].sent for n in range(5)]
    assert [len(sent) for sent in answered] == [1, 1, 1, 0, 0]
