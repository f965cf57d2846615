"""Demo data: how each demo person is reached (contact methods and notification rules)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.settings import get_settings

# Ada's phone: verified SMS and voice. Numbers in 555-01xx are reserved for fiction.
ADA_PHONE = "+15555550100"


def seed_contact_methods(organization_id: str, people: list[Any], now: datetime) -> dict[str, dict[str, Any]]:
    """Ada: SMS at once and a call after 5 minutes for high urgency, email for low. Everyone
    else keeps the defaults (email, plus Slack when they have a Slack id); Linus has email only.
    Returns each person's methods and rules, as demo.json lists them."""
    from chalicelib.contact import service as contacts
    from chalicelib.contact.rules import Step

    ada = people[0]
    methods = {m.type: m for m in contacts.list_methods(organization_id=organization_id, user_id=ada.user_id, now=now)}
    for method_type in ("sms", "voice"):
        if method_type not in methods:
            methods[method_type] = contacts.create_method(
                organization_id=organization_id,
                user_id=ada.user_id,
                method_type=method_type,
                address=ADA_PHONE,
                label="Mobile",
                now=now,
                proven_elsewhere=True,
                settings=get_settings(),
            )
    current = contacts.get_rules(organization_id=organization_id, user_id=ada.user_id, now=now)
    if current.version <= 1:  # still the defaults: never undo what someone changed by hand
        contacts.put_rules(
            organization_id=organization_id,
            user_id=ada.user_id,
            high=[Step(methods["sms"].contact_method_id, 0), Step(methods["voice"].contact_method_id, 5)],
            low=[Step(methods["email"].contact_method_id, 0)],
            now=now,
        )
    facts: dict[str, dict[str, Any]] = {}
    for person in people:
        profile = contacts.get_rules(organization_id=organization_id, user_id=person.user_id, now=now)
        facts[person.user_id] = {
            "contact_methods": [
                {
                    "id": m.contact_method_id,
                    "type": m.type,
                    "address": m.address,
                    "label": m.label,
                    "verified": m.verified,
                }
                for m in profile.methods
            ],
            "notification_rules": {
                urgency: [
                    {
                        "contact_method_id": s.contact_method.contact_method_id,
                        "type": s.contact_method.type,
                        "delay_minutes": s.delay_minutes,
                    }
                    for s in profile.steps(urgency)
                ]
                for urgency in ("high", "low")
            },
        }
    return facts
