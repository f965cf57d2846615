"""The confirmation email's consumer on moto: sent once per message, to pending subscribers
only, with the signed confirm link; an SES failure goes back to SQS and a later receive sends."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from chalicelib import clock
from chalicelib.queue import consumers
from chalicelib.queue.messages import Message
from chalicelib.settings import get_settings
from chalicelib.statuspage import pages
from chalicelib.subscriber import confirmation, repository, service
from chalicelib.subscriber.links import SubscriberLink, sign, verify
from tests.conftest import NOW, Org


@pytest.fixture
def page_id(org: Org) -> Iterator[str]:
    with clock.frozen(NOW):
        yield pages.create_page(organization_id=org.organization_id, name="Acme", slug="acme", now=NOW).page_id


def subscribe(email: str = "ana@example.com", **extra: Any) -> str:
    service.subscribe(
        slug="acme",
        wanted=service.SubscribeInput(email=email, component_ids=[], **extra),
        now=NOW,
        settings=get_settings(),
    )
    [subscriber] = [s for s in repository.all_subscribers(_page(), NOW) if s.email == email]
    return subscriber.subscriber_id or ""


def _page() -> str:
    from chalicelib.statuspage.repository import page_id_for_slug

    return page_id_for_slug("acme") or ""


def request_for(page_id: str, subscriber_id: str) -> Message:
    return Message(confirmation.CONFIRMATION_REQUESTED, "org", {"page_id": page_id, "subscriber_id": subscriber_id})


def emails() -> list[Any]:
    from moto.ses.models import ses_backends

    return list(ses_backends["123456789012"]["us-east-1"].sent_messages)


def test_the_consumer_is_registered_with_the_workers() -> None:
    import chalicelib.workers.handlers  # noqa: F401

    assert "chalicelib.subscriber.confirmation.on_confirmation_requested" in consumers.consumers_of(
        confirmation.CONFIRMATION_REQUESTED
    )


def test_one_email_per_message_with_a_confirm_link_for_that_subscriber(page_id: str) -> None:
    subscriber_id = subscribe()
    message = request_for(page_id, subscriber_id)
    assert consumers.handle(message, settings=get_settings()) is True
    assert consumers.handle(message, settings=get_settings()) is True  # redelivered: claimed, not sent twice
    [email] = emails()
    assert email.source == "tocsin@localhost.localdomain" and email.destinations["ToAddresses"] == ["ana@example.com"]
    token = email.body.split("/status/acme/confirm?token=", 1)[1].split('"', 1)[0]
    link = verify(token, "confirm", settings=get_settings())
    assert (link.page_id, link.subscriber_id) == (page_id, subscriber_id)
    assert "every component" in email.body and "48 hours" in email.body


def test_nothing_is_sent_to_a_confirmed_gone_or_expired_subscriber(page_id: str) -> None:
    confirmed = subscribe("bo@example.com")
    assert (
        service.confirm(
            sign(SubscriberLink("confirm", page_id, confirmed), settings=get_settings()), NOW, settings=get_settings()
        ).outcome
        == "confirmed"
    )
    expired = subscribe("cy@example.com")
    for subscriber_id in (confirmed, expired, "sub_" + "0" * 24, "nonsense"):
        with clock.frozen(NOW + timedelta(hours=49) if subscriber_id == expired else NOW):
            assert consumers.handle(request_for(page_id, subscriber_id), settings=get_settings()) is True
    assert emails() == []


def test_an_ses_failure_goes_back_to_sqs_and_a_later_receive_sends(page_id: str) -> None:
    from chalicelib import aws

    subscriber_id = subscribe()
    real = aws.client("ses")

    class Refusing:
        def send_email(self, **_: Any) -> Any:
            from botocore.exceptions import EndpointConnectionError

            raise EndpointConnectionError(endpoint_url="https://email.example")

    aws.set_client("ses", Refusing())
    message = request_for(page_id, subscriber_id)
    assert consumers.handle(message, settings=get_settings()) is False
    aws.set_client("ses", real)
    assert consumers.handle(message, settings=get_settings()) is True
    assert len(emails()) == 1
