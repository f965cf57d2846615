"""Operations: one decorator registers a route, its OpenAPI description, and the request pipeline.

The pipeline for every operation is the same: authenticate, charge the rate limit,
check the scope, parse the body and query, call the handler, envelope the result.
Every view, enveloped or raw, is wrapped once (`_guarded`): an error raised anywhere in it is
rendered here, in its route family's shape (chalicelib.api.error_render), and nowhere else.
Chalice would turn any exception that reaches it into its own 500.

Operations register here, not on the Chalice app: app.py mounts every route from the generated
table in chalicelib.api.route_table and imports a route module on its first request
(chalicelib.api.lazy), so a cold Lambda loads only what the request needs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chalice.app import Request, Response
from pydantic import BaseModel

from chalicelib import clock
from chalicelib.api import envelope, ratelimits
from chalicelib.api.credentials import authenticate
from chalicelib.api.error_render import ErrorFamily, render
from chalicelib.api.validation import check_no_body, parse_body, parse_query
from chalicelib.auth.principal import Principal
from chalicelib.errors import AppError, InternalError, ServiceUnavailable, Unauthorized, ValidationFailed
from chalicelib.ratelimit.window import RateLimitDecision
from chalicelib.store import throttled

logger = logging.getLogger("tocsin.api")

ALL_CONTENT_TYPES = ["*/*"]


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    tag: str
    scope: str | None
    public: bool = False
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    response: Any = None  # a pydantic model type, or None for no data schema
    status: int = 200
    errors: tuple[int, ...] = ()
    description: str | None = None
    headers: tuple[str, ...] = ()
    raw: bool = False  # answers outside the envelope (webhooks, public status)
    content_type: str = "application/json"  # of the success response
    error_family: ErrorFamily = ErrorFamily.API  # how its errors are rendered
    # A path parameter naming a user: a credential of that very user (a personal API key or a
    # session) may call without `scope`; everyone else needs it (contact methods, notification rules).
    self_param: str | None = None
    # False for the console's HTML pages and forms: routed like the rest, but not part of the
    # API, so the OpenAPI document (and the contract sweep that reads it) leaves them out.
    documented: bool = True
    # Other success statuses with the same body (an inbound webhook: 201 opened, 200 updated, 202 suppressed).
    other_statuses: tuple[int, ...] = ()


@dataclass
class Call:
    """What a handler receives: who is calling, the parsed input, and the time."""

    principal: Principal
    body: Any
    query: Any
    path: dict[str, str]
    request: Request
    now: datetime

    def header(self, name: str) -> str | None:
        value = self.request.headers.get(name)
        return str(value) if value is not None else None


@dataclass
class Result:
    """Lets a handler choose a status or add headers; plain return values use the operation's status."""

    data: Any
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Call], Any]
View = Callable[[Request, dict[str, str]], Response]


@dataclass(frozen=True)
class BoundOperation:
    """An operation and the view that answers it, given the request and the path parameters."""

    operation: Operation
    view: View
    module: str
    content_types: tuple[str, ...]


_BOUND: dict[tuple[str, str], BoundOperation] = {}


def _bind(operation: Operation, view: View, module: str, content_types: list[str]) -> None:
    key = (operation.method, operation.path)
    existing = _BOUND.get(key)
    if existing is not None and existing.module != module:
        raise ValueError(f"{operation.method} {operation.path} is declared in {existing.module} and {module}")
    _BOUND[key] = BoundOperation(operation, _guarded(operation, view), module, tuple(content_types))


def _guarded(operation: Operation, view: View) -> View:
    """The one place a view's exceptions are caught: rendered in the operation's error family."""

    def answer(request: Request, path_params: dict[str, str]) -> Response:
        try:
            return view(request, path_params)
        except AppError as error:
            return render(operation.error_family, error, path_params)
        except Exception as unexpected:
            return render(operation.error_family, unexpected_error(operation.operation_id, unexpected), path_params)

    return answer


def unexpected_error(
    where: str, error: Exception, headers: dict[str, str] | None = None, message: str | None = None
) -> AppError:
    """The answer to an exception no code expected, for every route family: 503
    SERVICE_UNAVAILABLE (with Retry-After) when DynamoDB kept throttling or failing transiently
    after botocore's retries, else 500 INTERNAL_ERROR (with `message`). Logged."""
    if throttled(error):
        logger.warning("storage throttled in %s", where, exc_info=error)
        return ServiceUnavailable(headers=headers)
    logger.error("unhandled error in %s", where, exc_info=error)
    return InternalError(message, headers=headers)


def bound(method: str, path: str) -> BoundOperation | None:
    return _BOUND.get((method, path))


def bound_operations() -> list[BoundOperation]:
    """Every operation of the modules imported so far, in registration order."""
    return list(_BOUND.values())


def operations() -> list[Operation]:
    """Every documented mounted operation: the route table's and those mounted beyond it (the local
    server's), the console's pages aside. Imports the route modules not loaded yet (for the
    OpenAPI document)."""
    from chalicelib.api import lazy

    lazy.load_all()
    mounted = {(row.method, row.path) for row in lazy.mounted_rows()}
    return [entry.operation for key, entry in _BOUND.items() if key in mounted and entry.operation.documented]


def source_ip(request: Request) -> str:
    identity = (request.context or {}).get("identity") or {}
    return str(identity.get("sourceIp") or "unknown")


def query_lists(request: Request) -> dict[str, list[str]]:
    params = request.query_params
    if not params:
        return {}
    return {name: list(params.getlist(name)) for name in params}


class ApiBlueprint:
    """The operations of one route module, all under one OpenAPI tag."""

    def __init__(self, import_name: str, tag: str) -> None:
        self.module = import_name
        self.tag = tag

    def operation(
        self,
        method: str,
        path: str,
        *,
        operation_id: str,
        summary: str,
        scope: str | None,
        body: type[BaseModel] | None = None,
        query: type[BaseModel] | None = None,
        response: Any = None,
        status: int = 200,
        errors: tuple[int, ...] = (),
        public: bool = False,
        description: str | None = None,
        headers: tuple[str, ...] = (),
        self_param: str | None = None,
    ) -> Callable[[Handler], Handler]:
        operation = Operation(
            method=method,
            path=path,
            operation_id=operation_id,
            summary=summary,
            tag=self.tag,
            scope=scope,
            public=public,
            body=body,
            query=query,
            response=response,
            status=status,
            errors=errors,
            description=description,
            headers=headers,
            self_param=self_param,
        )

        def register(handler: Handler) -> Handler:
            def view(request: Request, path_params: dict[str, str]) -> Response:
                return run(operation, handler, request, path_params)

            _bind(operation, view, self.module, ALL_CONTENT_TYPES)
            return handler

        return register


RawHandler = Callable[[Request, dict[str, str]], Response]


def raw_operation(
    blueprint: ApiBlueprint,
    method: str,
    path: str,
    *,
    operation_id: str,
    summary: str,
    description: str | None = None,
    body: type[BaseModel] | None = None,
    query: type[BaseModel] | None = None,
    response: Any = None,
    status: int = 200,
    errors: tuple[int, ...] = (),
    headers: tuple[str, ...] = (),
    content_types: list[str] | None = None,
    response_content_type: str = "application/json",
    error_family: ErrorFamily = ErrorFamily.API,
    documented: bool = True,
    other_statuses: tuple[int, ...] = (),
) -> Callable[[RawHandler], RawHandler]:
    """A route outside the API's envelope (inbound webhooks, public status): documented like the
    others, but the handler gets the raw request, checks its own query (`query` documents it) and
    answers in its own body shape. It raises errors like any view; `error_family` says how they
    are rendered."""
    operation = Operation(
        method=method,
        path=path,
        operation_id=operation_id,
        summary=summary,
        tag=blueprint.tag,
        scope=None,
        public=True,
        body=body,
        response=response,
        status=status,
        errors=errors,
        description=description,
        query=query,
        headers=headers,
        raw=True,
        content_type=response_content_type,
        error_family=error_family,
        documented=documented,
        other_statuses=other_statuses,
    )

    def register(handler: RawHandler) -> RawHandler:
        _bind(operation, handler, blueprint.module, content_types or ALL_CONTENT_TYPES)
        return handler

    return register


def run(operation: Operation, handler: Handler, request: Request, path_params: dict[str, str]) -> Response:
    now = clock.now()
    decision: RateLimitDecision | None = None
    try:
        principal, decision = _admit(operation, request, now, path_params)
        if operation.body is None:
            check_no_body(request.raw_body)
        body = parse_body(operation.body, request.raw_body) if operation.body else None
        query = parse_query(operation.query, query_lists(request)) if operation.query else None
        if operation.query is None and query_lists(request):
            # Unknown parameters are refused rather than silently ignored.
            names = sorted(query_lists(request))
            raise ValidationFailed.for_fields([{"field": n, "message": "unknown query parameter"} for n in names])
        result = handler(Call(principal, body, query, path_params, request, now))
    except AppError as error:
        # The rate-limit headers go on errors too; the view wrapper renders them.
        error.headers.update(decision.headers() if decision else {})
        raise
    except Exception as unexpected:
        headers = decision.headers() if decision else None
        raise unexpected_error(operation.operation_id, unexpected, headers) from unexpected
    rate_headers = decision.headers() if decision else {}
    if isinstance(result, Response):
        result.headers.update(rate_headers)
        return result
    if isinstance(result, Result):
        return envelope.success_response(
            result.data, status=result.status or operation.status, headers={**rate_headers, **result.headers}
        )
    return envelope.success_response(result, status=operation.status, headers=rate_headers)


_PUBLIC_PRINCIPAL = Principal(organization_id="", credential_kind="anonymous", scopes=frozenset())


def _admit(
    operation: Operation, request: Request, now: datetime, path_params: dict[str, str]
) -> tuple[Principal, RateLimitDecision]:
    """Authenticate and charge the right bucket. 401s charge the caller's address, so they carry headers too."""
    if operation.public:
        return _PUBLIC_PRINCIPAL, ratelimits.charge_anonymous(source_ip(request), now)
    try:
        principal = authenticate(authorization=request.headers.get("authorization"), now=now)
    except Unauthorized as error:
        decision = ratelimits.charge_anonymous(source_ip(request), now)
        error.headers.update(decision.headers())
        raise
    decision = ratelimits.charge_principal(principal, now)
    if _acting_on_self(operation, principal, path_params):
        return principal, decision
    try:
        principal.require(operation.scope)
    except AppError as error:
        error.headers.update(decision.headers())
        raise
    return principal, decision


def _acting_on_self(operation: Operation, principal: Principal, path_params: dict[str, str]) -> bool:
    """The credential is the very user the path names (a personal key or a session; a service
    account has no user), so the operation's scope is not needed. A read-only API key (only
    `:read` scopes) stays read-only on its owner too: it may read, never change (a leaked
    read-only key must not reroute its owner's pages)."""
    if operation.self_param is None or principal.user_id is None:
        return False
    if path_params.get(operation.self_param) != principal.user_id:
        return False
    changes = operation.method not in ("GET", "HEAD")
    read_only_key = principal.credential_kind == "api_key" and all(s.endswith(":read") for s in principal.scopes)
    return not (changes and read_only_key)
