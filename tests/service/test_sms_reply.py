"""Replies to SMS pages on moto: who may reply, what each form does, what is texted back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from chalicelib.catalog import service as services
from chalicelib.contact import service as contacts
from chalicelib.directory import users
from chalicelib.directory.users import User
from chalicelib.incident import repository, service
from chalicelib.notification.channels import DeliveryResult
from chalicelib.notification.sms import SnsSmsChannel
from chalicelib.paging.sms_reply import InboundSms, handle_inbound, remember_page
from chalicelib.settings import get_settings
from tests.conftest import NOW, Org

PHONE = "+15550001111"


class Texts(SnsSmsChannel):
    """Records the replies instead of publishing them."""

    def __init__(self) -> None:
        super().__init__(settings=get_settings())
        self.sent: list[tuple[str, str]] = []

    def send_text(self, phone: str, text: str) -> DeliveryResult:
        self.sent.append((phone, text))
        return DeliveryResult.delivered("sms", "m-1")


def _person(org: Org, name: str, role: str = "responder", phone: str | None = PHONE) -> User:
    person = users.create_user(
        organization_id=org.organization_id, name=name, email=f"{name.lower()}@acme.test", now=NOW, role=role
    )
    if phone:
        contacts.create_method(
            organization_id=org.organization_id,
            user_id=person.user_id,
            method_type="sms",
            address=phone,
            label=None,
            now=NOW,
            proven_elsewhere=True,
            settings=get_settings(),
        )
    return person


def _incident(org: Org, title: str = "Checkout down") -> str:
    svc = services.create_service(organization_id=org.organization_id, name=f"svc {title}", now=NOW)
    created = service.create_incident(
        organization_id=org.organization_id,
        request=service.NewIncident(title=title, service_keys=[svc.service_key], severity="SEV1"),
        now=NOW,
        actor="seed",
        settings=get_settings(),
    )
    return created.incident_number


def _paged(org: Org, number: str, person: User, phone: str = PHONE) -> None:
    remember_page(
        phone=phone, organization_id=org.organization_id, incident_number=number, user_id=person.user_id, now=NOW
    )


def _reply(body: str, sender: str = PHONE, message_id: str = "in-1") -> tuple[str | None, Texts]:
    texts = Texts()
    return handle_inbound(
        InboundSms(message_id, sender, body), NOW + timedelta(minutes=1), texts, settings=get_settings()
    ), texts


def _status(org: Org, number: str) -> Any:
    return repository.get_incident(org.organization_id, number).status


def _acknowledged(org: Org, number: str) -> bool:
    return repository.get_incident(org.organization_id, number).acknowledged_at is not None


def test_a_verified_sender_acknowledges_the_latest_page_and_is_told(org: Org) -> None:
    grace = _person(org, "Grace")
    number = _incident(org)
    _paged(org, number, grace)
    answer, texts = _reply("ack")
    assert answer == f"{number} acknowledged by grace@acme.test."
    assert texts.sent == [(PHONE, answer)]
    assert _acknowledged(org, number)
    titles = [e.title or "" for e in repository.get_with_timeline(org.organization_id, number).timeline]
    assert any("via SMS" in title for title in titles)
    # Again: nothing to do, and said so.
    again, _ = _reply("4", message_id="in-2")
    assert again == f"{number} was already acknowledged by grace@acme.test at 12:01 UTC."


def test_a_number_names_the_incident_and_6_resolves(org: Org) -> None:
    grace = _person(org, "Grace")
    first = _incident(org, "First")
    second = _incident(org, "Second")
    _paged(org, first, grace)
    _paged(org, second, grace)  # the latest
    code = str(int(first.rsplit("-", 1)[1]))
    answer, _ = _reply(f"resolve {code}")
    assert answer is not None and first in answer
    assert _status(org, first) == "resolved"
    assert _status(org, second) != "resolved"
    answer, _ = _reply("6", message_id="in-2")
    assert _status(org, second) == "resolved"
    missing, _ = _reply("ack 999", message_id="in-3")
    assert missing == "No incident 999 was paged to this number in the last week; nothing was changed."


def test_an_unknown_number_changes_nothing_and_is_told(org: Org) -> None:
    grace = _person(org, "Grace")
    number = _incident(org)
    _paged(org, number, grace)
    answer, texts = _reply("ack", sender="+15559999999")
    assert answer == "This number is not a verified Tocsin SMS contact; nothing was changed."
    assert texts.sent == [("+15559999999", answer)]
    assert not _acknowledged(org, number)


def test_an_unverified_number_is_unknown(org: Org) -> None:
    grace = _person(org, "Grace", phone=None)
    contacts.create_method(
        organization_id=org.organization_id,
        user_id=grace.user_id,
        method_type="sms",
        address=PHONE,
        label=None,
        now=NOW,
        settings=get_settings(),
    )  # waits for its code
    number = _incident(org)
    _paged(org, number, grace)
    answer, _ = _reply("ack")
    assert answer is not None and "not a verified" in answer
    assert not _acknowledged(org, number)


def test_no_page_nonsense_and_a_viewer(org: Org) -> None:
    vera = _person(org, "Vera", role="viewer")
    nothing, _ = _reply("ack")
    assert nothing == "No incident was paged to this number in the last week; nothing was changed."
    number = _incident(org)
    _paged(org, number, vera)
    huh, _ = _reply("hello", message_id="in-2")
    assert huh is not None and huh.startswith("Tocsin did not understand that.")
    refused, _ = _reply("ack", message_id="in-3")
    assert refused == "Your role (viewer) can view incidents but not change them."
    assert not _acknowledged(org, number)


def test_a_shared_number_acts_for_the_person_paged(org: Org) -> None:
    grace = _person(org, "Grace")
    _person(org, "Hugo")  # the same number, also verified
    number = _incident(org)
    _paged(org, number, grace)
    answer, _ = _reply("ack")
    assert answer == f"{number} acknowledged by grace@acme.test."


def test_a_page_to_another_organization_is_not_the_senders(org: Org) -> None:
    from tests.conftest import make_org

    other = make_org("Other")
    grace = _person(org, "Grace")
    mallory = _person(other, "Mallory", phone="+15550002222")
    number = _incident(org)
    _paged(org, number, grace)
    # A record naming someone who does not own the number (say it was moved since) acts for nobody.
    _paged(org, number, mallory, phone="+15550002222")
    answer, _ = _reply("ack", sender="+15550002222")
    assert answer is not None and "not a verified" in answer
    assert not _acknowledged(org, number)


def test_an_sns_retry_neither_acts_nor_replies_twice(org: Org) -> None:
    grace = _person(org, "Grace")
    number = _incident(org)
    _paged(org, number, grace)
    first, _ = _reply("ack")
    assert first is not None
    retry, texts = _reply("ack")  # same inboundMessageId
    assert retry is None
    assert texts.sent == []


@pytest.mark.parametrize("expired", [True, False])
def test_a_page_record_expires_after_a_week(org: Org, expired: bool) -> None:
    grace = _person(org, "Grace")
    number = _incident(org)
    _paged(org, number, grace)
    texts = Texts()
    later = NOW + (timedelta(days=8) if expired else timedelta(days=6))
    answer = handle_inbound(InboundSms("in-9", PHONE, "ack"), later, texts, settings=get_settings())
    assert (answer is not None and "No incident" in answer) == expired
