"""One place for a create route's Idempotency-Key, the pipeline's step for an operation declared
`idempotent` (chalicelib.api.operation.Idempotent): without the header the create just runs; with
it, chalicelib.idempotency.service replays, refuses (409) or runs it once, and the answer says
which (`Idempotent-Replayed`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chalicelib.api.operation import Call, Operation, Result
from chalicelib.idempotency.service import StoredResponse, run_once

# The sentence each such route's document carries, so clients read the same rule everywhere.
IDEMPOTENT = (
    "Send an Idempotency-Key header to make retries safe: the same key and payload replay the original "
    "response; a different payload, or a retry while the first is still running, is a 409."
)


def create_once(call: Call, operation: Operation, create: Callable[[], Any]) -> Result:
    """Runs `create` (which returns the new resource's JSON body) at most once per key and payload.

    Keys are kept per operation and, where the same body may create in different places (one
    integration's rules, one status page's templates), per place too, so a key is never matched
    across them."""
    declared = operation.idempotent
    assert declared is not None  # the pipeline calls this for idempotent operations only

    def created() -> StoredResponse:
        return StoredResponse(operation.status, create())

    key = call.header("Idempotency-Key")
    if key is None:
        return Result(created().body, status=operation.status)
    namespace = operation.operation_id
    if declared.place is not None:
        namespace += "#" + call.path.get(declared.place, "")
    response, replayed = run_once(
        organization_id=call.principal.organization_id,
        operation=namespace,
        key=key,
        payload=call.body.model_dump(mode="json", by_alias=declared.by_alias),
        now=call.now,
        action=created,
    )
    return Result(response.body, status=response.status, headers={"Idempotent-Replayed": str(replayed).lower()})
