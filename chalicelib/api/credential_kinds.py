"""Credential kinds: how an operation's caller proves who it is, as data the request pipeline reads.

A kind is a name and a `verify` function over the request (`Inbound`). `verify` answers the
principal (who acts), the verified subject a handler needs (an integration past the webhook gate,
a heartbeat, a Slack payload...) and the rate-limit bucket the credential names; or it refuses:
an `AppError` (answered in the operation's family), or `Refused` when the refusal counts against a
bucket too (a failed API key charges the caller's address) or answers in its own way (the console
sends the browser to sign in). The pipeline (chalicelib.api.pipeline) calls `verify` once per
request and never knows which kind it ran: a new kind (an Opsgenie `GenieKey` header, a
Mattermost action token) is one more `CredentialKind` next to these, not a change to the pipeline.

The kinds of the API live here (public, API key or session); the others beside the code they
check: routing keys (chalicelib.api.routing_keys, the integration gate), provider signatures
(chalicelib.api.provider_signatures), capability tokens in the URL
(chalicelib.api.capability_tokens), and the console's session (chalicelib.console.visits).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chalice.app import Request, Response

from chalicelib.auth.principal import Principal
from chalicelib.errors import AppError, Unauthorized
from chalicelib.ratelimit.buckets import Bucket
from chalicelib.settings import Settings

ANONYMOUS_BUCKET = "anonymous"
ANONYMOUS = Principal(organization_id="", credential_kind="anonymous", scopes=frozenset())


@dataclass(frozen=True)
class Inbound:
    """The request as a credential kind sees it."""

    request: Request
    path: Mapping[str, str]
    now: datetime
    settings: Settings  # read once per request by the entry point that built this Inbound

    @property
    def raw_body(self) -> bytes:
        raw = self.request.raw_body or b""
        return raw.encode() if isinstance(raw, str) else raw

    @property
    def source_ip(self) -> str:
        return source_ip(self.request)

    def header(self, name: str) -> str | None:
        value = self.request.headers.get(name)
        return str(value) if value is not None else None


@dataclass(frozen=True)
class Verified:
    principal: Principal = ANONYMOUS
    subject: Any = None  # what the handler reads as `call.credential` (kind-specific)
    bucket: Bucket | None = None  # where the request counts, when the operation counts per credential
    named: Any = None  # what the credential named, for the after-answer steps (an integration)


class Refused(Exception):
    """A refusal that counts against `bucket` (when the operation counts per credential) and is
    answered with `error` in the operation's family, or with `answer` as it is. `named`: what the
    refused credential named all the same (the integration of a revoked routing key, or of a
    forged signature), for the after-answer steps."""

    def __init__(
        self, error: AppError, *, bucket: Bucket | None = None, answer: Response | None = None, named: Any = None
    ) -> None:
        super().__init__(error.message)
        self.error = error
        self.bucket = bucket
        self.answer = answer
        self.named = named


# Verifies again, for a replay, a request recorded earlier: for the subject it named then (an
# integration), without what cannot be checked twice (a signature's time window).
Readmit = Callable[[Inbound, Any], Verified]


@dataclass(frozen=True)
class CredentialKind:
    name: str
    verify: Callable[[Inbound], Verified]
    # The OpenAPI document lists the bearer scheme (and 401/403) for the operation.
    bearer: bool = False
    # How a recorded request of this kind is admitted again when it is replayed (None: never).
    readmit: Readmit | None = None


def source_ip(request: Request) -> str:
    identity = (request.context or {}).get("identity") or {}
    return str(identity.get("sourceIp") or "unknown")


def address_bucket(category: str, inbound: Inbound) -> Bucket:
    return Bucket(category, inbound.source_ip)


def _public(_: Inbound) -> Verified:
    return Verified()


def _bearer(inbound: Inbound) -> Verified:
    from chalicelib.api.credentials import authenticate

    try:
        principal = authenticate(
            authorization=inbound.header("authorization"), now=inbound.now, settings=inbound.settings
        )
    except Unauthorized as error:
        # Requests without a valid credential share a per-address bucket, which also slows key guessing.
        raise Refused(error, bucket=address_bucket(ANONYMOUS_BUCKET, inbound)) from None
    return Verified(principal, bucket=Bucket(principal.rate_limit_category, principal.rate_limit_identity))


PUBLIC = CredentialKind("public", _public)
API_KEY_OR_SESSION = CredentialKind("api_key_or_session", _bearer, bearer=True)
