"""Public status pages: unauthenticated, cacheable JSON, the human HTML page and its history feeds
(Atom and RSS, chalicelib.statuspage.feeds; their errors are the JSON ones).

No envelope (like the inbound webhooks): the documents are the spec's public shapes; errors are
`{success: false, error: {code, message}}`, or a small HTML page for the HTML route (rendered by
chalicelib.api.error_render). Every answer carries Cache-Control, a strong ETag
(a 304 with an empty body when If-None-Match matches) and `Access-Control-Allow-Origin: *`.
Requests count against the caller address's `public_status` rate-limit bucket (not `anonymous`,
which failed API calls spend), charged by the request pipeline before a handler runs.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

from chalice.app import Request, Response

from chalicelib import clock
from chalicelib.api import negotiation
from chalicelib.api.credential_kinds import PUBLIC
from chalicelib.api.error_render import ErrorFamily, public_headers
from chalicelib.api.operation import Call, OperationGroup, per_address, query_lists
from chalicelib.api.validation import single_values
from chalicelib.errors import NotFound, ValidationFailed
from chalicelib.settings import Settings
from chalicelib.statuspage import feeds, public
from chalicelib.statuspage.public_models import (
    PublicComponents,
    PublicCursorQuery,
    PublicIncidents,
    PublicMaintenanceList,
    PublicSummary,
    PublicUptime,
)

logger = logging.getLogger("tocsin.public_status")
api = OperationGroup(__name__, tag="public-status")
PUBLIC_STATUS_BUCKET = per_address("public_status")

BASE = "/status/{slug}"
CACHE_CONTROL = "public, max-age=30"
PUBLIC_ERRORS = (400, 404, 429)
_CACHING = (
    " Unauthenticated. Cache-Control: public, max-age=30; a strong ETag, and 304 Not Modified with an empty "
    "body when If-None-Match matches it; Access-Control-Allow-Origin: *. 404 for an unknown slug (errors: no-store)."
)
_CURSOR = (
    " Newest first, 20 per page; pass next_cursor back as ?cursor= for older ones "
    "(400 for a cursor this listing did not issue)."
)

# The page's view, the cursor and the request's settings (Call.settings).
Document = Callable[[public.PageView, str | None, Settings], Any]
Build = Callable[[public.PageView, str | None, Settings], str]  # as the answer's body


def _etag(body: str) -> str:
    return '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'


def _matches(if_none_match: str | None, etag: str) -> bool:
    if not if_none_match:
        return False
    tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return "*" in tags or etag in tags


def _answer(request: Request, body: str, content_type: str, extra: dict[str, str]) -> Response:
    """A 200 (or its 304); errors are rendered by the PUBLIC_JSON / PUBLIC_HTML error families."""
    # A strong ETag names one representation: the same feed as text/xml gets its own.
    alternate = negotiation.base_type(content_type) == negotiation.TEXT_XML
    etag = _etag(content_type + body if alternate else body)
    headers: dict[str, str | list[str]] = {
        **extra,
        **public_headers(content_type),
        "ETag": etag,
        "Cache-Control": CACHE_CONTROL,
    }
    if _matches(request.headers.get("if-none-match"), etag):
        return Response(body="", status_code=304, headers=headers)
    return Response(body=body, status_code=200, headers=headers)


def _serve(
    call: Call,
    build: Build,
    *,
    content_type: str,
    allowed_query: frozenset[str],
    vary: str | None = None,
) -> Response:
    params = query_lists(call.request)
    unknown = sorted(set(params) - allowed_query)
    if unknown:
        raise ValidationFailed.for_fields([{"field": n, "message": "unknown query parameter"} for n in unknown])
    cursor = single_values(params).get("cursor")
    view = public.load_view(call.path["slug"])
    if view is None:
        raise NotFound("Status page not found.")
    return _answer(call.request, build(view, cursor, call.settings), content_type, {"Vary": vary} if vary else {})


def _public_read(
    path: str,
    operation_id: str,
    summary: str,
    build: Build,
    *,
    description: str,
    response: Any = None,
    cursor: bool = False,
    family: ErrorFamily = ErrorFamily.PUBLIC_JSON,
    content_type: str = "application/json",
    served_as: str | None = None,
    negotiated: bool = False,
) -> None:
    """A public status read: no credential, the caller address's `public_status` bucket, an ETag.
    `cursor`: the document pages with ?cursor=; `served_as`: the Content-Type, where it says more
    than the document's `content_type` (a charset); `negotiated`: text/xml instead when the Accept
    header prefers it (Vary: Accept)."""
    allowed_query = frozenset({"cursor"}) if cursor else frozenset()

    def serve(call: Call) -> Response:
        own = served_as or content_type
        if not negotiated:
            return _serve(call, build, content_type=own, allowed_query=allowed_query)
        served = _feed_type(call.request, own)
        return _serve(call, build, content_type=served, allowed_query=allowed_query, vary="Accept")

    api.raw(
        "GET",
        path,
        operation_id=operation_id,
        credential=PUBLIC,
        bucket=PUBLIC_STATUS_BUCKET,
        family=family,
        query=PublicCursorQuery if cursor else None,
        summary=summary,
        response=response,
        errors=PUBLIC_ERRORS,
        headers=("If-None-Match",),
        description=description,
        content_type=content_type,
    )(serve)


def _feed_type(request: Request, own: str) -> str:
    """The feed's own type, or text/xml when the request's Accept prefers it (chalicelib.api.negotiation)."""
    chosen = negotiation.choose(request.headers.get("accept"), negotiation.alternatives(own))
    return own if chosen == negotiation.base_type(own) else f"{chosen}; charset=utf-8"


def _json(document: Document) -> Build:
    return lambda view, cursor, settings: json.dumps(document(view, cursor, settings), separators=(",", ":"))


def _uptime(view: public.PageView, _: str | None, __: Settings) -> Any:
    from chalicelib.statuspage.uptime_public import document

    return document(view, clock.now())


_public_read(
    BASE + "/summary.json",
    "getPublicStatusSummary",
    "Public summary: overall status and counts",
    _json(lambda view, _, settings: public.summary(view, settings=settings)),
    response=PublicSummary,
    description="Overall status is the worst component status." + _CACHING,
)
_public_read(
    BASE + "/components.json",
    "getPublicStatusComponents",
    "Public components by section and group",
    _json(lambda view, _, __: public.components(view)),
    response=PublicComponents,
    description=_CACHING.strip(),
)
_public_read(
    BASE + "/incidents.json",
    "getPublicStatusIncidents",
    "Public incidents, newest first (query: cursor)",
    _json(lambda view, cursor, settings: public.incidents(view, cursor, settings=settings)),
    response=PublicIncidents,
    cursor=True,
    description=(_CURSOR + _CACHING).strip(),
)
_public_read(
    BASE + "/maintenance.json",
    "getPublicStatusMaintenance",
    "Public maintenance windows, newest first (query: cursor)",
    _json(lambda view, cursor, settings: public.maintenance(view, cursor, settings=settings)),
    response=PublicMaintenanceList,
    cursor=True,
    description=(_CURSOR + _CACHING).strip(),
)
_public_read(
    BASE + "/uptime.json",
    "getPublicStatusUptime",
    "Public daily uptime per component over the last 90 days",
    _json(_uptime),
    response=PublicUptime,
    description="Per component, 90 UTC days oldest first (the last is today, counted up to now) of "
    "{date, uptime_percent, worst_status}, and the 90-day figure. Down weights: major_outage 1, "
    "partial_outage 0.3, any other status 0; time before a component existed or with status unknown "
    "is no data (docs/STATUS_PAGES.md, Uptime history)." + _CACHING,
)


def _unique(documents: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    seen: set[str] = set()
    kept = []
    for document in documents:
        if document[key] not in seen:
            seen.add(document[key])
            kept.append(document)
    return kept


def _render(view: public.PageView, _: str | None, settings: Settings) -> str:
    from chalicelib.statuspage.page_html import render_status_page
    from chalicelib.statuspage.uptime_public import document

    # Active items first (they may be older than the first page of history), then recent history.
    incidents = _unique(
        [public.public_incident(view, i).model_dump(mode="json") for i in view.active_incidents]
        + public.incidents(view, None, settings=settings)["incidents"],
        "incident_id",
    )
    windows = _unique(
        [public.public_window(view, w).model_dump(mode="json") for w in view.active_windows]
        + public.maintenance(view, None, settings=settings)["maintenance"],
        "maintenance_id",
    )
    from chalicelib.statuspage.subscribe_form import subscribe_form

    summary = public.summary(view, settings=settings)
    components = public.components(view)
    return render_status_page(
        summary=summary,
        components=components,
        incidents=incidents,
        maintenance=windows,
        now=clock.now(),
        uptime=document(view, clock.now()),
        feeds=feeds.links(summary["page"]["url"]),
        # Relative to /status/{slug}: the form posts to /status/{slug}/subscribe on this origin.
        subscribe=subscribe_form(components, action=f"{view.structure.page.slug}/subscribe"),
    )


_public_read(
    BASE,
    "getPublicStatusPage",
    "The human status page (text/html, not JSON)",
    _render,
    family=ErrorFamily.PUBLIC_HTML,
    content_type="text/html",
    served_as="text/html; charset=utf-8",
    description="Server-rendered HTML: overall status, components with their 90-day uptime bars, "
    "active and recent incidents, maintenance in progress and upcoming. Errors are small HTML pages." + _CACHING,
)

_FEED = (
    " One entry per public incident (with its updates, newest first) or maintenance window: the "
    f"{feeds.FEED_SIZE} newest of each, newest change first. Entry ids are tag: URIs that survive a slug "
    "change. Errors are JSON. Served as text/xml instead when the Accept header prefers it (for clients "
    "that read only JSON and text/*); Vary: Accept."
)
_public_read(
    BASE + "/" + feeds.ATOM_NAME,
    "getPublicStatusHistoryAtom",
    "The page's history as an Atom 1.0 feed (application/atom+xml, not JSON)",
    lambda view, _, settings: feeds.render_atom(public.history_feed(view, settings=settings)),
    content_type="application/atom+xml",
    served_as=feeds.ATOM_CONTENT_TYPE,
    negotiated=True,
    description=(_FEED + _CACHING).strip(),
)
_public_read(
    BASE + "/" + feeds.RSS_NAME,
    "getPublicStatusHistoryRss",
    "The page's history as an RSS 2.0 feed (application/rss+xml, not JSON)",
    lambda view, _, settings: feeds.render_rss(public.history_feed(view, settings=settings)),
    content_type="application/rss+xml",
    served_as=feeds.RSS_CONTENT_TYPE,
    negotiated=True,
    description=(_FEED + _CACHING).strip(),
)
