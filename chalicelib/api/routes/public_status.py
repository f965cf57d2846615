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

Document = Callable[[public.PageView, str | None], Any]


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
    build: Callable[[public.PageView, str | None], str],
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
    return _answer(call.request, build(view, cursor), content_type, {"Vary": vary} if vary else {})


def public_read(path: str, **declared: Any) -> Callable[[Callable[[Call], Response]], Callable[[Call], Response]]:
    """A public status read: no credential, the caller address's `public_status` bucket."""
    return api.raw("GET", path, credential=PUBLIC, bucket=PUBLIC_STATUS_BUCKET, **declared)


def _feed_type(request: Request, own: str) -> str:
    """The feed's own type, or text/xml when the request's Accept prefers it (chalicelib.api.negotiation)."""
    chosen = negotiation.choose(request.headers.get("accept"), negotiation.alternatives(own))
    return own if chosen == negotiation.base_type(own) else f"{chosen}; charset=utf-8"


def _json(document: Document) -> Callable[[public.PageView, str | None], str]:
    return lambda view, cursor: json.dumps(document(view, cursor), separators=(",", ":"))


@public_read(
    BASE + "/summary.json",
    operation_id="getPublicStatusSummary",
    family=ErrorFamily.PUBLIC_JSON,
    summary="Public summary: overall status and counts",
    response=PublicSummary,
    errors=PUBLIC_ERRORS,
    headers=("If-None-Match",),
    description="Overall status is the worst component status." + _CACHING,
)
def summary_json(call: Call) -> Response:
    return _serve(
        call,
        _json(lambda view, _: public.summary(view)),
        content_type="application/json",
        allowed_query=frozenset(),
    )


@public_read(
    BASE + "/components.json",
    operation_id="getPublicStatusComponents",
    family=ErrorFamily.PUBLIC_JSON,
    summary="Public components by section and group",
    response=PublicComponents,
    errors=PUBLIC_ERRORS,
    headers=("If-None-Match",),
    description=_CACHING.strip(),
)
def components_json(call: Call) -> Response:
    return _serve(
        call,
        _json(lambda view, _: public.components(view)),
        content_type="application/json",
        allowed_query=frozenset(),
    )


@public_read(
    BASE + "/incidents.json",
    operation_id="getPublicStatusIncidents",
    family=ErrorFamily.PUBLIC_JSON,
    query=PublicCursorQuery,
    summary="Public incidents, newest first (query: cursor)",
    response=PublicIncidents,
    errors=PUBLIC_ERRORS,
    headers=("If-None-Match",),
    description=(_CURSOR + _CACHING).strip(),
)
def incidents_json(call: Call) -> Response:
    return _serve(
        call,
        _json(public.incidents),
        content_type="application/json",
        allowed_query=frozenset({"cursor"}),
    )


@public_read(
    BASE + "/maintenance.json",
    operation_id="getPublicStatusMaintenance",
    family=ErrorFamily.PUBLIC_JSON,
    query=PublicCursorQuery,
    summary="Public maintenance windows, newest first (query: cursor)",
    response=PublicMaintenanceList,
    errors=PUBLIC_ERRORS,
    headers=("If-None-Match",),
    description=(_CURSOR + _CACHING).strip(),
)
def maintenance_json(call: Call) -> Response:
    return _serve(
        call,
        _json(public.maintenance),
        content_type="application/json",
        allowed_query=frozenset({"cursor"}),
    )


@public_read(
    BASE + "/uptime.json",
    operation_id="getPublicStatusUptime",
    family=ErrorFamily.PUBLIC_JSON,
    summary="Public daily uptime per component over the last 90 days",
    response=PublicUptime,
    errors=PUBLIC_ERRORS,
    headers=("If-None-Match",),
    description="Per component, 90 UTC days oldest first (the last is today, counted up to now) of "
    "{date, uptime_percent, worst_status}, and the 90-day figure. Down weights: major_outage 1, "
    "partial_outage 0.3, any other status 0; time before a component existed or with status unknown "
    "is no data (README: Uptime history)." + _CACHING,
)
def uptime_json(call: Call) -> Response:
    from chalicelib.statuspage.uptime_public import document

    return _serve(
        call,
        _json(lambda view, _: document(view, clock.now())),
        content_type="application/json",
        allowed_query=frozenset(),
    )


def _unique(documents: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    seen: set[str] = set()
    kept = []
    for document in documents:
        if document[key] not in seen:
            seen.add(document[key])
            kept.append(document)
    return kept


def _render(view: public.PageView, _: str | None) -> str:
    from chalicelib.statuspage.page_html import render_status_page
    from chalicelib.statuspage.uptime_public import document

    # Active items first (they may be older than the first page of history), then recent history.
    incidents = _unique(
        [public.public_incident(view, i).model_dump(mode="json") for i in view.active_incidents]
        + public.incidents(view, None)["incidents"],
        "incident_id",
    )
    windows = _unique(
        [public.public_window(view, w).model_dump(mode="json") for w in view.active_windows]
        + public.maintenance(view, None)["maintenance"],
        "maintenance_id",
    )
    from chalicelib.statuspage.subscribe_form import subscribe_form

    summary = public.summary(view)
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


@public_read(
    BASE,
    operation_id="getPublicStatusPage",
    family=ErrorFamily.PUBLIC_HTML,
    content_type="text/html",
    summary="The human status page (text/html, not JSON)",
    errors=PUBLIC_ERRORS,
    headers=("If-None-Match",),
    description="Server-rendered HTML: overall status, components with their 90-day uptime bars, "
    "active and recent incidents, maintenance in progress and upcoming. Errors are small HTML pages." + _CACHING,
)
def status_page(call: Call) -> Response:
    return _serve(
        call,
        _render,
        content_type="text/html; charset=utf-8",
        allowed_query=frozenset(),
    )


_FEED = (
    " One entry per public incident (with its updates, newest first) or maintenance window: the "
    f"{feeds.FEED_SIZE} newest of each, newest change first. Entry ids are tag: URIs that survive a slug "
    "change. Errors are JSON. Served as text/xml instead when the Accept header prefers it (for clients "
    "that read only JSON and text/*); Vary: Accept."
)


@public_read(
    BASE + "/" + feeds.ATOM_NAME,
    operation_id="getPublicStatusHistoryAtom",
    family=ErrorFamily.PUBLIC_JSON,
    content_type="application/atom+xml",
    summary="The page's history as an Atom 1.0 feed (application/atom+xml, not JSON)",
    errors=PUBLIC_ERRORS,
    headers=("If-None-Match",),
    description=(_FEED + _CACHING).strip(),
)
def history_atom(call: Call) -> Response:
    return _serve(
        call,
        lambda view, _: feeds.render_atom(public.history_feed(view)),
        content_type=_feed_type(call.request, feeds.ATOM_CONTENT_TYPE),
        allowed_query=frozenset(),
        vary="Accept",
    )


@public_read(
    BASE + "/" + feeds.RSS_NAME,
    operation_id="getPublicStatusHistoryRss",
    family=ErrorFamily.PUBLIC_JSON,
    content_type="application/rss+xml",
    summary="The page's history as an RSS 2.0 feed (application/rss+xml, not JSON)",
    errors=PUBLIC_ERRORS,
    headers=("If-None-Match",),
    description=(_FEED + _CACHING).strip(),
)
def history_rss(call: Call) -> Response:
    return _serve(
        call,
        lambda view, _: feeds.render_rss(public.history_feed(view)),
        content_type=_feed_type(call.request, feeds.RSS_CONTENT_TYPE),
        allowed_query=frozenset(),
        vary="Accept",
    )
