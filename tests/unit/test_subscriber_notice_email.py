"""A subscriber's notice email: its words in both parts, and the raw MIME message SES gets."""

from __future__ import annotations

import email
from email.message import Message
from email.policy import default
from typing import Any

import pytest

from chalicelib.settings import get_settings
from chalicelib.subscriber import notice_email
from chalicelib.subscriber.notice_content import Notice, read_notice

PAGE = {"page_id": "page_1", "name": "Acme Cloud", "slug": "acme", "url": "https://status.acme.test/status/acme"}
UNSUBSCRIBE = "https://status.acme.test/status/acme/unsubscribe?token=s1.abc.def"


def incident_notice(change: str = "updated", status: str = "identified", **extra: Any) -> Notice:
    subject = {
        "incident_id": "inc_1",
        "title": "Checkout <b>slow</b>",
        "status": status,
        "updates": [
            {
                "status": status,
                "body": "A bad index & a rollback.\nNext update in 30 minutes.",
                "published_at": "2026-11-22T12:30:00+00:00",
            },
            {"status": "investigating", "body": "Looking into it.", "published_at": "2026-11-22T12:00:00+00:00"},
        ],
        "affected_components": [
            {"component_id": "cmp_a", "name": "Checkout"},
            {"component_id": "cmp_b", "name": "API"},
        ],
        **extra,
    }
    payload = {"status_page": PAGE, "incident": subject, "change": change}
    return read_notice(kind="incident", message_id="m1", occurred_at="2026-11-22T12:30:00+00:00", payload=payload)


def maintenance_notice(change: str) -> Notice:
    subject = {
        "maintenance_id": "mnt_1",
        "title": "Database upgrade",
        "status": "scheduled",
        "scheduled_start": "2026-12-01T02:00:00+00:00",
        "scheduled_end": "2026-12-01T04:00:00+00:00",
        "affected_components": [],
    }
    payload = {"status_page": PAGE, "maintenance": subject, "change": change}
    return read_notice(kind="maintenance", message_id="m2", occurred_at="2026-11-22T12:30:00+00:00", payload=payload)


def test_an_incident_update_reads_well_in_text() -> None:
    rendered = notice_email.render(incident_notice(), unsubscribe_url=UNSUBSCRIBE, subscribed_to=["Checkout"])
    assert rendered.subject == "[Acme Cloud] Identified: Checkout <b>slow</b>"
    assert rendered.text == (
        "Acme Cloud status update\n"
        "\n"
        "Checkout <b>slow</b>\n"
        "Status: Identified\n"
        "Affected: Checkout, API\n"
        "\n"
        "A bad index & a rollback.\n"
        "Next update in 30 minutes.\n"
        "Posted Sun 22 Nov 2026, 12:30 UTC\n"
        "\n"
        "View the status page: https://status.acme.test/status/acme\n"
        "\n"
        "--\n"
        "You are receiving this because you subscribed to updates about Checkout on the Acme Cloud status page.\n"
        f"Unsubscribe: {UNSUBSCRIBE}\n"
    )


@pytest.mark.parametrize(
    ("names", "words"),
    [([], ""), (["API"], "API"), (["API", "Checkout"], "API and Checkout"), (["A", "B", "C"], "A, B and C")],
)
def test_a_list_of_names_reads_as_words(names: list[str], words: str) -> None:
    assert notice_email.words_list(names) == words


def test_the_components_a_subscriber_chose_are_named_in_the_footer() -> None:
    rendered = notice_email.render(incident_notice(), unsubscribe_url=UNSUBSCRIBE, subscribed_to=["API", "Checkout"])
    assert "subscribed to updates about API and Checkout on the Acme Cloud status page." in rendered.text
    assert "subscribed to updates about API and Checkout on the Acme Cloud status page." in rendered.html


def test_the_html_part_says_the_same_escaped() -> None:
    rendered = notice_email.render(incident_notice(), unsubscribe_url=UNSUBSCRIBE)
    html = rendered.html
    assert "Checkout &lt;b&gt;slow&lt;/b&gt;" in html and "<b>slow" not in html
    assert "A bad index &amp; a rollback." in html
    assert ">Identified</span>" in html and "Checkout, API" in html
    assert f'href="{PAGE["url"]}"' in html
    assert 'href="https://status.acme.test/status/acme/unsubscribe?token=s1.abc.def"' in html
    assert '<time datetime="2026-11-22T12:30:00+00:00">Sun 22 Nov 2026, 12:30 UTC</time>' in html
    assert "updates from the Acme Cloud status page" in html  # subscribed to the whole page


@pytest.mark.parametrize(
    ("change", "status_word", "sentence"),
    [
        (
            "scheduled",
            "Scheduled",
            "This maintenance is planned. We will email you again when it starts and when it ends.",
        ),
        ("started", "In progress", "This maintenance has started. We will email you again when it ends."),
        ("completed", "Completed", "This maintenance is over."),
        ("cancelled", "Cancelled", "This maintenance has been cancelled: it will not take place."),
    ],
)
def test_maintenance_notices_say_when_and_what_it_means(change: str, status_word: str, sentence: str) -> None:
    rendered = notice_email.render(maintenance_notice(change), unsubscribe_url=UNSUBSCRIBE)
    lines = rendered.text.splitlines()
    assert lines[2:5] == ["Database upgrade", f"Status: {status_word}", "When: Tue 1 Dec 2026, 02:00 to 04:00 UTC"]
    assert sentence in lines and "Affected:" not in rendered.text and "Posted" not in rendered.text
    assert sentence.replace(":", ":") in rendered.html


def parse(raw: bytes) -> Message:
    return email.message_from_bytes(raw, policy=default)


def test_the_raw_message_has_both_parts_and_the_one_click_unsubscribe_headers() -> None:
    rendered = notice_email.render(incident_notice(), unsubscribe_url=UNSUBSCRIBE)
    raw = notice_email.mime_message(
        rendered,
        sender="tocsin@localhost.localdomain",
        to="ann@example.com",
        page_name="Acme Cloud",
        unsubscribe_url=UNSUBSCRIBE,
    )
    message = parse(raw)
    assert message["From"] == "Acme Cloud status <tocsin@localhost.localdomain>"
    assert message["To"] == "ann@example.com"
    assert message["Subject"] == rendered.subject
    # Folded before the long URL (lines stay under 78 characters); the value is the URL in <>.
    assert message["List-Unsubscribe"].strip() == f"<{UNSUBSCRIBE}>"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message["Auto-Submitted"] == "auto-generated"
    assert message.get_content_type() == "multipart/alternative"
    text, html = message.iter_parts()  # type: ignore[attr-defined]
    assert (text.get_content_type(), html.get_content_type()) == ("text/plain", "text/html")
    assert text.get_content().replace("\r\n", "\n") == rendered.text
    assert html.get_content().replace("\r\n", "\n").rstrip("\n") == rendered.html
    assert all(len(line) <= 998 for line in raw.split(b"\r\n"))  # RFC 5322 line length


def test_non_ascii_names_and_titles_are_encoded_not_broken() -> None:
    notice = incident_notice(title="Zahlung schlägt fehl \u2013 支付")
    page_name = "Müller Café"
    rendered = notice_email.render(notice, unsubscribe_url=UNSUBSCRIBE)
    raw = notice_email.mime_message(
        rendered,
        sender="tocsin@localhost.localdomain",
        to="zoe@example.com",
        page_name=page_name,
        unsubscribe_url=UNSUBSCRIBE,
    )
    raw.decode("ascii")  # 7-bit on the wire
    message = parse(raw)
    assert message["Subject"] == "[Acme Cloud] Identified: Zahlung schlägt fehl \u2013 支付"
    assert message["From"].addresses[0].display_name == "Müller Café status"  # type: ignore[attr-defined]
    assert message["To"] == "zoe@example.com"


def test_an_address_ses_cannot_take_is_refused_without_asking_ses() -> None:
    ses = FakeSes()
    outcome = notice_email.send_notice(
        incident_notice(), to="zoë@example.com", unsubscribe_url=UNSUBSCRIBE, client=ses, settings=get_settings()
    )
    assert outcome.result == "refused" and ses.calls == []  # SES takes no non-ASCII local part


class FakeSes:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.calls: list[dict[str, Any]] = []

    def send_raw_email(self, **arguments: Any) -> dict[str, str]:
        self.calls.append(arguments)
        if self.error is not None:
            raise self.error
        return {"MessageId": "ses-1"}


def client_error(code: str, status: int) -> Exception:
    from botocore.exceptions import ClientError

    return ClientError(
        {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}, "SendRawEmail"
    )


@pytest.mark.parametrize(
    ("error", "result", "detail"),
    [
        (None, "sent", "ses-1"),
        (client_error("Throttling", 400), "retry", "SES_Throttling"),
        (client_error("InternalFailure", 500), "retry", "SES_InternalFailure"),
        (client_error("MessageRejected", 400), "refused", "SES_MessageRejected"),
        (client_error("AccountSendingPausedException", 400), "refused", "SES_AccountSendingPausedException"),
    ],
)
def test_what_an_ses_answer_means(error: Exception | None, result: str, detail: str) -> None:
    ses = FakeSes(error)
    outcome = notice_email.send(b"raw", sender="s@x.test", to="a@x.test", client=ses)
    assert (outcome.result, outcome.detail) == (result, detail)
    assert ses.calls == [{"Source": "s@x.test", "Destinations": ["a@x.test"], "RawMessage": {"Data": b"raw"}}]


def test_ses_unreachable_is_a_retry() -> None:
    from botocore.exceptions import EndpointConnectionError

    outcome = notice_email.send(
        b"raw", sender="s@x.test", to="a@x.test", client=FakeSes(EndpointConnectionError(endpoint_url="x"))
    )
    assert outcome.result == "retry"
