"""What a page digest says: its order (high urgency, then severity, then oldest), its headline and
the one-SMS text, as tables."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from chalicelib.notification import digest_text
from chalicelib.notification.digest_text import DigestEntry
from chalicelib.notification.sms import SMS_LIMIT, gsm7, septets

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def entry(
    number: int, severity: str = "SEV1", urgency: str = "high", minutes: int = 0, title: str = "Down"
) -> DigestEntry:
    return DigestEntry(f"INC-2026-{number:04d}", title, severity, urgency, T0 + timedelta(minutes=minutes))


@pytest.mark.parametrize(
    ("entries", "order"),
    [
        ([entry(1, "SEV3", "low"), entry(2, "SEV1")], [2, 1]),
        ([entry(1, "SEV2", "high"), entry(2, "SEV0", "low")], [1, 2]),  # urgency before severity
        ([entry(1, "SEV2", minutes=5), entry(2, "SEV0", minutes=9), entry(3, "SEV2", minutes=1)], [2, 3, 1]),
        ([entry(5, minutes=1), entry(4, minutes=1)], [4, 5]),  # same moment: by number
        ([entry(1, "CUSTOM", "low"), entry(2, "SEV4", "low")], [2, 1]),  # an unknown severity last
    ],
)
def test_high_urgency_first_then_the_most_severe_then_the_oldest(entries: list[DigestEntry], order: list[int]) -> None:
    assert [int(e.incident_number[-4:]) for e in digest_text.ordered(entries)] == order


def test_the_headline_names_every_incident_most_urgent_first() -> None:
    entries = [entry(3, "SEV3", "low"), entry(1, "SEV1"), entry(2, "SEV2", "high")]
    assert digest_text.headline(entries) == "3 more incidents: INC-2026-0001, INC-2026-0002, INC-2026-0003 (SEV1 first)"
    assert digest_text.headline(entries, listed=1) == "3 more incidents: INC-2026-0001 and 2 others (SEV1 first)"
    assert digest_text.headline([entry(7, "SEV2")]) == "1 more incident: INC-2026-0007 (SEV2)"


@pytest.mark.parametrize("count", [1, 2, 5, 12, 100, 1000])
def test_the_sms_text_is_one_gsm7_sms_with_as_many_numbers_as_fit(count: int) -> None:
    entries = [entry(n, minutes=n) for n in range(1, count + 1)]
    text = digest_text.short_text(entries)
    assert septets(text) <= SMS_LIMIT and gsm7(text) == text
    assert text.startswith(f"Tocsin: {count} more incident") and "INC-2026-0001" in text
    assert text.endswith("(SEV1 first)" if count > 1 else "(SEV1)")
    listed = text.count("INC-")
    assert listed == count or f"and {count - listed} other" in text


def test_the_notice_lists_each_incident_with_severity_and_title() -> None:
    entries = [entry(2, "SEV2", "high", title="Search slow"), entry(1, "SEV1", title="Checkout\n500s")]
    notice = digest_text.notice(entries, recipient_name="Ada", url="https://t.example/app/incidents", now=T0)
    assert notice.subject == "[Tocsin] 2 more incidents: INC-2026-0001, INC-2026-0002 (SEV1 first)"
    assert notice.text.splitlines()[-2:] == [
        "[SEV1][high] INC-2026-0001: Checkout 500s",
        "[SEV2][high] INC-2026-0002: Search slow",
    ]
    assert notice.short_text == "Tocsin: 2 more incidents: INC-2026-0001, INC-2026-0002 (SEV1 first)"
    assert notice.url == "https://t.example/app/incidents" and notice.recipient_name == "Ada"


def test_a_long_digest_lists_fifty_and_counts_the_rest() -> None:
    lines = digest_text.lines([entry(n, minutes=n) for n in range(1, 61)])
    assert len(lines) == digest_text.MAX_LISTED + 1 and lines[-1] == "... and 10 more."
