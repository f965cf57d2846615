"""The demo page's followers and incident templates, seeded with the page (never twice).

Followers go through the real subscribe flow (pending, a confirmation email in the outbox) and
are confirmed with the link that email carries, so the outbox shows what a reader receives; the
webhook follower posts to the local webhook sink, where its signed deliveries can be read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chalicelib.delivery import targets
from chalicelib.settings import get_settings
from chalicelib.statuspage import incident_templates
from chalicelib.subscriber import repository, rules, service
from chalicelib.subscriber.links import SubscriberLink, sign

FOLLOWER_EMAIL = "status-reader@example.com"
WEBHOOK_OWNER_EMAIL = "integrations@example.com"
WEBHOOK_SINK = "status-follower"
PENDING_EMAIL = "not-yet-confirmed@example.com"
FOLLOWERS: dict[str, Any] = {
    "confirmed_email": FOLLOWER_EMAIL,
    "pending_email": PENDING_EMAIL,
    "webhook_sink": WEBHOOK_SINK,
}
TEMPLATES = (
    (
        "Investigating elevated errors",
        "Elevated error rates",
        "We are investigating elevated error rates and will post an update within 30 minutes.",
        "investigating",
        "minor",
    ),
    (
        "Fixed and monitoring",
        "Issue resolved",
        "A fix has been deployed and we are monitoring the results.",
        "monitoring",
        None,
    ),
)


def seed_followers(*, page_id: str, slug: str, component_ids: dict[str, str], now: datetime) -> None:
    for name, title, body, status, impact in TEMPLATES:
        incident_templates.create_template(
            page_id=page_id, name=name, title=title, body=body, status=status, impact=impact, now=now
        )
    sink = f"{get_settings().public_base_url.rstrip('/')}/local/webhook-sink/{WEBHOOK_SINK}"
    wanted = [
        (service.SubscribeInput(email=FOLLOWER_EMAIL, component_ids=[]), True),
        (service.SubscribeInput(email=PENDING_EMAIL, component_ids=[component_ids["Checkout API"]]), False),
    ]
    if targets.local_targets_allowed(
        settings=get_settings()
    ):  # the local stage; elsewhere a loopback URL is refused, rightly
        wanted.append((service.SubscribeInput(email=WEBHOOK_OWNER_EMAIL, component_ids=[], url=sink), True))
    for subscriber, confirm in wanted:
        service.subscribe(slug=slug, wanted=subscriber, now=now, settings=get_settings())
        guard = repository.get_item(page_id, rules.guard_key(email=subscriber.email, url=subscriber.url))
        if confirm and guard is not None and guard.subscriber_id:
            service.confirm(
                sign(SubscriberLink("confirm", page_id, guard.subscriber_id), settings=get_settings()),
                now,
                settings=get_settings(),
            )
