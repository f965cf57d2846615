"""The OpenAPI document and the catch-all that turns unknown routes into an enveloped 404."""

from __future__ import annotations

import json

from chalice.app import Blueprint, Response

from chalicelib.api import lazy
from chalicelib.api.context import current_request
from chalicelib.api.error_render import ErrorFamily, render
from chalicelib.errors import NotFound

meta = Blueprint(__name__)

# Keyed by the routes mounted beyond the table: the document lists the local server's while mounted.
_document_cache: dict[tuple[tuple[str, str], ...], str] = {}


@meta.route("/api/v1/openapi.json", methods=["GET"])
def openapi_document() -> Response:
    # The document itself, not enveloped: tools (Swagger UI, generators) read it as is.
    key = tuple(sorted((row.method, row.path) for row in lazy.extra_rows()))
    if key not in _document_cache:
        from chalicelib.api.openapi import build_document  # every route module: only for this document
        from chalicelib.settings import get_settings

        _document_cache[key] = json.dumps(build_document(get_settings().public_base_url))
    return Response(
        body=_document_cache[key],
        status_code=200,
        headers={"Content-Type": "application/json", "Cache-Control": "public, max-age=300"},
    )


ANY_METHOD = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]


@meta.route("/{proxy+}", methods=ANY_METHOD, content_types=["*/*"])
def unknown_route() -> Response:
    # Chalice passes no argument for a greedy `{proxy+}` segment; the concrete path is in the context.
    request = current_request() or meta.current_request
    path = (request.context or {}).get("path") or "that path"
    from chalicelib.settings import get_settings  # a view outside the pipeline: its own entry point

    return render(ErrorFamily.API, NotFound(f"No route matches {path}."), app_url=get_settings().app_url())
