"""Exports (docs/EXPORTS.md): incidents, alerts, notifications and shifts over a time range, as CSV
or NDJSON, one page of rows per request with `Link: <...>; rel="next"` while more remain (Lambda
behind API Gateway cannot stream); and short-lived signed download links for the console."""

from __future__ import annotations

import urllib.parse
from datetime import timedelta

from chalice.app import Response

from chalicelib.api import negotiation
from chalicelib.api.capability_tokens import EXPORT_LINK_TOKEN
from chalicelib.api.context import request_id
from chalicelib.api.credential_kinds import API_KEY_OR_SESSION
from chalicelib.api.error_render import ErrorFamily
from chalicelib.api.operation import CREDENTIAL_BUCKET, Call, OperationGroup, per_address, query_lists
from chalicelib.api.validation import check_no_body, parse_query
from chalicelib.exports import links
from chalicelib.exports.columns import COLUMNS
from chalicelib.exports.formats import CONTENT_TYPES, CSV_MEDIA_TYPE, FORMAT_OF, NDJSON_MEDIA_TYPE, ExportFormat, render
from chalicelib.exports.models import ExportLinkCreate, ExportLinkV1, ExportPageQuery, ExportQuery
from chalicelib.exports.requests import ExportRequest, checked_request, export_kind
from chalicelib.exports.service import export_page
from chalicelib.settings import Settings

api = OperationGroup(__name__, tag="exports")

SCOPE = "exports:read"
KINDS = "incidents, alerts, notifications or shifts"
_PAGING = (
    "Each answer is one page of at most `limit` rows, oldest first; while more remain it carries "
    '`Link: <url>; rel="next"` (the same request with `cursor`) and `X-Next-Cursor`. A page may hold fewer '
    "rows than `limit`, even none, and still have a next one: follow the links until there is none. Every CSV "
    "page starts with the header row. Columns, types and meanings: docs/EXPORTS.md."
)


def _answer(
    request: ExportRequest,
    export_format: ExportFormat,
    *,
    cursor: str | None,
    limit: int,
    base: str,
    settings: Settings,
) -> Response:
    page = export_page(request, cursor=cursor, limit=limit, settings=settings)
    headers: dict[str, str | list[str]] = {
        "Content-Type": CONTENT_TYPES[export_format],
        "Content-Disposition": f'attachment; filename="tocsin-{request.kind}.{export_format}"',
        "Cache-Control": "no-store",
        "X-Request-Id": request_id(),
    }
    if page.next_cursor is not None:
        separator = "&" if "?" in base else "?"
        following = f"{base}{separator}{urllib.parse.urlencode({'cursor': page.next_cursor})}"
        headers["Link"] = f'<{following}>; rel="next"'
        headers["X-Next-Cursor"] = page.next_cursor
    return Response(body=render(export_format, COLUMNS[request.kind], page.rows), status_code=200, headers=headers)


@api.raw(
    "GET",
    "/api/v1/exports/{kind}",
    operation_id="exportRecords",
    summary="Export incidents, alerts, notifications or shifts over a range as CSV or NDJSON, paginated",
    credential=API_KEY_OR_SESSION,
    bucket=CREDENTIAL_BUCKET,
    family=ErrorFamily.API,
    scope=SCOPE,
    query=ExportQuery,
    content_type="text/csv",
    description=f"`kind` is {KINDS}. {_PAGING} 400 VALIDATION_ERROR for a missing or bad range, a range over "
    "366 days, a filter the kind has no column for, or a cursor of another request; 404 for an unknown kind.",
    errors=(400, 403, 404),
    headers=("Accept",),
)
def export_records(call: Call) -> Response:
    kind = export_kind(call.path["kind"])
    check_no_body(call.request.raw_body)
    params = query_lists(call.request)
    query = parse_query(ExportQuery, params)
    request = checked_request(
        organization_id=call.principal.organization_id,
        kind=kind,
        since=query.since,
        until=query.until,
        filters=query.filter_values(),
    )
    # Without `format`, the Accept header chooses (CSV when it names neither, as without one).
    export_format = (
        query.format or FORMAT_OF[negotiation.choose(call.header("accept"), [CSV_MEDIA_TYPE, NDJSON_MEDIA_TYPE])]
    )
    kept = [(name, value) for name, values in params.items() if name != "cursor" for value in values]
    base = f"{call.settings.public_base_url.rstrip('/')}/api/v1/exports/{kind}?{urllib.parse.urlencode(kept)}"
    return _answer(request, export_format, cursor=query.cursor, limit=query.limit, base=base, settings=call.settings)


@api.operation(
    "POST",
    "/api/v1/exports/{kind}/links",
    operation_id="createExportLink",
    summary="A signed download link for an export, valid for a few minutes without a credential",
    scope=SCOPE,
    body=ExportLinkCreate,
    response=ExportLinkV1,
    status=201,
    errors=(400, 403, 404),
    description=f"`kind` is {KINDS}. The URL downloads the same export (range, filters, format; csv unless "
    "`format` says ndjson) without a bearer key until `expires_at` (1 to 60 minutes, default 15), for this "
    "organization only; it pages as the export does. Anyone holding the URL may download it until then.",
)
def create_export_link(call: Call) -> ExportLinkV1:
    kind = export_kind(call.path["kind"])
    body: ExportLinkCreate = call.body
    request = checked_request(
        organization_id=call.principal.organization_id,
        kind=kind,
        since=body.since,
        until=body.until,
        filters=body.filter_values(),
    )
    export_format: ExportFormat = body.format or "csv"
    link = links.new_link(request, export_format, lifetime=timedelta(minutes=body.expires_in_minutes), now=call.now)
    return ExportLinkV1(
        url=links.link_url(link, settings=call.settings),
        expires_at=links.expiry_time(link),
        kind=kind,
        format=export_format,
    )


@api.raw(
    "GET",
    "/exports/{token}",
    operation_id="downloadExport",
    summary="Download an export through its signed link (no credential: the token is one)",
    credential=EXPORT_LINK_TOKEN,
    bucket=per_address("anonymous"),
    family=ErrorFamily.WEBHOOK,  # outside /api/v1: the same bare {success: false, error} body as the calendar feed
    query=ExportPageQuery,
    content_type="text/csv",
    description=f"The URL POST /api/v1/exports/{{kind}}/links answered. {_PAGING} 404 NOT_FOUND for a link that "
    "is not one Tocsin signed (or was changed); 403 FORBIDDEN once it has expired.",
    errors=(400, 403, 404, 429),
)
def download_export(call: Call) -> Response:
    link: links.ExportLink = call.credential
    query = parse_query(ExportPageQuery, query_lists(call.request))
    base = f"{call.settings.public_base_url.rstrip('/')}/exports/{call.path['token']}"
    return _answer(
        link.request, link.export_format, cursor=query.cursor, limit=query.limit, base=base, settings=call.settings
    )
