"""An export page's cursor: where the next page starts, signed and bound to its request.

A cursor is a token of chalicelib.signed_tokens (its own purpose key) carrying the organization,
the kind, the request's digest (range and filters) and the position: DynamoDB's key of the last
record read, or for shifts the schedule and the shift's place in it. A cursor that was changed,
that belongs to another organization or kind, or to another range or filter, is refused with
400: it would otherwise skip or repeat rows without saying so.
"""

from __future__ import annotations

import json
from typing import Any

from chalicelib import signed_tokens
from chalicelib.errors import ValidationFailed
from chalicelib.exports.requests import ExportRequest
from chalicelib.settings import Settings

VERSION = "x1"
MAX_CURSOR_LENGTH = 2000
_PURPOSE = b"tocsin export cursors"

Position = dict[str, Any]


def encode(request: ExportRequest, position: Position, *, settings: Settings) -> str:
    fields = [request.organization_id, request.kind, request.digest(), json.dumps(position, separators=(",", ":"))]
    return signed_tokens.sign(VERSION, fields, signed_tokens.purpose_key(_PURPOSE, secret=settings.api_key_hmac_secret))


def decode(request: ExportRequest, cursor: str, *, settings: Settings) -> Position:
    try:
        fields = signed_tokens.unsign(
            VERSION,
            cursor,
            signed_tokens.purpose_key(_PURPOSE, secret=settings.api_key_hmac_secret),
            max_length=MAX_CURSOR_LENGTH,
            field_count=4,
        )
    except signed_tokens.BadToken:
        raise bad_cursor() from None
    organization_id, kind, digest, position_json = fields
    if (organization_id, kind, digest) != (request.organization_id, request.kind, request.digest()):
        raise bad_cursor()
    try:
        position = json.loads(position_json)
    except ValueError:
        raise bad_cursor() from None
    if not isinstance(position, dict):
        raise bad_cursor()
    return position


def bad_cursor() -> ValidationFailed:
    return ValidationFailed.for_field(
        "cursor", "is not a cursor of this export (same kind, range and filters), or was changed"
    )
