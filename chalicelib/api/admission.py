"""Admission, the pipeline's first step: the operation's bucket and credential, then its scope.

In this order, for every operation:
1. an operation counted per caller address charges that bucket first (public status reads, the
   calendar feed), so even a refused request is counted;
2. the credential kind verifies the request (chalicelib.api.credential_kinds). A refusal that
   names a bucket (a bad API key: the address's; a forged webhook signature: the unverified
   one; the console's redirect to sign in) charges it, then is answered;
3. an operation counted per credential charges the bucket the credential names;
4. the scope (or role) is required of the principal, unless it acts on itself (`self_param`).

The rate-limit decision stays in the request's own `Admission`; the pipeline puts its headers on
the answer once, whatever the answer is (chalicelib.api.pipeline). A spent bucket is 429
RATE_LIMITED with its own headers (chalicelib.ratelimit.buckets).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chalice.app import Request, Response

from chalicelib.api.credential_kinds import ANONYMOUS, ANONYMOUS_BUCKET, Inbound, Refused, address_bucket
from chalicelib.api.operation import Operation
from chalicelib.auth.principal import Principal
from chalicelib.ratelimit.buckets import Bucket, charge_bucket
from chalicelib.ratelimit.window import RateLimitDecision
from chalicelib.settings import Settings


@dataclass
class Admission:
    """One request's admission: who it is, what its credential proved, and its rate-limit decision."""

    inbound: Inbound
    principal: Principal = ANONYMOUS
    credential: Any = None
    decision: RateLimitDecision | None = field(default=None)
    # What the credential named, verified or refused (an integration): after-answer steps read it.
    named: Any = None

    def charge(self, bucket: Bucket) -> None:
        self.decision = charge_bucket(bucket, self.inbound.now, settings=self.inbound.settings)

    def rate_headers(self) -> dict[str, str]:
        return self.decision.headers() if self.decision is not None else {}


def admit(operation: Operation, admission: Admission) -> Response | None:
    """Steps 1-4. None when the request goes on to its handler; else the answer a refusing
    credential kind gave (the console's redirect to sign in). Raises every other refusal."""
    inbound = admission.inbound
    if operation.bucket.address is not None:
        admission.charge(address_bucket(operation.bucket.address, inbound))
    try:
        verified = operation.credential.verify(inbound)
    except Refused as refused:
        admission.named = refused.named
        if refused.bucket is not None and operation.bucket.credential:
            admission.charge(refused.bucket)
        if refused.answer is not None:
            return refused.answer
        raise refused.error from None
    admission.principal, admission.credential = verified.principal, verified.subject
    admission.named = verified.named
    if verified.bucket is not None and operation.bucket.credential:
        admission.charge(verified.bucket)
    if not _acting_on_self(operation, verified.principal, inbound.path):
        verified.principal.require(operation.scope)
    return None


def charge_unrouted(request: Request, now: datetime, *, settings: Settings) -> RateLimitDecision:
    """Answers no operation gave (404, 405) count against the caller's address."""
    return charge_bucket(address_bucket(ANONYMOUS_BUCKET, Inbound(request, {}, now, settings)), now, settings=settings)


def _acting_on_self(operation: Operation, principal: Principal, path_params: Mapping[str, str]) -> bool:
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
