"""One place for a create route's Idempotency-Key: without the header the create just runs; with it,
chalicelib.idempotency.service replays, refuses (409) or runs it once, and the answer says which
(`Idempotent-Replayed`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalicelib.api.routing import Call, Result
from chalicelib.idempotency.service import StoredResponse, run_once

# The sentence each such route's document carries, so clients read the same rule everywhere.
IDEMPOTENT = (
    "Send an Idempotency-Key header to make retries safe: the same key and payload replay the original "
    "response; a different payload, or a retry while the first is still running, is a 409."
)


def create_once(call: Call, *, operation: str, payload: Any, create: Callable[[], Any]) -> Result:
    """Runs `create` (which returns the new resource's JSON body) at most once per key and payload.

    `operation` names the operation and, where the same body may create in different places (one
    integration's rules, one status page's templates), the place too, so a key is never matched
    across them."""

    def created() -> StoredResponse:
        return StoredResponse(201, create())

    key = call.header("Idempotency-Key")
    if key is None:
        return Result(created().body, status=201)
    response, replayed = run_once(
        organization_id=call.principal.organization_id,
        operation=operation,
        key=key,
        payload=payload,
        now=call.now,
        action=created,
    )
    return Result(response.body, status=response.status, headers={"Idempotent-Replayed": str(replayed).lower()})
