"""The subscription lifecycle: subscribe (double opt-in), confirm, unsubscribe, and the managers'
list, count and remove.

Subscribing answers the same whatever the address's state, so the answer never tells whether it
was subscribed: a new address gets a pending subscriber and one confirmation email; a pending one
gets its new choice and the email again; a confirmed one gets nothing (to change its components,
unsubscribe and subscribe again). A pending webhook subscriber named again with another address
gets nothing either: its confirmation goes only to the address that created it. Every request
naming an address is counted against that address's hourly budget (the mailbox it reaches, all
pages) before anything is decided, so a 429 says nothing of its state either.

Nor does the time the answer takes: every case does the same work before answering. Two reads
(the guard, then the subscriber it names, or the id a new subscriber would take), one
TransactWriteItems of two items (puts for a new subscriber, updates for a refresh, condition
checks that the state read still holds otherwise), and one queued confirmation request naming who
asked; the worker sends only to a pending subscriber whose own address asked
(chalicelib/subscriber/confirmation.py).

Writes: a new subscriber and its guard (`ADDR#` / `URL#`) in one transaction, conditional on the
guard being absent or still naming the expired subscriber it replaces; confirming updates both in
one transaction; unsubscribing deletes both in one. Racing or retried requests re-read and try
again (`retry_on_conflict`), so an address never gets two subscribers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from chalicelib.delivery import targets
from chalicelib.directory.rules import normalize_email
from chalicelib.errors import NotFound, RateLimited
from chalicelib.ratelimit import service as ratelimit
from chalicelib.settings import Settings
from chalicelib.statuspage.repository import Structure, get_page, load_structure, page_id_for_slug
from chalicelib.statuspage.structure import check_components
from chalicelib.store import RetryableConflict, Transaction, TransactionCancelled, retry_on_conflict
from chalicelib.subscriber import confirmation, links, repository, rules
from chalicelib.subscriber.links import LinkPurpose, LinkRefused, SubscriberLink, verify
from chalicelib.subscriber.tables import CONFIRMED, EMAIL, PENDING, WEBHOOK, SubscriberItem, subscriber_key

EMAIL_BUCKET = "subscribe_email"
EMAIL_WINDOW_SECONDS = 3600


def page_not_found() -> NotFound:
    return NotFound("Status page not found.")


def public_structure(slug: str) -> Structure:
    """The page behind a public slug, with its components; 404 when there is none."""
    page_id = page_id_for_slug(slug)
    structure = load_structure(page_id) if page_id else None
    if structure is None or structure.page.slug != slug:
        raise page_not_found()
    return structure


# ---------------------------------------------------------------- subscribe


@dataclass(frozen=True)
class SubscribeInput:
    email: str
    component_ids: list[str]
    url: str | None = None


def check_input(structure: Structure, wanted: SubscribeInput, *, settings: Settings) -> SubscribeInput:
    """The request as stored: the address lowercased, components of this page, a deliverable URL."""
    email = normalize_email(wanted.email)
    component_ids = check_components(structure, wanted.component_ids)
    if wanted.url is not None:
        targets.validate_target_url(
            wanted.url,
            allow_local=targets.local_targets_allowed(settings=settings),
            resolve=targets.default_resolve,
            settings=settings,
        )
    return SubscribeInput(email=email, component_ids=component_ids, url=wanted.url)


def charge_address(email: str, now: datetime, *, settings: Settings) -> None:
    """One of the address's subscribe requests this hour (all pages); 429 past the budget."""
    decision = ratelimit.hit(
        category=EMAIL_BUCKET,
        identity=rules.email_bucket_identity(email),
        limit=settings.subscribe_emails_per_address_per_hour,
        window_seconds=EMAIL_WINDOW_SECONDS,
        now=now,
    )
    if not decision.allowed:
        raise RateLimited(
            "Too many subscription requests for this address; retry after the number of seconds in Retry-After.",
            headers={"Retry-After": str(decision.retry_after)},
        )


def subscribe(*, slug: str, wanted: SubscribeInput, now: datetime, settings: Settings) -> str:
    """Subscribe (or re-send the confirmation). Answers only the page's name, whatever the
    address's state, after the same work in every case (the module's docstring)."""
    structure = public_structure(slug)
    checked = check_input(structure, wanted, settings=settings)
    charge_address(checked.email, now, settings=settings)
    page_id = structure.page.page_id
    organization_id = structure.page.organization_id or ""
    guard_key = rules.guard_key(email=checked.email, url=checked.url)

    def attempt() -> SubscriberItem:
        guard = repository.get_item(page_id, guard_key)
        # Always a second read: the subscriber the guard names, or the id a new one would take.
        subscriber_id = (guard.subscriber_id if guard else None) or rules.new_subscriber_id(now)
        current = repository.get_item(page_id, subscriber_key(subscriber_id))
        decision = rules.decide(current, checked.email, now)
        if decision.refresh and current is not None and guard is not None:
            return _refresh(current, guard, checked, now)
        if decision.create:
            new_id = subscriber_id if guard is None else rules.new_subscriber_id(now)
            return _create(page_id, organization_id, new_id, guard, current, checked, now)
        assert current is not None and guard is not None  # neither create nor refresh: both exist
        return _unchanged(current, guard)

    subscriber = retry_on_conflict(attempt, what="subscription")
    confirmation.request(subscriber, requested_by=checked.email)
    return structure.page.name or slug


def _refresh(current: SubscriberItem, guard: SubscriberItem, checked: SubscribeInput, now: datetime) -> SubscriberItem:
    """The pending subscriber takes the new choice and waits again, and so does its guard."""
    expires_at = now + rules.PENDING_FOR
    tx = Transaction()
    tx.update(
        "subscriber",
        current,
        [SubscriberItem.component_ids.set(checked.component_ids), SubscriberItem.expires_at.set(expires_at)],
        condition=SubscriberItem.status == PENDING,
    )
    tx.update("guard", guard, [SubscriberItem.expires_at.set(expires_at)])
    _commit(tx)
    current.component_ids, current.expires_at = checked.component_ids, expires_at
    return current


def _unchanged(current: SubscriberItem, guard: SubscriberItem) -> SubscriberItem:
    """Nothing to change: the same one transaction of two items as the other cases (so the answer
    takes as long), checking that both are still as read; a change meanwhile makes the caller re-read."""
    tx = Transaction()
    for label, item in (("subscriber", current), ("guard", guard)):
        tx.check(label, SubscriberItem, item.page_id, item.item_key, SubscriberItem.version == item.version)
    _commit(tx)
    return current


def _commit(tx: Transaction) -> None:
    """Commit; any cancellation (a racing writer changed an item) makes the caller re-read."""
    try:
        tx.commit()
    except TransactionCancelled:
        raise RetryableConflict() from None


def _create(
    page_id: str,
    organization_id: str,
    subscriber_id: str,
    guard: SubscriberItem | None,
    expired: SubscriberItem | None,
    checked: SubscribeInput,
    now: datetime,
) -> SubscriberItem:
    expires_at = now + rules.PENDING_FOR
    subscriber = SubscriberItem(
        page_id,
        subscriber_key(subscriber_id),
        subscriber_id=subscriber_id,
        organization_id=organization_id,
        kind=WEBHOOK if checked.url is not None else EMAIL,
        email=checked.email,
        url=checked.url,
        component_ids=checked.component_ids,
        status=PENDING,
        created_at=now,
        expires_at=expires_at,
    )
    tx = Transaction()
    tx.put("subscriber", subscriber)  # new: version condition = does not exist
    if guard is None:
        guard = SubscriberItem(page_id, rules.guard_key(email=checked.email, url=checked.url))
    elif expired is not None:
        tx.delete("expired", expired)  # conditional on the version read
    # A new guard must not exist yet; a stale one must still be the version read.
    guard.subscriber_id = subscriber_id
    guard.expires_at = expires_at  # a guard of a pending subscriber expires with it
    tx.put("guard", guard)
    _commit(tx)
    return subscriber


# ---------------------------------------------------------------- confirm and unsubscribe


Outcome = Literal["confirmed", "already_confirmed", "unsubscribed", "not_subscribed"]


@dataclass(frozen=True)
class LinkResult:
    outcome: Outcome | None  # None: the link's button has something left to do
    page_name: str
    webhook_secret: str | None = None  # a confirmed webhook subscriber's signing secret


class LinkNotValid(Exception):
    """A token we did not sign for this purpose (400), or one whose subscriber is gone (404)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def read_link(token: str | None, purpose: LinkPurpose, *, settings: Settings) -> SubscriberLink:
    try:
        return verify(token or "", purpose, settings=settings)
    except LinkRefused:
        raise LinkNotValid(400) from None


def page_name(page_id: str) -> str | None:
    structure = load_structure(page_id)
    return (structure.page.name or "") if structure else None


def preview(token: str | None, purpose: LinkPurpose, now: datetime, *, settings: Settings) -> LinkResult:
    """What the link's page shows before its button is pressed: the page's name, and an outcome
    when the subscriber already is where the button leads (nothing left to press)."""
    link = read_link(token, purpose, settings=settings)
    name = page_name(link.page_id)
    if purpose == "confirm":
        current = repository.get_subscriber(link.page_id, link.subscriber_id, now)
        if name is None or current is None:
            raise LinkNotValid(404)
        return LinkResult("already_confirmed" if current.status == CONFIRMED else None, name)
    # As the POST does: any stored subscriber (an expired pending one too) is there to remove.
    stored = repository.get_item(link.page_id, subscriber_key(link.subscriber_id))
    return LinkResult("not_subscribed" if stored is None else None, name or "")


def confirm(token: str | None, now: datetime, *, settings: Settings) -> LinkResult:
    """Confirm the subscriber the link names; idempotent. 404 (LinkNotValid) when it expired or left."""
    link = read_link(token, "confirm", settings=settings)
    name = page_name(link.page_id)
    if name is None:
        raise LinkNotValid(404)

    def attempt() -> tuple[Outcome, SubscriberItem]:
        current = repository.get_subscriber(link.page_id, link.subscriber_id, now)
        if current is None:
            raise LinkNotValid(404)
        if current.status == CONFIRMED:
            return "already_confirmed", current
        guard = repository.get_item(link.page_id, rules.guard_key(email=current.email or "", url=current.url))
        if guard is None or guard.subscriber_id != current.subscriber_id:
            raise LinkNotValid(404)
        tx = Transaction()
        tx.update(
            "subscriber",
            current,
            [
                SubscriberItem.status.set(CONFIRMED),
                SubscriberItem.confirmed_at.set(now),
                SubscriberItem.expires_at.remove(),
            ],
            condition=SubscriberItem.status == PENDING,
        )
        tx.update("guard", guard, [SubscriberItem.expires_at.remove()])
        _commit(tx)
        return "confirmed", current

    outcome, subscriber = retry_on_conflict(attempt, what="subscription")
    secret = (
        links.webhook_secret(link.page_id, link.subscriber_id, settings=settings)
        if subscriber.kind == WEBHOOK
        else None
    )
    return LinkResult(outcome, name, webhook_secret=secret)


def _delete(current: SubscriberItem) -> None:
    """The subscriber, and its guard while the guard still names it, in one transaction
    (RetryableConflict when either changed meanwhile)."""
    guard = repository.get_item(current.page_id, rules.guard_key(email=current.email or "", url=current.url))
    tx = Transaction()
    tx.delete("subscriber", current)  # conditional on the version read
    if guard is not None and guard.subscriber_id == current.subscriber_id:
        tx.delete("guard", guard)  # conditional on the version read
    _commit(tx)


def unsubscribe(token: str | None, now: datetime, *, settings: Settings) -> LinkResult:
    """Remove the subscriber the link names; idempotent (a second time says it is not subscribed)."""
    link = read_link(token, "unsubscribe", settings=settings)

    def attempt() -> Outcome:
        # Expired pending subscribers go too: a link in an old email still cleans up.
        current = repository.get_item(link.page_id, subscriber_key(link.subscriber_id))
        if current is None:
            return "not_subscribed"
        _delete(current)
        return "unsubscribed"

    outcome = retry_on_conflict(attempt, what="subscription")
    return LinkResult(outcome, page_name(link.page_id) or "")


# ---------------------------------------------------------------- managers


def filtered(found: list[SubscriberItem], *, status: str | None, kind: str | None) -> list[SubscriberItem]:
    """The subscribers of that status and kind (None: any)."""
    return [s for s in found if (status is None or s.status == status) and (kind is None or s.kind == kind)]


def tally(found: list[SubscriberItem]) -> dict[str, int]:
    """How many in all, confirmed, pending, by email and by webhook."""
    counted = Counter(s.status for s in found) + Counter(s.kind for s in found)
    return {
        "total": len(found),
        "confirmed": counted[CONFIRMED],
        "pending": counted[PENDING],
        "email": counted[EMAIL],
        "webhook": counted[WEBHOOK],
    }


def list_subscribers(
    *, organization_id: str, page_id: str, status: str | None, kind: str | None, now: datetime
) -> list[SubscriberItem]:
    page = get_page(organization_id=organization_id, page_id=page_id)
    return filtered(repository.all_subscribers(page.page_id, now), status=status, kind=kind)


def count_subscribers(*, organization_id: str, page_id: str, now: datetime) -> dict[str, int]:
    return tally(list_subscribers(organization_id=organization_id, page_id=page_id, status=None, kind=None, now=now))


def remove_subscriber(*, organization_id: str, page_id: str, subscriber_id: str, now: datetime) -> None:
    page = get_page(organization_id=organization_id, page_id=page_id)

    def attempt() -> None:
        current = repository.get_subscriber(page.page_id, subscriber_id, now)
        if current is None:
            raise NotFound("Subscriber not found.")
        _delete(current)

    retry_on_conflict(attempt, what="subscriber")
