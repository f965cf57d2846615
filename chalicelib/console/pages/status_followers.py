"""A status page's followers (its subscribers), managed: the counts, the list (an email address or a
webhook URL, what it follows, its status, since when), filtered by status and kind, a hundred
at a time, and Remove for status:write (asking first).

Reads and the removal call chalicelib.subscriber.service, as the API's subscriber routes do: one
Query of the page's partition per page view, never a Scan.
"""

from __future__ import annotations

from chalicelib.console.list_links import page_link
from chalicelib.console.status_forms import SCOPE, page_item, page_path
from chalicelib.console.web import Confirmation, ConsolePages, Ctx, Page, Redirect
from chalicelib.statuspage import structure
from chalicelib.statuspage.pages import public_url
from chalicelib.statuspage.repository import item_id
from chalicelib.subscriber import service
from chalicelib.subscriber.tables import CONFIRMED, EMAIL, PENDING, WEBHOOK

console = ConsolePages(__name__, notices={"status_follower_removed": "Follower removed. Nothing more is sent to them."})

PAGE_SIZE = 100
STATUSES = ((CONFIRMED, "Confirmed"), (PENDING, "Pending (not confirmed yet)"))
KINDS = ((EMAIL, "Email"), (WEBHOOK, "Webhook"))


def _choice(ctx: Ctx, name: str, allowed: tuple[tuple[str, str], ...]) -> str | None:
    """A filter from the address; anything unknown means no filter (a GET page never refuses)."""
    value = ctx.arg(name)
    return value if value in dict(allowed) else None


def _offset(ctx: Ctx, total: int) -> int:
    raw = ctx.arg("offset")
    offset = int(raw) if raw.isdigit() and len(raw) < 7 else 0
    return offset - offset % PAGE_SIZE if offset < total else 0


def _link(base: str, status: str | None, kind: str | None, offset: int) -> str:
    return page_link(base, [(name, value) for name, value in (("status", status), ("kind", kind)) if value], offset)


@console.page("/status-pages/{page_id}/subscribers")
def show_followers(ctx: Ctx) -> Page:
    """Who follows a status page."""
    page = page_item(ctx)
    status, kind = _choice(ctx, "status", STATUSES), _choice(ctx, "kind", KINDS)
    everyone = service.list_subscribers(
        organization_id=ctx.organization_id, page_id=page.page_id, status=None, kind=None, now=ctx.now
    )
    matching = service.filtered(everyone, status=status, kind=kind)
    offset = _offset(ctx, len(matching))
    shown = matching[offset : offset + PAGE_SIZE]
    names = {item_id(c): c.name or "" for c in structure.list_structure(page_id=page.page_id).components}
    base = page_path(page.page_id, "/subscribers", settings=ctx.settings)
    return Page(
        "console/status_pages/followers.html",
        f"Followers · {page.name or 'Status page'}",
        section="status",
        context={
            "page": page,
            "here": page_path(page.page_id, settings=ctx.settings),
            "public_url": public_url(page.slug or "", settings=ctx.settings),
            "counts": service.tally(everyone),
            "total": len(everyone),
            "followers": [
                {
                    "item": s,
                    "follows": [names[c] for c in s.component_ids or [] if c in names],
                    "since": s.confirmed_at or s.created_at,
                }
                for s in shown
            ],
            "matching": len(matching),
            "first": offset + 1,
            "status": status or "",
            "kind": kind or "",
            "statuses": STATUSES,
            "kinds": KINDS,
            "newer_link": _link(base, status, kind, offset - PAGE_SIZE) if offset else None,
            "older_link": _link(base, status, kind, offset + PAGE_SIZE) if offset + PAGE_SIZE < len(matching) else None,
            "back": _link(base, status, kind, offset),
        },
    )


@console.action(
    "/status-pages/{page_id}/subscribers/{subscriber_id}/remove",
    scope=SCOPE,
    on_error=show_followers,
    confirm=Confirmation(
        question="Remove this follower?",
        consequence="Nothing more is sent to them about this page. They can subscribe again on the public page.",
        button="Remove follower",
    ),
)
def remove_follower(ctx: Ctx) -> Redirect:
    """Remove a follower of a status page."""
    page = page_item(ctx)
    service.remove_subscriber(
        organization_id=ctx.organization_id, page_id=page.page_id, subscriber_id=ctx.path["subscriber_id"], now=ctx.now
    )
    return Redirect(page_path(page.page_id, "/subscribers", settings=ctx.settings), notice="status_follower_removed")
