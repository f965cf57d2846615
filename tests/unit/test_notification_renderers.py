"""What each channel says: TwiML (escaped, well-formed), Slack Block Kit (structure, escaping, the
console link), email parts (console link, never the JSON API), and the settings behind the links.
No AWS, no network."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.notification import email_ses, slack, voice
from chalicelib.notification.channels import CHANNEL_NAMES, CONTACT_CHANNELS, Notification, Recipient
from chalicelib.settings import from_environment, get_settings

AT = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
CONSOLE = "https://tocsin.example/app/incidents/INC-2026-0042"
EVIL = 'Pay <b>"down"</b> & </Say><Hangup/> ]]> <!channel>'
NOTE = Notification(
    incident_number="INC-2026-0042",
    title=EVIL,
    severity="SEV1",
    urgency="high",
    message="Bridge: <https://evil.example|click> & *now*",
    url=CONSOLE,
    at=AT,
    service_name="Checkout <EU>",
    assigned_to="Ana & Bo",
)
ANA = Recipient("u1", "Ana", "ana@example.com", "U1", "+15551234567")


def test_channel_names_and_the_page_operation_s_subset() -> None:
    assert CONTACT_CHANNELS == (
        "email",
        "slack",
        "sms",
        "voice",
        "teams",
        "mattermost",
        "ntfy",
        "discord",
        "google_chat",
        "pushover",
    )
    assert CHANNEL_NAMES == ("email", "slack")
    assert Recipient("u", None, None, None).phone is None


# ---------------------------------------------------------------- voice (TwiML)


def test_page_twiml_is_well_formed_and_says_the_title_escaped() -> None:
    twiml = voice.page_twiml(NOTE, "https://api.example/integrations/voice/callback?incident_number=X&y=1")
    root = ElementTree.fromstring(twiml)  # parses: every value was escaped
    assert root.tag == "Response"
    gather = root.find("Gather")
    assert gather is not None
    assert gather.attrib == {
        "numDigits": "1",
        "timeout": "10",
        "action": "https://api.example/integrations/voice/callback?incident_number=X&y=1",
        "method": "POST",
    }
    [say] = gather.findall("Say")
    assert say.get("loop") == "2"
    assert say.text is not None and EVIL in say.text
    assert "severity 1" in say.text and "I N C, 2 0 2 6, 0 0 4 2" in say.text
    assert "Press 4 to acknowledge, 6 to resolve, 8 to escalate." in say.text
    assert [element.tag for element in root] == ["Gather", "Say"]  # no smuggled <Hangup/>
    assert "<Hangup" not in twiml and "&lt;/Say&gt;&lt;Hangup/&gt;" in twiml and "&amp;y=1" in twiml


@pytest.mark.parametrize(
    ("title", "said"),
    [
        ("Disk\x00full\x1b[31m now", "Disk full [31m now"),
        ("Pay \U0001f525 down \U0001f680", "Pay down"),
        ("  a\n\tb  ", "a b"),
        ("", "no title"),
        ("x" * 500, "x" * 197 + "..."),
    ],
)
def test_the_spoken_title_drops_what_xml_or_speech_cannot_carry(title: str, said: str) -> None:
    note = Notification("INC-2026-0001", title, "SEV2", "low", None, CONSOLE)
    root = ElementTree.fromstring(voice.page_twiml(note, "https://x/cb"))
    text = root.find("Gather/Say")
    assert text is not None and text.text is not None
    assert f": {said}. Press 4" in text.text


@pytest.mark.parametrize(
    ("value", "spoken"),
    [("INC-2026-0042", "I N C, 2 0 2 6, 0 0 4 2"), ("INC-2026-7", "I N C, 2 0 2 6, 7"), ("--", "")],
)
def test_incident_numbers_are_read_digit_by_digit_in_groups(value: str, spoken: str) -> None:
    assert voice.spoken_digits(value) == spoken


def test_severity_is_said_as_words() -> None:
    assert voice.spoken_severity("SEV0") == "severity 0"
    assert voice.spoken_severity("sev3") == "severity 3"


def test_the_callback_is_the_public_voice_integration(monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 16 changed this on purpose: the URL also names the organization and the person called,
    # and carries an expiry and Tocsin's token over them, so a pressed key can act for that person.
    from chalicelib.settings import reset_settings

    monkeypatch.setenv("PUBLIC_BASE_URL", "https://api.tocsin.example/")
    reset_settings()
    try:
        url = voice.callback_url(
            organization_id="o1", incident_number="INC-2026-0042", user_id="u1", now=AT, settings=get_settings()
        )
        assert url.startswith(
            "https://api.tocsin.example/integrations/voice/callback?incident_number=INC-2026-0042"
            "&organization_id=o1&user_id=u1&expires="
        )
        assert "&token=" in url
    finally:
        monkeypatch.undo()
        reset_settings()


def test_say_twiml_escapes_and_repeats() -> None:
    twiml = voice.say_twiml("code <1 & 2>", times=2)
    assert twiml == '<Response><Say loop="2">code &lt;1 &amp; 2&gt;</Say></Response>'
    assert voice.say_twiml("hi") == "<Response><Say>hi</Say></Response>"


# ---------------------------------------------------------------- Slack Block Kit


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    found = []
    for block in blocks:
        if "text" in block:
            found.append(block["text"]["text"])
        found += [field["text"] for field in block.get("fields", [])]
        found += [element["text"]["text"] for element in block.get("elements", []) if "text" in element]
    return found


def test_slack_blocks_have_title_facts_message_and_an_open_incident_button() -> None:
    body = slack.render(NOTE, ANA)
    blocks = body["blocks"]
    assert [block["type"] for block in blocks] == ["section", "section", "section", "actions"]
    headline = blocks[0]["text"]
    assert headline["type"] == "mrkdwn"
    assert headline["text"].startswith(f":rotating_light: *<{CONSOLE}|INC-2026-0042>*: Pay &lt;b&gt;")
    assert [field["text"] for field in blocks[1]["fields"]] == [
        "*Severity*\nSEV1",
        "*Urgency*\nHigh",
        "*Service*\nCheckout &lt;EU&gt;",
        "*Assignee*\nAna &amp; Bo",
    ]
    assert blocks[2]["text"]["text"] == "Bridge: &lt;https://evil.example|click&gt; &amp; *now*"
    *_action_buttons, button = blocks[3]["elements"]
    assert button == {
        "type": "button",
        "action_id": "open_incident",
        "text": {"type": "plain_text", "text": "Open incident"},
        "url": CONSOLE,
        "style": "danger",
    }
    assert body["text"].startswith("[SEV1][high] INC-2026-0042: Pay &lt;b&gt;")


def test_slack_escapes_every_value_so_the_only_links_are_ours() -> None:
    body = slack.render(NOTE, ANA)
    for text in [*_texts(body["blocks"]), body["text"]]:
        assert "<!channel>" not in text and "<https://evil" not in text and "<b>" not in text
    links = [text for text in _texts(body["blocks"]) if "<" in text]
    assert links == [body["blocks"][0]["text"]["text"]]


def test_slack_unassigned_low_urgency_without_service_or_message() -> None:
    note = Notification("INC-2026-0003", "Slow", "SEV4", "low", None, CONSOLE)
    blocks = slack.render(note, ANA)["blocks"]
    assert [block["type"] for block in blocks] == ["section", "section", "actions"]
    assert blocks[0]["text"]["text"].startswith(":warning: ")
    assert blocks[1]["fields"][2:] == [
        {"type": "mrkdwn", "text": "*Service*\nNone"},
        {"type": "mrkdwn", "text": "*Assignee*\nUnassigned"},
    ]
    assert "style" not in blocks[2]["elements"][-1]


def test_slack_keeps_within_block_kit_limits() -> None:
    note = Notification("INC-2026-0003", "t" * 5000, "SEV1", "high", "m" * 5000, CONSOLE, None, "s" * 3000, "a" * 3000)
    blocks = slack.render(note, ANA)["blocks"]
    assert len(blocks[0]["text"]["text"]) <= 3000 and len(blocks[2]["text"]["text"]) <= 3000
    assert all(len(field["text"]) <= 2000 for field in blocks[1]["fields"])


# ---------------------------------------------------------------- email


def test_email_parts_link_to_the_console_and_carry_the_facts() -> None:
    rendered = email_ses.render(NOTE, ANA, settings=get_settings())
    assert f"Open the incident: {CONSOLE}\n" in rendered.text
    assert "Service: Checkout <EU>\n" in rendered.text and "Assignee: Ana & Bo\n" in rendered.text
    assert f'href="{CONSOLE}"' in rendered.html
    assert "<strong>Service:</strong> Checkout &lt;EU&gt;" in rendered.html
    assert "<strong>Assignee:</strong> Ana &amp; Bo" in rendered.html
    assert 'name="viewport"' in rendered.html and "<table" not in rendered.html
    for part in (rendered.text, rendered.html):
        assert "/api/v1/" not in part


def test_email_without_assignee_or_service_says_so() -> None:
    note = Notification("INC-2026-0002", "Down", "SEV3", "low", None, CONSOLE)
    rendered = email_ses.render(note, Recipient("u", None, "a@example.com", None), settings=get_settings())
    assert "Service: none\n" in rendered.text and "Assignee: Unassigned\n" in rendered.text
    assert "<strong>Assignee:</strong> Unassigned" in rendered.html


# ---------------------------------------------------------------- settings


def test_the_console_url_defaults_to_the_local_console_and_can_be_set() -> None:
    assert from_environment({"PUBLIC_BASE_URL": "http://127.0.0.1:8123/"}).app_url() == "http://127.0.0.1:8123/app"
    explicit = from_environment({"PUBLIC_APP_URL": "https://console.example/", "PUBLIC_BASE_URL": "https://api.x"})
    assert explicit.app_url() == "https://console.example"


def test_voice_defaults_point_the_local_stage_at_its_sink_and_others_at_twilio() -> None:
    local = from_environment({"TOCSIN_STAGE": "local", "PUBLIC_BASE_URL": "http://127.0.0.1:8123"})
    assert local.voice_api_url() == "http://127.0.0.1:8123/local/voice"
    assert local.voice_credentials() is not None
    prod = from_environment({"TOCSIN_STAGE": "prod", "API_KEY_HMAC_SECRET": "x"})
    assert prod.voice_api_url() == "https://api.twilio.com"
    assert prod.voice_credentials() is None
    configured = from_environment(
        {
            "TOCSIN_STAGE": "prod",
            "VOICE_ACCOUNT_SID": "AC123",
            "VOICE_AUTH_TOKEN": "secret",
            "VOICE_FROM_NUMBER": "+15550001111",
        }
    )
    assert configured.voice_credentials() == ("AC123", "secret", "+15550001111")


@pytest.mark.parametrize(
    "environment",
    [
        {"VOICE_AUTH_TOKEN": "local-voice-sink-token"},
        {"VOICE_ACCOUNT_SID": "AC00000000000000000000000000local"},
        {"VOICE_API_BASE_URL": "http://127.0.0.1:8000/local/voice"},
    ],
)
def test_dev_and_prod_refuse_the_local_voice_placeholders(environment: dict[str, str]) -> None:
    from chalicelib.settings import check_secrets

    for stage in ("dev", "prod"):
        settings = from_environment({"TOCSIN_STAGE": stage, "API_KEY_HMAC_SECRET": "x", **environment})
        with pytest.raises(RuntimeError, match="VOICE_"):
            check_secrets(settings)
    check_secrets(from_environment({"TOCSIN_STAGE": "local", **environment}))
