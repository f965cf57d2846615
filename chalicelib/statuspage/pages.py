"""Status pages: create (claiming the slug), list, rename, change slug, delete.

The slug is the page's public URL and globally unique: a guard item in partition `SLUG#<slug>`
is put with a does-not-exist condition in the same transaction as the page, so two racing
creates with one slug end with one winner and no half-written page.
"""

from __future__ import annotations

from datetime import datetime
from types import EllipsisType

from chalicelib.errors import Conflict, NotFound
from chalicelib.queue.messages import Message, publish
from chalicelib.settings import Settings
from chalicelib.statuspage import rules
from chalicelib.statuspage.repository import get_page
from chalicelib.statuspage.tables import PAGE_KEY, SLUG_KEY, StatusPageItem, slug_partition
from chalicelib.store import RetryableConflict, Transaction, TransactionCancelled, delete_if, retry_on_conflict

# A deleted page's followers live in their own table; their consumer (chalicelib/subscriber)
# forgets them. The delay outlasts any request that read the page before it went (API Gateway
# gives up at 29 s), so a subscribe racing the delete is forgotten too.
STATUS_PAGE_DELETED_MESSAGE = "status_page.deleted"
FORGET_FOLLOWERS_AFTER_SECONDS = 60


def public_url(slug: str, *, settings: Settings) -> str:
    return f"{settings.public_base_url.rstrip('/')}/status/{slug}"


def _slug_taken(slug: str) -> Conflict:
    return Conflict("That slug is already used by another status page.", details={"slug": slug})


def _guard(slug: str, page_id: str, *, stored: bool = False) -> StatusPageItem:
    """A slug guard; `stored` for one already written (guards are written once, at version 1)."""
    guard = StatusPageItem(slug_partition(slug), SLUG_KEY, slug=slug, owner_page_id=page_id)
    if stored:
        guard.version = 1
    return guard


def create_page(*, organization_id: str, name: str, slug: str, now: datetime) -> StatusPageItem:
    rules.check_slug(slug)
    page = StatusPageItem(
        rules.new_id("page", now),
        PAGE_KEY,
        organization_id=organization_id,
        name=name,
        slug=slug,
        created_at=now,
        updated_at=now,
    )
    tx = Transaction()
    tx.put("page", page, condition=StatusPageItem.page_id.does_not_exist())
    tx.put("slug", _guard(slug, page.page_id), condition=StatusPageItem.page_id.does_not_exist())
    try:
        tx.commit()
    except TransactionCancelled as cancelled:
        if "slug" in cancelled.failed:
            raise _slug_taken(slug) from None
        raise
    return page


def list_pages(*, organization_id: str) -> list[StatusPageItem]:
    """Newest first; one Query on the sparse organization index."""
    return list(StatusPageItem.organization_index.query(organization_id, scan_index_forward=False))


def update_page(
    *,
    organization_id: str,
    page_id: str,
    now: datetime,
    name: str | EllipsisType = ...,
    slug: str | EllipsisType = ...,
) -> StatusPageItem:
    """Rename and/or move the page to a new slug; the old slug is released in the same transaction."""
    if slug is not ...:
        rules.check_slug(slug)

    def attempt() -> StatusPageItem:
        page = get_page(organization_id=organization_id, page_id=page_id, consistent=True)
        old_slug = page.slug or ""
        if name is not ...:
            page.name = name
        page.updated_at = now
        tx = Transaction()
        if slug is not ... and slug != old_slug:
            page.slug = slug
            tx.put("slug", _guard(slug, page_id), condition=StatusPageItem.page_id.does_not_exist())
            tx.delete(
                "old-slug", _guard(old_slug, page_id, stored=True), condition=StatusPageItem.owner_page_id == page_id
            )
        tx.put("page", page)  # PynamoDB adds the version condition and bumps it
        try:
            tx.commit()
        except TransactionCancelled as cancelled:
            if "slug" in cancelled.failed:
                raise _slug_taken(str(slug)) from None
            raise RetryableConflict() from None
        return page

    return retry_on_conflict(attempt, what="status page")


def delete_page(*, organization_id: str, page_id: str) -> None:
    """Delete the page and free its slug in one transaction, then the items under it, then tell the
    subscriber consumer to forget the page's followers. The public views read the page item first,
    so leftovers after a failure in the later steps are unreachable."""
    page = get_page(organization_id=organization_id, page_id=page_id, consistent=True)
    tx = Transaction()
    tx.delete("page", page)  # conditional on the version read
    tx.delete("slug", _guard(page.slug or "", page_id, stored=True), condition=StatusPageItem.owner_page_id == page_id)
    try:
        tx.commit()
    except TransactionCancelled:
        raise Conflict("The status page changed while it was being deleted; retry.") from None
    # One DeleteItem each (rare, and the role needs no BatchWriteItem).
    for item in StatusPageItem.query(page_id, attributes_to_get=["page_id", "item_key"]):
        item.delete(add_version_condition=False)
    deleted = Message(STATUS_PAGE_DELETED_MESSAGE, organization_id, {"page_id": page_id})
    publish(deleted, delay_seconds=FORGET_FOLLOWERS_AFTER_SECONDS)


def delete_item(item: StatusPageItem, what: str) -> None:
    """Delete one item under a page; 404 when it went in the meantime."""
    if not delete_if(item, StatusPageItem.item_key.exists(), add_version_condition=False):
        raise NotFound(f"{what} not found.")
