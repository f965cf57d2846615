"""Shift swaps and cover requests as data, and their rules. Pure, no AWS.

A person on call asks for cover for a span of their own shifts ("cover me Saturday 09:00 to
18:00"). The schedule's other members are told; one takes it, and the span becomes an override
for the taker (chalicelib.oncall.swaps writes both in one transaction). Until then the requester
may withdraw it. A request nobody took by its start expires and the requester is told.

Rules
- The span: start before end, at most MAX_SPAN long, not over (end after now) and not started
  more than START_GRACE ago (a form filled in at 09:00 for "from now" arrives at 09:01).
- The requester is on call, by the schedule's final shifts (overrides included), for the whole
  span: a person asks for cover only for their own time.
- One person's open requests on one schedule never overlap (409): the second would ask twice.
- Statuses: open -> taken | withdrawn | expired. An open request whose start has come is expired
  whether or not the expiry message has marked it yet (`status_at`).
- The taker is another member of the schedule's layers, who can respond.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from chalicelib.errors import Conflict, Forbidden, ValidationFailed
from chalicelib.oncall.intervals import Span, subtract, union
from chalicelib.oncall.rotation import FinalShift
from chalicelib.oncall.schedule import Schedule

SwapStatus = Literal["open", "taken", "withdrawn", "expired"]
STATUSES: tuple[SwapStatus, ...] = ("open", "taken", "withdrawn", "expired")
MAX_SPAN = timedelta(days=31)
START_GRACE = timedelta(minutes=15)
NOTE_MAX = 500


@dataclass(frozen=True)
class SwapRequest:
    swap_id: str
    organization_id: str
    schedule_id: str
    requester_id: str
    start: datetime
    end: datetime
    status: SwapStatus
    created_at: datetime
    note: str | None = None
    taken_by: str | None = None
    taken_at: datetime | None = None
    override_id: str | None = None
    withdrawn_at: datetime | None = None
    expired_at: datetime | None = None
    version: int = 0

    def status_at(self, now: datetime) -> SwapStatus:
        """The status as of `now`: an open request whose start has come is expired."""
        if self.status == "open" and self.start <= now:
            return "expired"
        return self.status

    def is_open(self, now: datetime) -> bool:
        return self.status_at(now) == "open"


def check_span(start: datetime, end: datetime, now: datetime) -> None:
    """ValidationFailed (every problem) unless [start, end) may be asked for."""
    problems: list[dict[str, str]] = []
    if end <= start:
        problems.append({"field": "end", "message": "must be after the start"})
    elif end - start > MAX_SPAN:
        problems.append({"field": "end", "message": f"must be at most {MAX_SPAN.days} days after the start"})
    if end <= now:
        problems.append({"field": "end", "message": "must be in the future"})
    elif start < now - START_GRACE:
        problems.append({"field": "start", "message": "must not be in the past"})
    if problems:
        raise ValidationFailed.for_fields(problems, "The span cannot be asked for.")


def uncovered(shifts: Iterable[FinalShift], requester_id: str, span: Span) -> list[Span]:
    """The parts of `span` in which the requester is not on call."""
    mine = union((shift.start, shift.end) for shift in shifts if shift.user_id == requester_id)
    return subtract(span, mine)


def check_on_call(shifts: Iterable[FinalShift], requester_id: str, start: datetime, end: datetime) -> None:
    """ValidationFailed naming the field whose time the requester is not on call at."""
    missing = uncovered(shifts, requester_id, (start, end))
    if missing:
        field = "start" if missing[0][0] == start else "end"
        raise ValidationFailed.for_fields(
            [{"field": field, "message": "you are not on call for all of this span; ask only for your own shifts"}],
            "You are not on call for all of this span.",
        )


def check_no_overlap(
    requests: Iterable[SwapRequest], requester_id: str, start: datetime, end: datetime, now: datetime
) -> None:
    """Conflict when the requester already asked for cover for part of the span."""
    for request in requests:
        if (
            request.requester_id == requester_id
            and request.is_open(now)
            and request.start < end
            and start < request.end
        ):
            raise Conflict(
                "You already asked for cover for part of this span; withdraw that request first.",
                details={"swap_request_id": request.swap_id},
            )


def members_of(schedule: Schedule) -> list[str]:
    """The people of the schedule's layers, each once, in layer and rotation order."""
    return list(dict.fromkeys(member for layer in schedule.layers for member in layer.members))


def check_open(request: SwapRequest, now: datetime) -> None:
    """Conflict unless the request may still be taken or withdrawn."""
    status = request.status_at(now)
    if status == "open":
        return
    reason = {
        "taken": "Someone took this request already.",
        "withdrawn": "The request was withdrawn.",
        "expired": "The request expired: its start has passed.",
    }[status]
    raise Conflict(reason, details={"status": status})


def check_taker(request: SwapRequest, schedule: Schedule, taker_id: str, now: datetime) -> None:
    """Forbidden or Conflict unless `taker_id` may take the request now (their role is checked by the
    caller, who has their directory record)."""
    if taker_id == request.requester_id:
        raise Conflict("You asked for this cover yourself; withdraw the request instead.")
    if taker_id not in members_of(schedule):
        raise Forbidden("Only members of the schedule's rotations can take its shifts.")
    check_open(request, now)


def open_first(requests: Sequence[SwapRequest], now: datetime) -> list[SwapRequest]:
    """Open requests first (soonest start first), then the rest, newest first."""
    live = sorted((r for r in requests if r.is_open(now)), key=lambda r: (r.start, r.swap_id))
    done = sorted((r for r in requests if not r.is_open(now)), key=lambda r: (r.created_at, r.swap_id), reverse=True)
    return live + done
