"""The page call's callback URL and Twilio's request signature (notification/voice_link.py)."""

from __future__ import annotations

import urllib.parse
from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.notification import voice_link
from chalicelib.notification.voice_link import CallbackTarget

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
KEY = voice_link.token_key("app-secret")
TARGET = CallbackTarget("org1", "INC-2026-0042", "u1", voice_link.expiry_for(NOW))


def _query(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


def test_twilios_documented_example_signature() -> None:
    # Twilio's "Validating requests" example: this URL, these fields, this token -> this signature.
    params = {"CallSid": "CA1234567890ABCDE", "Caller": "+12349013030", "Digits": "1234", "From": "+12349013030"}
    params |= {"To": "+18005551212"}
    url = "https://mycompany.com/myapp.php?foo=1&bar=2"
    signature = voice_link.twilio_signature("12345", url, params.items())
    assert signature == "0/KCTR6DLpKmkAf8muzZqo1nDgQ="
    assert voice_link.signature_matches("12345", url, params.items(), signature)
    assert not voice_link.signature_matches("12345", url, params.items(), "")
    assert not voice_link.signature_matches("12346", url, params.items(), signature)
    assert not voice_link.signature_matches("12345", url, {**params, "Digits": "4"}.items(), signature)


def test_a_url_we_built_names_its_target_until_it_expires() -> None:
    url = voice_link.build_callback_url("https://api.example/", TARGET, KEY)
    assert url.startswith("https://api.example/integrations/voice/callback?incident_number=INC-2026-0042&")
    query = _query(url)
    assert voice_link.target_from_query(query, KEY, NOW) == TARGET
    assert voice_link.requested_url("https://api.example", query) == url
    assert voice_link.target_from_query(query, KEY, NOW + timedelta(minutes=59)) == TARGET
    assert voice_link.target_from_query(query, KEY, NOW + timedelta(hours=1, seconds=1)) is None


@pytest.mark.parametrize(
    "change",
    [
        {"user_id": "u2"},
        {"incident_number": "INC-2026-0043"},
        {"organization_id": "org2"},
        {"expires": str(TARGET.expires + 86400)},
        {"expires": "soon"},
        {"token": "0" * 64},
        {"token": ""},
    ],
)
def test_a_changed_field_or_token_is_not_ours(change: dict[str, str]) -> None:
    query = _query(voice_link.build_callback_url("https://api.example", TARGET, KEY)) | change
    assert voice_link.target_from_query(query, KEY, NOW) is None


def test_another_secret_or_a_missing_field_is_not_ours() -> None:
    query = _query(voice_link.build_callback_url("https://api.example", TARGET, KEY))
    assert voice_link.target_from_query(query, voice_link.token_key("other-secret"), NOW) is None
    for name in voice_link.QUERY_FIELDS:
        assert voice_link.target_from_query({k: v for k, v in query.items() if k != name}, KEY, NOW) is None


def test_the_rebuilt_url_keeps_our_order_and_drops_added_fields() -> None:
    url = voice_link.build_callback_url("https://api.example", TARGET, KEY)
    shuffled = dict(reversed(list(_query(url).items()))) | {"extra": "1"}
    assert voice_link.requested_url("https://api.example", shuffled) == url
