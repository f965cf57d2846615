"""What a plain notice (a handoff notice) says on each channel: the email's text and HTML parts,
the Slack message (escaped), the SMS and the spoken words. No AWS, no network."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from chalicelib.notification import notices
from chalicelib.notification.notices import Notice
from chalicelib.notification.sms import septets
from chalicelib.notification.voice import say_twiml
from chalicelib.settings import get_settings, reset_settings

AT = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
EVIL = 'Primary <b>"EU"</b> & <!channel> <https://evil.example|click>'
NOTICE = Notice(
    subject=f"You are on call for {EVIL} from Mon 23 Nov 09:00 (Europe/Berlin)",
    text=f"You are on call for the schedule {EVIL}.\nFrom: Mon 23 Nov 2026 09:00 CET\nTimes are in Europe/Berlin.",
    short_text="Tocsin: you are on call for Primary from Mon 23 Nov 09:00 to Mon 30 Nov 09:00 (Europe/Berlin).",
    recipient_name="Ana <Ops>",
    url="https://tocsin.example/app/schedules/sch_1",
    link_label="Open the schedule",
    sent_at=AT,
)


def test_the_email_text_part_carries_the_words_as_they_are_and_the_link() -> None:
    email = notices.render_email(NOTICE)
    assert email.subject == NOTICE.subject
    assert email.text.startswith("Hi Ana <Ops>,\n\nYou are on call for the schedule Primary <b>")
    assert "From: Mon 23 Nov 2026 09:00 CET\nTimes are in Europe/Berlin." in email.text
    assert "Open the schedule: https://tocsin.example/app/schedules/sch_1" in email.text
    assert "Sent by Tocsin on Mon 23 Nov 2026, 08:00 UTC." in email.text
    assert '<time datetime="2026-11-23T08:00:00.000Z">Mon 23 Nov 2026, 08:00 UTC</time>' in email.html
    in_paris = notices.render_email(replace(NOTICE, time_zone="Europe/Paris"))
    assert "Sent by Tocsin on Mon 23 Nov 2026, 09:00 CET." in in_paris.text
    assert "/api/" not in email.text + email.html


def test_the_email_html_part_is_escaped_and_links_to_the_console() -> None:
    html = notices.render_email(NOTICE).html
    assert "<b>" not in html and "<!channel>" not in html
    assert "Primary &lt;b&gt;&quot;EU&quot;&lt;/b&gt; &amp; &lt;!channel&gt;" in html
    assert "Hi Ana &lt;Ops&gt;," in html
    assert '<a href="https://tocsin.example/app/schedules/sch_1"' in html and ">Open the schedule</a>" in html
    assert '<time datetime="2026-11-23T08:00:00.000Z">' in html  # the local outbox reads the time here
    assert 'name="viewport"' in html and "max-width:600px" in html  # readable on a phone


def test_an_email_without_link_or_name_says_neither() -> None:
    bare = Notice(subject="Line one\nline two", text="Words.", short_text="Words.")
    email = notices.render_email(bare)
    assert email.subject == "Line one line two"  # one header line
    assert email.text.startswith("Hi,\n\nWords.")
    assert "Open" not in email.text and "<a " not in email.html and "Sent by" not in email.text


def test_the_slack_message_escapes_every_value_and_links_only_to_the_console() -> None:
    message = notices.render_slack(NOTICE, "U123")
    assert message["channel"] == "U123" and message["unfurl_links"] is False
    [block] = message["blocks"]
    assert block["type"] == "section" and block["text"]["type"] == "mrkdwn"
    body = block["text"]["text"]
    assert body.startswith('*You are on call for Primary &lt;b&gt;"EU"&lt;/b&gt; &amp; &lt;!channel&gt;')
    assert "<!channel>" not in body and "<https://evil.example" not in body
    assert body.endswith("\n<https://tocsin.example/app/schedules/sch_1|Open the schedule>")
    assert message["text"] == notices.slack.escape(NOTICE.subject)
    assert "<" not in message["text"]


def test_a_long_text_stays_within_a_slack_section_as_sent() -> None:
    url = "https://x.example/app/schedules/" + "a" * 60
    message = notices.render_slack(Notice("<" * 400, "&" * 5000, "s", url=url), "U1")
    body = message["blocks"][0]["text"]["text"]
    assert len(body) <= 3000  # Slack counts the text as sent, escapes included
    cut = body.split("\n")[1]
    assert cut.endswith("&amp;\u2026") and len(cut) <= notices.MAX_SLACK_TEXT  # never inside an escape


def test_the_sms_is_the_short_text_on_one_line_within_160() -> None:
    assert notices.sms_text(NOTICE) == NOTICE.short_text
    long = Notice("s", "t", "Tocsin: “quoted” ✓ " + "x" * 200)
    text = notices.sms_text(long)
    assert septets(text) <= 160 and text.startswith('Tocsin: "quoted" x') and text.endswith("...")
    assert notices.sms_text(Notice("s", "t", "two\nlines")) == "two lines"


def test_the_call_says_the_short_text_with_words_for_dates_and_zones_twice() -> None:
    speech = notices.voice_speech(NOTICE)
    assert speech == (
        "This is Tocsin. You are on call for Primary from Monday 23 November 09:00 "
        "to Monday 30 November 09:00 (Europe Berlin)."
    )
    off = Notice("s", "t", "Tocsin: you are off call for Sun team from Sun 03 May 09:00 (America/New_York).")
    assert notices.voice_speech(off) == (
        "This is Tocsin. You are off call for Sun team from Sunday 3 May 09:00 (America New York)."
    )
    root = ElementTree.fromstring(say_twiml(speech, times=notices.VOICE_REPEATS))
    [say] = root.iter("Say")
    assert say.get("loop") == "2" and say.text == speech


def test_the_schedule_link_is_the_console_s_schedule_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBLIC_APP_URL", "https://console.example/")
    reset_settings()
    try:
        assert notices.schedule_url("sch_1", settings=get_settings()) == "https://console.example/schedules/sch_1"
        assert notices.schedule_url("a/b#c", settings=get_settings()) == "https://console.example/schedules/a%2Fb%23c"
    finally:
        monkeypatch.undo()
        reset_settings()
