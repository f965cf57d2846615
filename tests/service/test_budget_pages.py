"""Pages through the outbound budget on moto (finding 3): a person's pages past the burst are
collected into one digest per channel and window, never dropped; 3 incidents all page at once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from chalicelib import clock
from chalicelib.incident import commands
from chalicelib.notification import deliveries, digests
from chalicelib.notification.channels import DeliveryResult, Recipient
from chalicelib.notification.service import Target, notify_targets
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org
from tests.service.test_escalation_runtime import drain
from tests.service.test_incident_service import principal
from tests.service.test_paging_rules import ADA_PHONE, ada, open_incident, providers, sent_sms, sqs, timeline_titles

__all__ = ["ada", "providers", "sqs"]  # fixtures


def burst(org: Org, setup: dict[str, Any], count: int, severity: str = "SEV1") -> tuple[list[str], list[Message]]:
    numbers, digest_messages = [], []
    for _ in range(count):
        number, left = open_incident(org, setup, severity)
        numbers.append(number)
        digest_messages += [m for m in left if m.message_type == digests.PAGE_DIGEST]
    return numbers, digest_messages


def test_three_incidents_page_all_three_at_once(org: Org, ada: dict[str, Any]) -> None:
    numbers, digest_messages = burst(org, ada, 3)
    texts = [text for phone, text in sent_sms() if phone == ADA_PHONE]
    assert [number for number in numbers if any(number in text for text in texts)] == numbers
    assert digest_messages == []
    assert all("Paged Ada by sms" in timeline_titles(org, number) for number in numbers)


def test_ten_in_a_burst_page_five_at_once_and_the_other_five_in_one_digest(org: Org, ada: dict[str, Any]) -> None:
    numbers, digest_messages = burst(org, ada, 10)
    texts = [text for phone, text in sent_sms() if phone == ADA_PHONE]
    assert len(texts) == 5 and all(number in text for number, text in zip(numbers[:5], texts, strict=True))
    (digest_message,) = digest_messages  # one message per person, channel and window
    due_at = clock.parse(digest_message.payload["due_at"])
    assert due_at == NOW + timedelta(minutes=10)  # the end of the burst window
    for number in numbers[5:]:  # every incident says what became of its page
        assert "Included Ada in their sms digest" in timeline_titles(org, number)
        assert "Paged Ada by sms" not in timeline_titles(org, number)

    with clock.frozen(due_at):
        digests.on_page_digest(digest_message, get_settings())
        digests.on_page_digest(digest_message, get_settings())  # delivered twice: sent once
    texts = [text for phone, text in sent_sms() if phone == ADA_PHONE]
    assert len(texts) == 6
    assert texts[-1] == f"Tocsin: 5 more incidents: {', '.join(numbers[5:])} (SEV1 first)"


def test_the_digest_lists_only_what_still_wants_the_person_most_urgent_first(org: Org, ada: dict[str, Any]) -> None:
    numbers, _ = burst(org, ada, 5)  # the burst spent
    later, digest_messages = burst(org, ada, 2, "SEV1")
    worst, more = burst(org, ada, 2, "SEV0")
    digest_messages += more
    commands.acknowledge(
        organization_id=org.organization_id, incident_number=worst[1], principal=principal(org), now=NOW
    )
    (digest_message,) = digest_messages
    with clock.frozen(NOW + timedelta(minutes=10)):
        digests.on_page_digest(digest_message, get_settings())
    text = [text for phone, text in sent_sms() if phone == ADA_PHONE][-1]
    assert text == f"Tocsin: 3 more incidents: {worst[0]}, {later[0]}, {later[1]} (SEV0 first)"
    assert worst[1] not in text and numbers[0] not in text


def test_nothing_left_to_tell_sends_nothing(org: Org, ada: dict[str, Any]) -> None:
    burst(org, ada, 5)
    late, (digest_message,) = burst(org, ada, 1)
    commands.change_status(
        organization_id=org.organization_id,
        incident_number=late[0],
        status="resolved",
        comment=None,
        principal=principal(org),
        now=NOW,
    )
    with clock.frozen(NOW + timedelta(minutes=10)):
        digests.on_page_digest(digest_message, get_settings())
    assert len(sent_sms()) == 5


def test_a_digest_that_comes_early_waits_for_the_rest(org: Org, ada: dict[str, Any]) -> None:
    burst(org, ada, 5)
    _, (digest_message,) = burst(org, ada, 1)
    drain()
    with clock.frozen(NOW + timedelta(minutes=2)):
        digests.on_page_digest(digest_message, get_settings())
    assert len(sent_sms()) == 5
    (again,) = [m for m in drain() if m.message_type == digests.PAGE_DIGEST]
    assert again.payload == digest_message.payload and ada["sqs"].delays[-1] == 8 * 60


def test_pages_after_the_digest_went_out_start_the_next_one(org: Org, ada: dict[str, Any]) -> None:
    """A scaled clock (the local stack) sends a digest before its window ends: a page that comes
    after it is never lost in the sealed one."""
    burst(org, ada, 5)
    _, (first,) = burst(org, ada, 1)
    with clock.frozen(NOW + timedelta(minutes=1)):
        deliveries.send_once(
            f"{first.payload['digest_key']}#sent",
            NOW,
            lambda: digests.send_digest(first.payload["digest_key"], org.organization_id, NOW, settings=get_settings()),
            final_attempt=True,
            what="page digest",
            where={},
        )
    after, (second,) = burst(org, ada, 1)
    assert second.payload["digest_key"] != first.payload["digest_key"]
    with clock.frozen(NOW + timedelta(minutes=10)):
        digests.on_page_digest(second, get_settings())
    assert sent_sms()[-1][1] == f"Tocsin: 1 more incident: {after[0]} (SEV1)"


class FailingSms:
    name = "sms"

    def send(self, notification: Any, recipient: Recipient) -> DeliveryResult:
        return DeliveryResult.provider_failed("sms", "SNS_Throttling", "throttled")


def test_a_page_the_provider_failed_gives_its_charge_back(org: Org, ada: dict[str, Any]) -> None:
    from chalicelib.incident import repository

    number, _ = open_incident(org, ada, "SEV1")
    incident = repository.get_incident(org.organization_id, number)
    person = Recipient(ada["user"].user_id, "Ada", None, None, phone=ADA_PHONE)
    for _ in range(8):  # eight failed attempts spend none of the burst
        notify_targets(
            incident=incident,
            recipient=person,
            targets=[Target("sms", person)],
            message=None,
            now=NOW,
            actor="test",
            providers={"sms": FailingSms()},
            settings=get_settings(),
        )
    burst(org, ada, 4)
    assert len(sent_sms()) == 5  # the first page and four more: the burst was all there
