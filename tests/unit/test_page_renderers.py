"""What each medium carries of a page, within its limits (docs/PAGES.md): tables over a full page
(description, labels, source and runbook links, a zone), a bare one and an oversized one. No AWS."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.notification import email_ses, slack, sms, voice
from chalicelib.notification.channels import Notification, Recipient
from chalicelib.settings import get_settings

CONSOLE = "https://tocsin.example/app/incidents/INC-2026-0042"
SOURCE = "https://alertmanager.example/#/alerts?receiver=tocsin&filter=%7Balertname%3D%22HighErrorRate%22%7D"
RUNBOOK = "https://runbooks.example/checkout/high-error-rate"
DESCRIPTION = (
    "[firing] HighErrorRate checkout-api-1: Error rate above 5% for 10 minutes, see "
    "https://grafana.example/d/checkout. Customers see 500s.\n"
    "[firing] HighErrorRate checkout-api-2: Error rate above 5% for 10 minutes"
)
LABELS = (("alertname", "HighErrorRate"), ("env", "prod"), ("job", "checkout-api"))
FULL = Notification(
    incident_number="INC-2026-0042",
    title="High error rate on checkout",
    severity="SEV1",
    urgency="high",
    message="Escalation level 1: Checkout primary",
    url=CONSOLE,
    at=datetime(2026, 11, 27, 13, 5, tzinfo=UTC),
    service_name="Checkout",
    organization_id="org-1",
    description=DESCRIPTION,
    labels=LABELS,
    source_url=SOURCE,
    source_name="Alertmanager",
    runbook_url=RUNBOOK,
    opened_at=datetime(2026, 11, 27, 13, 3, tzinfo=UTC),
    time_zone="Europe/Paris",
)
BARE = Notification("INC-2026-0043", "Slow search", "SEV4", "low", None, CONSOLE.replace("42", "43"))
HUGE = replace(
    FULL,
    title="T" * 5000,
    message="&<>" * 2000,
    description="& <b>" * 5000,
    labels=tuple((f"label{i}", "v&" * 500) for i in range(6)),
    source_url="https://a.example/" + "|>" * 900,
    service_name="S" * 3000,
)
ANA = Recipient("usr-ana", "Ana", "ana@example.com", "U0ANA", "+15551234567")
VARIANTS = {"full": FULL, "bare": BARE, "huge": HUGE}
# Variants of one fact at a time: each line of a medium's table says what changes.
WITHOUT = {
    "no description": replace(FULL, description=None),
    "no runbook": replace(FULL, runbook_url=None),
    "no labels": replace(FULL, labels=()),
    "no source": replace(FULL, source_url=None, source_name=None),
    "long title": replace(FULL, title="Checkout returns 500 for every request from the EU region " * 10),
}


# ---------------------------------------------------------------- email


def test_the_plain_text_email_reads_well_in_a_plain_client() -> None:
    text = email_ses.render(FULL, ANA, settings=get_settings()).text
    head, _, rest = text.partition("\n\nEscalation level 1")
    assert head == (
        "Hi Ana,\n\n"
        "INC-2026-0042: High error rate on checkout\n"
        "Severity: SEV1, high urgency\n"
        "Service: Checkout\n"
        "Assignee: Unassigned\n"
        "Opened: Fri 27 Nov 2026, 14:03 CET"
    )
    assert f"\n\nDescription:\n{DESCRIPTION}\n" in text
    assert "\n\nLabels:\n  alertname: HighErrorRate\n  env: prod\n  job: checkout-api\n" in text
    assert f"\n\nOpen the incident: {CONSOLE}\nSource (Alertmanager): {SOURCE}\nRunbook: {RUNBOOK}\n" in text
    # One labelled line per action link, the section apart.
    actions = re.findall(r"^(Acknowledge|Resolve): (\S+)$", text, re.MULTILINE)
    assert [label for label, _ in actions] == ["Acknowledge", "Resolve"]
    assert all(url.startswith("http") and "/email-actions/" in url for _, url in actions)
    assert "\n\nAct from this email (each link asks you to confirm" in text
    assert text.endswith("\n\nPaged by Tocsin on Fri 27 Nov 2026, 14:05 CET.\n")
    assert "\n\n\n" not in text and "None" not in text and rest


@pytest.mark.parametrize(
    ("variant", "present", "absent"),
    [
        ("no description", ["Labels:", "Runbook:"], ["Description:"]),
        ("no runbook", ["Description:", "Source (Alertmanager):"], ["Runbook:"]),
        ("no labels", ["Description:", "Runbook:"], ["Labels:"]),
        ("no source", ["Runbook:", "Labels:"], ["Source ("]),
        ("long title", ["INC-2026-0042: Checkout returns 500", "Runbook:"], []),
    ],
)
def test_email_parts_table(variant: str, present: list[str], absent: list[str]) -> None:
    rendered = email_ses.render(WITHOUT[variant], ANA, settings=get_settings())
    for word in present:
        assert word in rendered.text, word
    for word in absent:
        assert word not in rendered.text, word
    assert rendered.subject.startswith("[SEV1][high] INC-2026-0042: ")
    assert "\n" not in rendered.subject


def test_a_bare_page_email_has_no_empty_sections() -> None:
    rendered = email_ses.render(BARE, Recipient("u", None, "a@example.com", None), settings=get_settings())
    for word in ("Description", "Labels", "Source", "Runbook", "Opened", "Acknowledge", "None"):
        assert word not in rendered.text and word not in rendered.html, word
    assert rendered.text.startswith("Hi,\n\nINC-2026-0043: Slow search\nSeverity: SEV4, low urgency\n")


def test_the_html_email_has_every_fact_escaped_and_only_http_links() -> None:
    html = email_ses.render(FULL, ANA, settings=get_settings()).html
    assert "<h3" in html and ">Description</h3>" in html and ">Labels</h3>" in html
    assert '<li style="' in html and ">env: prod</li>" in html
    assert f'href="{SOURCE.replace("&", "&amp;")}"' in html and f'href="{RUNBOOK}"' in html
    assert "<strong>Opened:</strong> Fri 27 Nov 2026, 14:03 CET" in html
    # One <time>: the footer's, which the local outbox reads as the time sent.
    assert re.findall(r"<time[^>]*>[^<]*</time>", html) == [
        '<time datetime="2026-11-27T13:05:00.000Z">Fri 27 Nov 2026, 14:05 CET</time>'
    ]
    huge = email_ses.render(HUGE, ANA, settings=get_settings()).html
    assert "<b>" not in huge and "&amp; &lt;b&gt;" in huge
    assert "(The rest is on the incident&#x27;s page.)" in huge


def test_a_long_description_is_cut_in_the_email_and_says_where_the_rest_is() -> None:
    text = email_ses.render(replace(FULL, description="word " * 3000), ANA, settings=get_settings()).text
    description = text.split("Description:\n", 1)[1].split("\n\n", 1)[0]
    assert len(description) <= email_ses.MAX_DESCRIPTION + 60
    assert description.endswith("\u2026\n(The rest is on the incident's page.)")


def test_times_follow_the_recipients_zone_across_daylight_saving() -> None:
    summer = replace(FULL, at=datetime(2026, 7, 1, 6, 0, tzinfo=UTC), opened_at=datetime(2026, 7, 1, 5, 59, tzinfo=UTC))
    for zone, opened, paged in [
        ("Europe/Paris", "Wed 1 Jul 2026, 07:59 CEST", "Wed 1 Jul 2026, 08:00 CEST"),
        ("America/Los_Angeles", "Tue 30 Jun 2026, 22:59 PDT", "Tue 30 Jun 2026, 23:00 PDT"),
        ("UTC", "Wed 1 Jul 2026, 05:59 UTC", "Wed 1 Jul 2026, 06:00 UTC"),
    ]:
        text = email_ses.render(replace(summer, time_zone=zone), ANA, settings=get_settings()).text
        assert f"Opened: {opened}\n" in text and f"Paged by Tocsin on {paged}.\n" in text, zone


# ---------------------------------------------------------------- Slack


def _section_texts(blocks: list[dict[str, Any]]) -> list[str]:
    texts = [block["text"]["text"] for block in blocks if "text" in block]
    texts += [field["text"] for block in blocks for field in block.get("fields", [])]
    texts += [element["text"] for block in blocks if block["type"] == "context" for element in block["elements"]]
    return texts


def test_slack_carries_the_facts_within_block_kit_limits() -> None:
    body = slack.render(FULL, ANA)
    blocks = body["blocks"]
    assert [block["type"] for block in blocks] == [
        "section",
        "section",
        "section",
        "section",
        "context",
        "section",
        "actions",
    ]
    assert blocks[1]["fields"][-1] == {"type": "mrkdwn", "text": "*Opened*\nFri 27 Nov 2026, 14:03 CET"}
    assert blocks[3]["text"]["text"].startswith("*Description*\n[firing] HighErrorRate checkout-api-1")
    assert blocks[4]["elements"] == [
        {"type": "mrkdwn", "text": "*Labels*  `alertname=HighErrorRate`  `env=prod`  `job=checkout-api`"}
    ]
    links = blocks[5]["text"]["text"]
    assert links == f"<{SOURCE.replace('&', '&amp;')}|Source: Alertmanager>  \u00b7  <{RUNBOOK}|Runbook>"
    # The buttons are the page's as before: Acknowledge, Resolve, Escalate and Open incident.
    assert [element["action_id"] for element in blocks[6]["elements"]] == [
        "tocsin_acknowledge",
        "tocsin_resolve",
        "tocsin_escalate",
        "open_incident",
    ]
    assert blocks[6]["elements"][-1]["url"] == CONSOLE


@pytest.mark.parametrize(
    ("variant", "types"),
    [
        ("no description", ["section", "section", "section", "context", "section", "actions"]),
        ("no runbook", ["section", "section", "section", "section", "context", "section", "actions"]),
        ("no labels", ["section", "section", "section", "section", "section", "actions"]),
        ("no source", ["section", "section", "section", "section", "context", "section", "actions"]),
        ("long title", ["section", "section", "section", "section", "context", "section", "actions"]),
    ],
)
def test_slack_blocks_table(variant: str, types: list[str]) -> None:
    note = WITHOUT[variant]
    blocks = slack.render(note, ANA)["blocks"]
    assert [block["type"] for block in blocks] == types
    links = [text for text in _section_texts(blocks) if "|Runbook>" in text or "|Source:" in text]
    assert bool(links) == bool(note.runbook_url or note.source_url)
    if note.source_url is None and links:
        assert links == [f"<{RUNBOOK}|Runbook>"]
    assert len(blocks[0]["text"]["text"]) <= slack.MAX_SECTION


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_slack_stays_within_its_limits_whatever_the_page_holds(variant: str) -> None:
    blocks = slack.render(VARIANTS[variant], ANA)["blocks"]
    assert len(blocks) <= 50
    for block in blocks:
        if block["type"] == "section":
            assert len(block.get("fields", [])) <= 10
            assert all(len(field["text"]) <= 2000 for field in block.get("fields", []))
            assert "text" not in block or len(block["text"]["text"]) <= 3000
        if block["type"] == "context":
            assert len(block["elements"]) <= 10 and all(len(e["text"]) <= 3000 for e in block["elements"])
    for text in _section_texts(blocks):
        # No escape is cut in half, and nothing the source wrote became markup.
        assert not re.search(r"&[a-z]*\u2026", text) and "<b>" not in text


def test_a_hostile_source_link_cannot_break_out_of_its_slack_link() -> None:
    blocks = slack.render(replace(FULL, source_url="https://a.example/x|<!channel>&y>z", runbook_url=None), ANA)[
        "blocks"
    ]
    [links] = [text for text in _section_texts(blocks) if "Source:" in text]
    assert links == "<https://a.example/x%7C&lt;!channel&gt;&amp;y&gt;z|Source: Alertmanager>"
    assert "<!channel>" not in str(blocks)


# ---------------------------------------------------------------- SMS


@pytest.mark.parametrize(
    ("variant", "expected"),
    [
        (
            "full",
            f"[SEV1] INC-2026-0042 Checkout: High error rate on checkout.\n{CONSOLE}\nReply 4 to ack, 6 to resolve.",
        ),
        ("bare", f"[SEV4] INC-2026-0043 Slow search.\n{BARE.url}\nReply 4 to ack, 6 to resolve."),
    ],
)
def test_the_sms_carries_severity_service_title_link_and_reply_words(variant: str, expected: str) -> None:
    text = sms.page_text(VARIANTS[variant])
    assert text == expected and sms.septets(text) <= sms.SMS_LIMIT


@pytest.mark.parametrize("variant", [*sorted(VARIANTS), *sorted(WITHOUT)])
def test_every_sms_is_one_gsm7_segment_without_the_extras(variant: str) -> None:
    note = {**VARIANTS, **WITHOUT}[variant]
    text = sms.page_text(note)
    assert sms.septets(text) <= sms.SMS_LIMIT and sms.gsm7(text.replace("\n", " ")) == text.replace("\n", " ")
    assert text.endswith(sms.REPLY_HINT)
    for extra in ("Description", "Runbook", RUNBOOK, "env=prod", SOURCE):
        assert extra not in text


# ---------------------------------------------------------------- voice


def test_the_call_says_the_service_and_the_descriptions_first_sentence_without_links() -> None:
    speech = voice.page_speech(FULL)
    assert speech == (
        "This is Tocsin. A severity 1 incident on Checkout, number I N C, 2 0 2 6, 0 0 4 2: "
        "High error rate on checkout. [firing] HighErrorRate checkout-api-1: Error rate above 5% for 10 "
        "minutes, see. Press 4 to acknowledge, 6 to resolve, 8 to escalate."
    )


@pytest.mark.parametrize(
    ("variant", "said", "not_said"),
    [
        ("full", ["on Checkout", "Error rate above 5%"], ["http", "grafana", "Customers see", "checkout-api-2"]),
        ("bare", ["A severity 4 incident, number", "Slow search."], [" on ", "[firing]"]),
        ("no description", ["on Checkout", "checkout. Press 4"], ["[firing]"]),
        ("huge", ["on SSSS"], ["https"]),
    ],
)
def test_voice_table(variant: str, said: list[str], not_said: list[str]) -> None:
    note = {**VARIANTS, **WITHOUT}[variant]
    twiml = voice.page_twiml(note, "https://api.example/cb?x=1")
    say = ElementTree.fromstring(twiml).find("Gather/Say")
    assert say is not None and say.text is not None
    for words in said:
        assert words in say.text, words
    for words in not_said:
        assert words not in say.text, words
    assert len(say.text) < 4096  # Twilio's <Say> limit
    assert "<b>" not in twiml  # what the alert wrote is escaped, never markup


def test_a_description_that_is_only_a_link_adds_nothing_to_the_call() -> None:
    speech = voice.page_speech(replace(FULL, description="https://grafana.example/d/abc"))
    assert speech.endswith("High error rate on checkout. Press 4 to acknowledge, 6 to resolve, 8 to escalate.")
