"""One body in two media types: an XML document under its own type, or as `text/xml`.

Client generators know JSON, `application/octet-stream` and `text/*`; a response documented only
as `application/atom+xml` or `application/rss+xml` is dropped with a warning (openapi-python-client
does). So a route whose body is XML under an `application/*+xml` type also answers it as
`text/xml` (RFC 7303) when the request's Accept prefers that, and the OpenAPI document lists both
(chalicelib.api.openapi reads `alternatives`). Without an Accept header, or when it likes both
alike (`*/*`, a feed reader's list), the route's own type wins, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

TEXT_XML = "text/xml"
# An export's rows are one document in two media types too: CSV, or NDJSON (chalicelib.exports).
EXPORT_TYPES = ("text/csv", "application/x-ndjson")


def base_type(content_type: str) -> str:
    """`application/atom+xml; charset=utf-8` -> `application/atom+xml`."""
    return content_type.split(";", 1)[0].strip().lower()


def alternatives(content_type: str) -> list[str]:
    """The media types a route answering `content_type` serves, its own first."""
    own = base_type(content_type)
    if own.startswith("application/") and own.endswith("+xml"):
        return [own, TEXT_XML]
    if own in EXPORT_TYPES:
        return [own, *(other for other in EXPORT_TYPES if other != own)]
    return [own]


@dataclass(frozen=True)
class _Range:
    kind: str  # type, or "*"
    subtype: str  # subtype, or "*"
    q: float

    def specificity(self, media_type: str) -> int | None:
        """How closely this range names `media_type` (2 exact, 1 type/*, 0 */*), None if not at all."""
        kind, _, subtype = media_type.partition("/")
        if self.kind == "*":
            return 0
        if self.kind != kind:
            return None
        if self.subtype == "*":
            return 1
        return 2 if self.subtype == subtype else None


def _q(parameters: list[str]) -> float:
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                return min(max(float(value.strip()), 0.0), 1.0)
            except ValueError:
                return 1.0
    return 1.0


def _ranges(accept: str) -> list[_Range]:
    ranges = []
    for item in accept.split(","):
        media, *parameters = item.split(";")
        kind, slash, subtype = media.strip().lower().partition("/")
        if kind and slash and subtype:
            ranges.append(_Range(kind, subtype, _q(parameters)))
    return ranges


def _quality(ranges: list[_Range], media_type: str) -> float:
    """The q of the most specific range naming `media_type` (RFC 9110, 12.5.1); 0 when none does."""
    best: tuple[int, float] | None = None
    for media_range in ranges:
        specificity = media_range.specificity(media_type)
        if specificity is not None and (best is None or specificity > best[0]):
            best = (specificity, media_range.q)
    return best[1] if best is not None else 0.0


def choose(accept: str | None, offered: Sequence[str]) -> str:
    """The offered type the Accept header prefers; the first offered on a tie, without a header, or
    when it accepts none of them (the route answers its own type rather than 406, as it always has)."""
    ranges = _ranges(accept) if accept else []
    if not ranges:
        return offered[0]
    best, best_q = offered[0], _quality(ranges, offered[0])
    for media_type in offered[1:]:
        quality = _quality(ranges, media_type)
        if quality > best_q:
            best, best_q = media_type, quality
    return best
