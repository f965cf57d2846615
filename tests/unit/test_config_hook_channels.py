"""A person with a chat or push channel exports (the clean-clone `make run` found `tocsin config
export` failing on an ntfy method): the method and its rule step are written with the hint the
server shows, which names the method again on the next plan."""

from __future__ import annotations

from chalicelib.client import convert
from chalicelib.client import document as doc


def test_a_user_with_an_ntfy_method_and_step_converts() -> None:
    hint = "https://ntfy.sh/\u2026moke"
    raw = {
        "email": "ana@x.test",
        "name": "Ana",
        "role": "responder",
        "methods": [
            {"type": "email", "address": "ana@x.test", "label": "Email", "follows_account_email": True},
            {"type": "ntfy", "address": hint, "label": "Phone"},
            {"type": "pushover", "address": "uQiRz\u20261a2b", "label": None},
        ],
        "rules": {"high": [{"type": "ntfy", "address": hint, "delay_minutes": 0}], "low": []},
    }
    user = convert.user_of(raw)
    assert [(m.type, m.address, m.label) for m in user.contact_methods] == [
        ("ntfy", hint, "Phone"),
        ("pushover", "uQiRz\u20261a2b", None),
    ]
    assert [(s.type, s.address, s.delay_minutes) for s in user.notification_rules.high] == [("ntfy", hint, 0)]
    again = doc.User.model_validate(user.model_dump())
    assert again == user


def test_every_channel_type_of_the_service_is_a_document_type() -> None:
    from typing import get_args

    from chalicelib.contact.models import ContactType as ServiceTypes

    assert set(get_args(ServiceTypes)) == set(get_args(doc.ContactType))
