"""Download links: an export anyone holding the URL may fetch for a few minutes, without a bearer
key (a browser's download, a spreadsheet's "from web"), signed with chalicelib.signed_tokens.

A link is `{public_base_url}/exports/{token}`; the token carries the organization, the kind, the
range, the filters, the format and an expiry (at most MAX_LIFETIME after it was made), under an
HMAC-SHA256 keyed for this purpose alone. Anything changed in it (another organization, a longer
range, a later expiry) breaks the signature. The link pages like the API: a `Link: rel="next"`
header adds the cursor. It is not spent by use: whoever has it may fetch it until it expires, so
lifetimes are short.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from chalicelib import clock, signed_tokens
from chalicelib.errors import Forbidden, NotFound
from chalicelib.exports.formats import EXPORT_FORMATS, ExportFormat
from chalicelib.exports.requests import ALL_FILTERS, ExportRequest, checked_request, export_kind
from chalicelib.settings import Settings

VERSION = "d1"
MAX_TOKEN_LENGTH = 1200
DEFAULT_LIFETIME = timedelta(minutes=15)
MAX_LIFETIME = timedelta(minutes=60)
_PURPOSE = b"tocsin export download links"
_FIELDS = 6 + len(ALL_FILTERS)


@dataclass(frozen=True)
class ExportLink:
    request: ExportRequest
    export_format: ExportFormat
    expires_at: int  # Unix seconds


def _key(*, settings: Settings) -> bytes:
    return signed_tokens.purpose_key(_PURPOSE, secret=settings.api_key_hmac_secret)


def sign(link: ExportLink, *, settings: Settings) -> str:
    request = link.request
    fields = [request.organization_id, request.kind, clock.isoformat(request.since), clock.isoformat(request.until)]
    fields += [link.export_format, str(link.expires_at)]
    fields += [request.filters.get(name, "") for name in ALL_FILTERS]
    return signed_tokens.sign(VERSION, fields, _key(settings=settings))


def new_link(request: ExportRequest, export_format: ExportFormat, *, lifetime: timedelta, now: datetime) -> ExportLink:
    return ExportLink(request, export_format, int((now + min(lifetime, MAX_LIFETIME)).timestamp()))


def link_url(link: ExportLink, *, settings: Settings) -> str:
    return f"{settings.public_base_url.rstrip('/')}/exports/{sign(link, settings=settings)}"


def expiry_time(link: ExportLink) -> datetime:
    return datetime.fromtimestamp(link.expires_at, UTC)


def verify(token: str, *, now: datetime, settings: Settings) -> ExportLink:
    """The link a token carries: 404 when it is not one we signed, 403 when it has expired."""
    try:
        fields = signed_tokens.unsign(
            VERSION, token, _key(settings=settings), max_length=MAX_TOKEN_LENGTH, field_count=_FIELDS
        )
    except signed_tokens.BadToken:
        raise NotFound("No export has this address.") from None
    organization_id, kind, since, until, export_format, expires_at = fields[:6]
    if export_format not in EXPORT_FORMATS or not expires_at.isdigit():
        raise NotFound("No export has this address.")
    if now.timestamp() >= int(expires_at):
        raise Forbidden("This download link has expired: ask the console or the API for a new one.")
    filters: dict[str, str | None] = {name: value or None for name, value in zip(ALL_FILTERS, fields[6:], strict=True)}
    request = checked_request(
        organization_id=organization_id,
        kind=export_kind(kind),
        since=clock.parse(since),
        until=clock.parse(until),
        filters=filters,
    )
    chosen: ExportFormat = "csv" if export_format == "csv" else "ndjson"
    return ExportLink(request, chosen, int(expires_at))
