"""Email action links: signed, bound to the recipient, incident and action, expiring (pure rules)."""

from __future__ import annotations

import base64
from datetime import timedelta

import pytest

from chalicelib.notification.email_links import (
    BAD_LINK,
    EXPIRED,
    LINK_LIFETIME,
    EmailLink,
    LinkRefused,
    new_link,
    sign,
    verify,
)
from chalicelib.settings import get_settings
from tests.conftest import NOW

KEY = b"k" * 32


def _link(action: str = "acknowledge") -> EmailLink:
    return new_link(
        organization_id="org_1",
        user_id="usr_1",
        incident_number="INC-2026-0001",
        action=action,
        now=NOW,  # type: ignore[arg-type]
    )


def _refusal(token: str, *, at: object = NOW, key: bytes = KEY) -> str:
    with pytest.raises(LinkRefused) as refused:
        verify(token, now=at, key=key, settings=get_settings())  # type: ignore[arg-type]
    return refused.value.reason


def test_a_signed_link_verifies_to_what_was_signed_until_it_expires() -> None:
    link = _link("resolve")
    token = sign(link, KEY, settings=get_settings())
    assert verify(token, now=NOW, key=KEY, settings=get_settings()) == link
    assert verify(token, now=NOW + LINK_LIFETIME - timedelta(seconds=1), key=KEY, settings=get_settings()) == link
    assert link.expires_at == int((NOW + timedelta(hours=24)).timestamp())
    assert _refusal(token, at=NOW + LINK_LIFETIME) == EXPIRED


def test_each_link_is_its_own_and_path_safe() -> None:
    first, second = _link(), _link()
    assert first.link_id != second.link_id
    token = sign(first, KEY, settings=get_settings())
    assert sign(first, KEY, settings=get_settings()) == token and sign(second, KEY, settings=get_settings()) != token
    assert all(ch.isalnum() or ch in "-_." for ch in token)


def test_another_key_or_a_changed_field_is_refused() -> None:
    token = sign(_link(), KEY, settings=get_settings())
    assert _refusal(token, key=b"other" * 8) == BAD_LINK
    version, body, signature = token.split(".")
    fields = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode()
    for original, forged in (("INC-2026-0001", "INC-2026-0002"), ("acknowledge", "resolve"), ("usr_1", "usr_2")):
        forged_body = base64.urlsafe_b64encode(fields.replace(original, forged).encode()).rstrip(b"=").decode()
        assert _refusal(f"{version}.{forged_body}.{signature}") == BAD_LINK
    flipped = signature[:-1] + ("A" if signature[-1] != "A" else "B")
    assert _refusal(f"{version}.{body}.{flipped}") == BAD_LINK


@pytest.mark.parametrize(
    "token",
    ["", "e1", "e1..", "e2.abc.def", "e1.abc.def.ghi", "e1.\u00e9\u00e9.x", "e1." + "a" * 700 + ".b", "e1.%%%.x"],
)
def test_malformed_tokens_are_refused(token: str) -> None:
    assert _refusal(token) == BAD_LINK


def test_a_well_signed_token_with_a_wrong_shape_is_refused() -> None:
    from chalicelib import signed_tokens

    for fields in (
        ["org", "usr", "INC-1", "escalate", "9999999999", "id"],
        ["org", "usr", "INC-1", "resolve", "x", "id"],
        ["org", "usr", "INC-1", "resolve", "9999999999"],
    ):
        body = base64.urlsafe_b64encode("\n".join(fields).encode()).rstrip(b"=").decode()
        token = signed_tokens.sign("e1", fields, KEY)
        assert token.split(".")[1] == body  # the same token format as before the signer moved
        assert _refusal(token) == BAD_LINK
