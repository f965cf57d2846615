"""Operations: what each route declares, once, and the registry of the route modules loaded so far.

An operation declares everything the request pipeline (chalicelib.api.pipeline) needs to answer
it: its credential kind (chalicelib.api.credential_kinds), the rate-limit bucket its requests
count against (`BucketRule`), its scope or role, its body and query models, its family (how its
errors look: chalicelib.api.error_render), its envelope, whether a create runs once per
Idempotency-Key, and its OpenAPI description. Handlers check no credential and charge no bucket.

A route module declares its operations through one `OperationGroup` (its operations, under one
OpenAPI tag). app.py mounts every route from the generated table (chalicelib.api.route_table)
and imports a route module on its first request (chalicelib.api.lazy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from chalice.app import Request, Response
from pydantic import BaseModel

from chalicelib.api.credential_kinds import API_KEY_OR_SESSION, CredentialKind
from chalicelib.api.error_render import ErrorFamily
from chalicelib.auth.principal import Principal
from chalicelib.errors import AppError
from chalicelib.settings import Settings


class Envelope(StrEnum):
    API = "api"  # the handler returns data (or a Result): the pipeline wraps it in the success envelope
    RAW = "raw"  # the handler returns the Response: a provider's format, TwiML, a page, a feed


@dataclass(frozen=True)
class BucketRule:
    """Which rate-limit bucket an operation's requests count against: one per caller address
    (`address`, its category), charged before the credential is checked; or the one the credential
    names (`credential`: the API key's, the session's, the routing key's...); or none."""

    address: str | None = None
    credential: bool = False


CREDENTIAL_BUCKET = BucketRule(credential=True)
NO_BUCKET = BucketRule()


def per_address(category: str) -> BucketRule:
    return BucketRule(address=category)


@dataclass(frozen=True)
class Idempotent:
    """A create that runs at most once per Idempotency-Key and payload (chalicelib.api.idempotent).
    `place`: the path parameter naming where it creates (one integration's rules, one page's
    templates), so a key never matches across places; `by_alias`: the payload as the client
    spelled its fields."""

    place: str | None = None
    by_alias: bool = False


# An operation's own answer to an error, before its family's (None: the family's): the status
# page's subscribe form answers HTML pages where its JSON callers get JSON. It gets the request's
# settings too (the pipeline's, read once).
ErrorPage = Callable[[Request, Mapping[str, str], AppError, Settings], Response | None]


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    tag: str
    credential: CredentialKind = API_KEY_OR_SESSION
    bucket: BucketRule = CREDENTIAL_BUCKET
    scope: str | None = None
    # A path parameter naming a user: a credential of that very user (a personal API key or a
    # session) may call without `scope`; everyone else needs it (contact methods, notification rules).
    self_param: str | None = None
    body: type[BaseModel] | None = None
    body_optional: bool = False  # the request may have no body at all (an Opsgenie acknowledge or close)
    query: type[BaseModel] | None = None
    response: Any = None  # a pydantic model type, or None for no data schema
    status: int = 200
    # Other success statuses with the same body (an inbound webhook: 201 opened, 200 updated, 202 suppressed).
    other_statuses: tuple[int, ...] = ()
    errors: tuple[int, ...] = ()
    description: str | None = None
    headers: tuple[str, ...] = ()  # request headers the document lists
    family: ErrorFamily = ErrorFamily.API
    envelope: Envelope = Envelope.API
    content_type: str = "application/json"  # of the success response
    idempotent: Idempotent | None = None
    error_page: ErrorPage | None = None
    unexpected: str | None = None  # the message of a 500 (None: INTERNAL_ERROR's own)
    # False for the console's HTML pages and forms: routed like the rest, but not part of the
    # API, so the OpenAPI document (and the contract sweep that reads it) leaves them out.
    documented: bool = True

    @property
    def public(self) -> bool:
        """No bearer credential (the document lists no security scheme, nor 401/403 by default)."""
        return not self.credential.bearer

    @property
    def raw(self) -> bool:
        return self.envelope is Envelope.RAW


@dataclass
class Call:
    """What a handler receives: who is calling, the verified credential, the parsed input, the time."""

    principal: Principal
    body: Any
    query: Any
    path: dict[str, str]
    request: Request
    now: datetime
    # Read once per request where the pipeline built the call: handlers pass what they need of it
    # down, so no domain function reads the settings itself.
    settings: Settings
    credential: Any = None  # what the credential kind verified (an integration, a heartbeat...)
    # What the handler leaves for the family's after-answer steps (an inbound delivery's outcome,
    # chalicelib.eventlog.outcome.Outcome), also when it raises after learning it.
    outcome: Any = None

    def header(self, name: str) -> str | None:
        value = self.request.headers.get(name)
        return str(value) if value is not None else None

    @property
    def raw_body(self) -> bytes:
        raw = self.request.raw_body or b""
        return raw.encode() if isinstance(raw, str) else raw


@dataclass
class Result:
    """Lets a handler choose a status or add headers; plain return values use the operation's status."""

    data: Any
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Call], Any]


@dataclass(frozen=True)
class BoundOperation:
    """An operation, its handler and the module that declares it."""

    operation: Operation
    handler: Handler
    module: str


_BOUND: dict[tuple[str, str], BoundOperation] = {}


def bind(operation: Operation, handler: Handler, module: str) -> None:
    key = (operation.method, operation.path)
    existing = _BOUND.get(key)
    if existing is not None and existing.module != module:
        raise ValueError(f"{operation.method} {operation.path} is declared in {existing.module} and {module}")
    _BOUND[key] = BoundOperation(operation, handler, module)


def bound(method: str, path: str) -> BoundOperation | None:
    return _BOUND.get((method, path))


def bound_operations() -> list[BoundOperation]:
    """Every operation of the modules imported so far, in registration order."""
    return list(_BOUND.values())


def query_lists(request: Request) -> dict[str, list[str]]:
    params = request.query_params
    if not params:
        return {}
    return {name: list(params.getlist(name)) for name in params}


class OperationGroup:
    """The operations one route module declares, all under one OpenAPI tag."""

    def __init__(self, module: str, tag: str) -> None:
        self.module = module
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
        description: str | None = None,
        headers: tuple[str, ...] = (),
        self_param: str | None = None,
        idempotent: Idempotent | None = None,
    ) -> Callable[[Handler], Handler]:
        """An API operation: an API key or a session, its bucket, `scope`, the success envelope."""
        return self.declare(
            Operation(
                method=method,
                path=path,
                operation_id=operation_id,
                summary=summary,
                tag=self.tag,
                scope=scope,
                self_param=self_param,
                body=body,
                query=query,
                response=response,
                status=status,
                errors=errors,
                description=description,
                headers=headers,
                idempotent=idempotent,
            )
        )

    def raw(
        self,
        method: str,
        path: str,
        *,
        operation_id: str,
        summary: str,
        credential: CredentialKind,
        bucket: BucketRule,
        family: ErrorFamily,
        scope: str | None = None,
        description: str | None = None,
        body: type[BaseModel] | None = None,
        body_optional: bool = False,
        query: type[BaseModel] | None = None,
        response: Any = None,
        status: int = 200,
        other_statuses: tuple[int, ...] = (),
        errors: tuple[int, ...] = (),
        headers: tuple[str, ...] = (),
        content_type: str = "application/json",
        error_page: ErrorPage | None = None,
        unexpected: str | None = None,
        documented: bool = True,
    ) -> Callable[[Handler], Handler]:
        """An operation outside the API's envelope (inbound webhooks, provider callbacks, public
        status, the console): its handler answers the Response in its own shape and reads its
        body itself (`body` and `query` document them). Its errors are rendered in `family`."""
        return self.declare(
            Operation(
                method=method,
                path=path,
                operation_id=operation_id,
                summary=summary,
                tag=self.tag,
                credential=credential,
                bucket=bucket,
                scope=scope,
                body=body,
                body_optional=body_optional,
                query=query,
                response=response,
                status=status,
                other_statuses=other_statuses,
                errors=errors,
                description=description,
                headers=headers,
                family=family,
                envelope=Envelope.RAW,
                content_type=content_type,
                error_page=error_page,
                unexpected=unexpected,
                documented=documented,
            )
        )

    def declare(self, operation: Operation) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            bind(operation, handler, self.module)
            return handler

        return register
