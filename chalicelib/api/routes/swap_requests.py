"""Shift swaps and cover requests on a schedule: ask, list, read, take, withdraw.

Every operation needs `oncall:read` and a person behind the credential (a session or a personal
API key) whose role can respond: owners, admins and responders take part; a viewer, a deactivated
person or a service-account key is refused (403). Rules: chalicelib/oncall/swap_rules.py.
"""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.oncall import swaps
from chalicelib.oncall.swap_models import SwapRequestCreate, SwapRequestListQuery, SwapRequestV1, SwapTakenV1
from chalicelib.pagination import Page, paginate

api = OperationGroup(__name__, tag="schedules")

BASE = "/api/v1/schedules/{schedule_id}/swap-requests"
ITEM = BASE + "/{swap_id}"
_WHO = (
    " The acting person is the credential's (a session or a personal API key): an owner, admin or responder; "
    "a viewer, a deactivated person or a service-account key gets 403."
)


@api.operation(
    "POST",
    BASE,
    operation_id="createSwapRequest",
    summary="Ask the schedule's other members to cover a span of your own shifts",
    scope="oncall:read",
    body=SwapRequestCreate,
    response=SwapRequestV1,
    status=201,
    errors=(400, 403, 404, 409),
    description="400 when the requester is not on call (by the final shifts, overrides included) for the whole "
    "span, or the span is over, too long or backwards; 409 when it overlaps one of the requester's open "
    "requests. The schedule's other members are told through their low-urgency notification rules; when "
    "nobody took it by its start, it expires and the requester is told." + _WHO,
)
def create_swap_request(call: Call) -> SwapRequestV1:
    body: SwapRequestCreate = call.body
    request = swaps.request_cover(
        organization_id=call.principal.organization_id,
        schedule_id=call.path["schedule_id"],
        requester_id=call.principal.user_id,
        start=body.start,
        end=body.end,
        note=body.note,
        now=call.now,
    )
    return SwapRequestV1.of(request, call.now)


@api.operation(
    "GET",
    BASE,
    operation_id="listSwapRequests",
    summary="A schedule's swap requests: open ones first (soonest first), then taken, withdrawn and expired",
    scope="oncall:read",
    query=SwapRequestListQuery,
    response=Page[SwapRequestV1],
    errors=(400, 404),
)
def list_swap_requests(call: Call) -> Page[SwapRequestV1]:
    query: SwapRequestListQuery = call.query
    found = swaps.list_swap_requests(
        organization_id=call.principal.organization_id,
        schedule_id=call.path["schedule_id"],
        now=call.now,
        status=query.status,
    )
    return paginate([SwapRequestV1.of(r, call.now) for r in found], limit=query.limit, offset=query.offset)


@api.operation(
    "GET",
    ITEM,
    operation_id="getSwapRequest",
    summary="A swap request",
    scope="oncall:read",
    response=SwapRequestV1,
    errors=(404,),
)
def get_swap_request(call: Call) -> SwapRequestV1:
    request = swaps.get_swap_request(
        organization_id=call.principal.organization_id,
        schedule_id=call.path["schedule_id"],
        swap_id=call.path["swap_id"],
    )
    return SwapRequestV1.of(request, call.now)


@api.operation(
    "POST",
    ITEM + "/take",
    operation_id="takeSwapRequest",
    summary="Take a swap request: you are on call for its span (an override), in the same write",
    scope="oncall:read",
    response=SwapTakenV1,
    errors=(403, 404, 409),
    description="The taker is another member of the schedule's layers. Of two people taking it at once one "
    "wins; the other gets 409, as for a request taken, withdrawn or expired. The requester is told." + _WHO,
)
def take_swap_request(call: Call) -> SwapTakenV1:
    request, override = swaps.take_swap_request(
        organization_id=call.principal.organization_id,
        schedule_id=call.path["schedule_id"],
        swap_id=call.path["swap_id"],
        taker_id=call.principal.user_id,
        now=call.now,
    )
    return SwapTakenV1.of(request, override, call.now)


@api.operation(
    "POST",
    ITEM + "/withdraw",
    operation_id="withdrawSwapRequest",
    summary="Withdraw a swap request that nobody took yet",
    scope="oncall:read",
    response=SwapRequestV1,
    errors=(403, 404, 409),
    description="The requester, or anyone with oncall:write (owners and admins). 409 once it is taken, "
    "withdrawn or expired." + _WHO,
)
def withdraw_swap_request(call: Call) -> SwapRequestV1:
    request = swaps.withdraw_swap_request(
        organization_id=call.principal.organization_id,
        schedule_id=call.path["schedule_id"],
        swap_id=call.path["swap_id"],
        actor_id=call.principal.user_id,
        for_others="oncall:write" in call.principal.scopes,
        now=call.now,
    )
    return SwapRequestV1.of(request, call.now)
