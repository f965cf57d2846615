"""Coverage gaps of loaded schedules, with the state of the people they name: one BatchGet.

The rules are chalicelib.oncall.coverage's; this only reads who of the people on call can be
paged. The cost of an answer is bounded: the rotation math of the window (COVERAGE_HORIZON, 14
days) per schedule and one BatchGetItem (per 100 people) for all of them, whatever the history.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chalicelib.directory.users import get_users
from chalicelib.oncall.coverage import gaps_of_shifts
from chalicelib.oncall.intervals import Span
from chalicelib.oncall.rotation import final_shifts
from chalicelib.oncall.schedule import Schedule


@dataclass(frozen=True)
class LoadedGaps:
    gaps: dict[str, list[Span]]  # schedule_id -> its gaps within the window
    pageable: frozenset[str]  # the people read who can be paged (active)

    def can_page(self, user_id: str) -> bool:
        return user_id in self.pageable


def load_gaps(
    *, organization_id: str, schedules: Sequence[Schedule], window: Span, more_people: Iterable[str] = ()
) -> LoadedGaps:
    """Each schedule's gaps within `window`; `more_people` (a policy's user targets) are read in
    the same BatchGet, so the caller learns whether they can be paged too."""
    shifts = {schedule.schedule_id: final_shifts(schedule, window[0], window[1]) for schedule in schedules}
    wanted = {shift.user_id for found in shifts.values() for shift in found} | set(more_people)
    people = get_users(organization_id=organization_id, user_ids=sorted(wanted)) if wanted else {}
    pageable = frozenset(user_id for user_id, user in people.items() if user.is_active)
    gaps = {schedule_id: gaps_of_shifts(found, window, pageable.__contains__) for schedule_id, found in shifts.items()}
    return LoadedGaps(gaps, pageable)
