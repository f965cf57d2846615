"""Signed subscriber links: what we sign verifies for its purpose only; anything else is refused."""

from __future__ import annotations

import pytest

from chalicelib.settings import get_settings
from chalicelib.subscriber.links import LinkRefused, SubscriberLink, sign, verify

KEY = b"k" * 32
LINK = SubscriberLink(purpose="unsubscribe", page_id="pg_1", subscriber_id="sub_abc")


def test_a_signed_link_verifies_for_its_purpose() -> None:
    assert verify(sign(LINK, KEY, settings=get_settings()), "unsubscribe", KEY, settings=get_settings()) == LINK


def test_a_link_for_one_purpose_is_refused_for_the_other() -> None:
    with pytest.raises(LinkRefused):
        verify(sign(LINK, KEY, settings=get_settings()), "confirm", KEY, settings=get_settings())


@pytest.mark.parametrize(
    "token",
    ["", "s1", "s1.a.b", "x1.a.b", "s1.é.b", "s1." + "a" * 500 + ".b"],
)
def test_malformed_tokens_are_refused(token: str) -> None:
    with pytest.raises(LinkRefused):
        verify(token, "unsubscribe", KEY, settings=get_settings())


def test_a_token_signed_with_another_key_or_altered_is_refused() -> None:
    token = sign(LINK, KEY, settings=get_settings())
    with pytest.raises(LinkRefused):
        verify(token, "unsubscribe", b"o" * 32, settings=get_settings())
    version, _, signature = token.split(".")
    other = sign(SubscriberLink("unsubscribe", "pg_2", "sub_abc"), KEY, settings=get_settings()).split(".")[1]
    with pytest.raises(LinkRefused):
        verify(f"{version}.{other}.{signature}", "unsubscribe", KEY, settings=get_settings())
