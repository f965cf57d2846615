"""The incident state machine as data: statuses with categories, allowed moves, pure planning.

An organization may replace the default workflow (docs/INCIDENTS.md, "Workflow"). Everything here is
pure: the service layer loads the organization's `Workflow` (stored with `to_dict`), asks
`plan_transition` what a requested move means, and writes the result.

A status an incident holds but the organization's current workflow no longer lists (the admin
removed it) is treated as an open, active status from which any move is allowed, so such
incidents can always be moved back into the workflow.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from chalicelib.errors import InvalidStatus, TransitionNotAllowed, ValidationFailed

Category = Literal["triggered", "active", "resolved", "closed"]
CATEGORIES: tuple[Category, ...] = ("triggered", "active", "resolved", "closed")
OPEN_CATEGORIES: frozenset[Category] = frozenset({"triggered", "active"})
DONE_CATEGORIES: frozenset[Category] = frozenset({"resolved", "closed"})
INITIAL_CATEGORIES: frozenset[Category] = OPEN_CATEGORIES
UNKNOWN_STATUS_CATEGORY: Category = "active"

STATUS_NAME_PATTERN = re.compile(r"^[a-z0-9_]{1,40}$")
MAX_STATUSES = 50
_CATEGORY_MESSAGE = f"must be one of {', '.join(CATEGORIES)}"

# Timeline event types (README, "Incidents"; docs/ARCHITECTURE.md lists them, plus severity_changed).
EVENT_CREATED = "created"
EVENT_STATUS_CHANGED = "status_changed"
EVENT_ACKNOWLEDGED = "acknowledged"
EVENT_ASSIGNED = "assigned"
EVENT_UPDATED = "updated"
EVENT_COMMENT = "comment"
EVENT_PAGED = "paged"
EVENT_ESCALATED = "escalated"
EVENT_ALERT_RECEIVED = "alert_received"
EVENT_RESOLVED = "resolved"
EVENT_REOPENED = "reopened"
EVENT_SLA_BREACHED = "sla_breached"
EVENT_POSTMORTEM_CREATED = "postmortem_created"
EVENT_NOTIFICATION_FAILED = "notification_failed"
EVENT_SEVERITY_CHANGED = "severity_changed"
EVENT_NOBODY_TO_PAGE = "nobody_to_page"  # an escalation level (or a service without one) reached nobody
EVENT_PAGE_SKIPPED = "page_skipped"  # a page decided while wanted, found unwanted when it was to go out
TIMELINE_EVENT_TYPES: tuple[str, ...] = (
    *(EVENT_CREATED, EVENT_STATUS_CHANGED, EVENT_ACKNOWLEDGED, EVENT_ASSIGNED, EVENT_UPDATED, EVENT_COMMENT),
    *(EVENT_PAGED, EVENT_ESCALATED, EVENT_ALERT_RECEIVED, EVENT_RESOLVED, EVENT_REOPENED, EVENT_SLA_BREACHED),
    *(EVENT_POSTMORTEM_CREATED, EVENT_NOTIFICATION_FAILED, EVENT_SEVERITY_CHANGED, EVENT_NOBODY_TO_PAGE),
    EVENT_PAGE_SKIPPED,
)


class FrozenMoves(Mapping[str, frozenset[str]]):
    """An immutable, hashable `status -> allowed targets` table. Statuses without moves are left out."""

    def __init__(self, moves: Mapping[str, Iterable[str]] | None = None) -> None:
        self._data: dict[str, frozenset[str]] = {
            source: frozenset(targets) for source, targets in (moves or {}).items() if frozenset(targets)
        }

    def __getitem__(self, key: str) -> frozenset[str]:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"FrozenMoves({ {k: sorted(v) for k, v in self._data.items()}!r})"


@dataclass(frozen=True)
class StatusDefinition:
    name: str
    category: Category


@dataclass(frozen=True)
class Workflow:
    statuses: tuple[StatusDefinition, ...]
    moves: Mapping[str, frozenset[str]]
    initial_status: str
    _by_name: Mapping[str, StatusDefinition] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "statuses", tuple(self.statuses))
        if not isinstance(self.moves, FrozenMoves):
            object.__setattr__(self, "moves", FrozenMoves(self.moves))
        by_name: dict[str, StatusDefinition] = {}
        for status in self.statuses:
            by_name.setdefault(status.name, status)
        object.__setattr__(self, "_by_name", by_name)

    @classmethod
    def build(
        cls,
        *,
        statuses: Iterable[tuple[str, str] | StatusDefinition],
        moves: Mapping[str, Iterable[str]],
        initial_status: str,
    ) -> Workflow:
        """Convenience constructor; categories are not checked here (`validate_workflow` does)."""
        definitions = tuple(
            s if isinstance(s, StatusDefinition) else StatusDefinition(s[0], cast(Category, s[1])) for s in statuses
        )
        return cls(statuses=definitions, moves=FrozenMoves(moves), initial_status=initial_status)

    @property
    def status_names(self) -> tuple[str, ...]:
        return tuple(status.name for status in self.statuses)

    def has_status(self, name: str) -> bool:
        return name in self._by_name

    def category_of(self, name: str) -> Category | None:
        """The status's category, or None when the workflow does not list it."""
        status = self._by_name.get(name)
        return status.category if status else None

    def is_open(self, name: str) -> bool:
        """Not in a resolved or closed category. A status the workflow no longer lists counts as open."""
        return self.category_of(name) not in DONE_CATEGORIES

    def targets(self, name: str) -> frozenset[str]:
        """Statuses `name` may move to (an unlisted status may move to any listed one)."""
        if not self.has_status(name):
            return frozenset(self.status_names)
        return self.moves.get(name, frozenset())

    def allows(self, current: str, target: str) -> bool:
        return self.has_status(target) and (current == target or target in self.targets(current))

    def statuses_in(self, *categories: Category) -> tuple[str, ...]:
        return tuple(s.name for s in self.statuses if s.category in categories)

    def open_statuses(self) -> tuple[str, ...]:
        """The statuses the incident list shows by default."""
        return self.statuses_in(*OPEN_CATEGORIES)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: {statuses: [{name, category}], moves: {name: [targets]}, initial_status}."""
        order = {name: index for index, name in enumerate(self.status_names)}

        def position(name: str) -> tuple[int, str]:
            return (order.get(name, len(order)), name)

        sources = sorted(set(self.status_names) | set(self.moves), key=position)
        return {
            "statuses": [{"name": s.name, "category": s.category} for s in self.statuses],
            "moves": {source: sorted(self.moves.get(source, frozenset()), key=position) for source in sources},
            "initial_status": self.initial_status,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Workflow:
        """The inverse of `to_dict`. Checks shape only (ValidationFailed); `validate_workflow` checks meaning."""
        problems: list[dict[str, str]] = []
        raw_statuses = data.get("statuses")
        raw_moves = data.get("moves", {})
        initial = data.get("initial_status")
        statuses: list[StatusDefinition] = []
        if not isinstance(raw_statuses, list):
            problems.append({"field": "statuses", "message": "must be a list"})
            raw_statuses = []
        for index, item in enumerate(raw_statuses):
            name = item.get("name") if isinstance(item, Mapping) else None
            category = item.get("category") if isinstance(item, Mapping) else None
            if not isinstance(name, str):
                problems.append({"field": f"statuses.{index}.name", "message": "must be a string"})
            if category not in CATEGORIES:
                problems.append({"field": f"statuses.{index}.category", "message": _CATEGORY_MESSAGE})
            if isinstance(name, str) and category in CATEGORIES:
                statuses.append(StatusDefinition(name, cast(Category, category)))
        moves: dict[str, list[str]] = {}
        if not isinstance(raw_moves, Mapping):
            problems.append({"field": "moves", "message": "must be an object of status -> list of statuses"})
            raw_moves = {}
        for source, targets in raw_moves.items():
            if not isinstance(targets, list | tuple | set | frozenset) or not all(isinstance(t, str) for t in targets):
                problems.append({"field": f"moves.{source}", "message": "must be a list of status names"})
                continue
            moves[str(source)] = list(targets)
        if not isinstance(initial, str):
            problems.append({"field": "initial_status", "message": "must be a string"})
        if problems:
            raise ValidationFailed.for_fields(problems, "The workflow is invalid.")
        return cls(statuses=tuple(statuses), moves=FrozenMoves(moves), initial_status=cast(str, initial))


_ACTIVE_STATUSES = ("investigating", "identified", "monitoring")
DEFAULT_WORKFLOW = Workflow.build(
    statuses=[
        ("new", "triggered"),
        ("investigating", "active"),
        ("identified", "active"),
        ("monitoring", "active"),
        ("resolved", "resolved"),
        ("closed", "closed"),
    ],
    moves={
        "new": ["investigating", "identified", "monitoring", "resolved"],
        **{name: [*(other for other in _ACTIVE_STATUSES if other != name), "resolved"] for name in _ACTIVE_STATUSES},
        "resolved": ["investigating", "closed"],
        "closed": [],
    },
    initial_status="new",
)


def validate_workflow(workflow: Workflow) -> None:
    """Raise ValidationFailed (details.fields lists every problem) unless the workflow is usable.

    Usable: 1 to MAX_STATUSES statuses with unique, well-formed names and known categories; the
    initial status exists and is triggered or active; moves name only listed statuses; at least
    one resolved-category status; every status reachable from the initial one; and from every
    open status some resolved or closed status is reachable (no incident can get stuck open).
    """
    problems: list[dict[str, str]] = []

    def problem(where: str, message: str) -> None:
        problems.append({"field": where, "message": message})

    if not workflow.statuses:
        problem("statuses", "at least one status is required")
    if len(workflow.statuses) > MAX_STATUSES:
        problem("statuses", f"at most {MAX_STATUSES} statuses are allowed")
    seen: set[str] = set()
    for index, status in enumerate(workflow.statuses):
        if not isinstance(status.name, str) or not STATUS_NAME_PATTERN.match(status.name):
            problem(f"statuses.{index}.name", "must be 1 to 40 lowercase letters, digits or underscores")
        elif status.name in seen:
            problem(f"statuses.{index}.name", f"duplicate status '{status.name}'")
        seen.add(status.name)
        if status.category not in CATEGORIES:
            problem(f"statuses.{index}.category", _CATEGORY_MESSAGE)
    names = set(workflow.status_names)

    initial = workflow.initial_status
    if initial not in names:
        problem("initial_status", f"'{initial}' is not one of the statuses")
    elif workflow.category_of(initial) not in INITIAL_CATEGORIES:
        problem("initial_status", "the initial status must be in the triggered or active category")

    for source, targets in workflow.moves.items():
        if source not in names:
            problem(f"moves.{source}", f"'{source}' is not one of the statuses")
        for target in sorted(targets - names):
            problem(f"moves.{source}", f"'{target}' is not one of the statuses")

    if workflow.statuses and not workflow.statuses_in("resolved"):
        problem("statuses", "at least one status must be in the resolved category")

    if initial in names:
        reachable = _reachable(workflow, [initial])
        for index, status in enumerate(workflow.statuses):
            if status.name not in reachable:
                problem(f"statuses.{index}.name", f"'{status.name}' cannot be reached from '{initial}'")
    done = set(workflow.statuses_in(*DONE_CATEGORIES))
    if done:
        for status in workflow.statuses:
            if status.category in OPEN_CATEGORIES and not (_reachable(workflow, [status.name]) & done):
                problem(f"moves.{status.name}", f"no resolved or closed status can be reached from '{status.name}'")

    if problems:
        raise ValidationFailed.for_fields(problems, "The workflow is invalid.")


def _reachable(workflow: Workflow, start: Iterable[str]) -> set[str]:
    names = set(workflow.status_names)
    seen = set(start)
    queue = deque(seen)
    while queue:
        for target in workflow.moves.get(queue.popleft(), frozenset()):
            if target in names and target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


@dataclass(frozen=True)
class TransitionPlan:
    """What moving an incident from `from_status` to `to_status` means. Pure data."""

    from_status: str
    to_status: str
    no_op: bool
    resolves: bool  # open -> resolved/closed category: stamp resolved_at / resolved_by
    reopens: bool  # resolved/closed -> open category: clear resolved_at / resolved_by
    closes: bool  # entering a closed-category status from any other category
    from_category: Category
    to_category: Category

    @property
    def event_type(self) -> str:
        """The timeline event this move records (a no-op records none)."""
        if self.resolves:
            return EVENT_RESOLVED
        if self.reopens:
            return EVENT_REOPENED
        return EVENT_STATUS_CHANGED

    @property
    def is_open_after(self) -> bool:
        return self.to_category in OPEN_CATEGORIES

    def describe(self) -> str:
        if self.no_op:
            return f"Status stays {self.to_status}"
        return f"Status changed from {self.from_status} to {self.to_status}"


def require_status(workflow: Workflow, name: str) -> str:
    """The canonical name for `name` (case and surrounding space forgiven), or InvalidStatus."""
    candidate = name.strip().lower() if isinstance(name, str) else name
    if not isinstance(candidate, str) or not workflow.has_status(candidate):
        raise InvalidStatus(
            f"'{name}' is not a status in this organization's workflow.",
            details={"status": name, "allowed": list(workflow.status_names)},
        )
    return candidate


def plan_transition(workflow: Workflow, current_status: str, target_status: str) -> TransitionPlan:
    """Plan a move. InvalidStatus when the target is unknown; TransitionNotAllowed when not a listed move.

    A move to the current status is a no-op (allowed, records nothing).
    """
    target = require_status(workflow, target_status)
    from_category = workflow.category_of(current_status) or UNKNOWN_STATUS_CATEGORY
    to_category = cast(Category, workflow.category_of(target))
    if target == current_status:
        return TransitionPlan(current_status, target, True, False, False, False, from_category, to_category)
    if target not in workflow.targets(current_status):
        allowed = [name for name in workflow.status_names if name in workflow.targets(current_status)]
        raise TransitionNotAllowed(
            f"An incident cannot move from '{current_status}' to '{target}'.",
            details={"from": current_status, "to": target, "allowed": allowed},
        )
    was_open = from_category in OPEN_CATEGORIES
    now_open = to_category in OPEN_CATEGORIES
    return TransitionPlan(
        from_status=current_status,
        to_status=target,
        no_op=False,
        resolves=was_open and not now_open,
        reopens=not was_open and now_open,
        closes=to_category == "closed" and from_category != "closed",
        from_category=from_category,
        to_category=to_category,
    )


def acknowledge_target(workflow: Workflow, current_status: str) -> str | None:
    """The status acknowledging moves to, or None to keep the current one.

    Only a triggered-category status moves: to `investigating` when the workflow has it and the
    move is allowed, else to the first allowed active-category status (in workflow order).
    """
    if workflow.category_of(current_status) != "triggered":
        return None
    allowed = workflow.targets(current_status)
    if "investigating" in allowed and workflow.category_of("investigating") == "active":
        return "investigating"
    for name in workflow.statuses_in("active"):
        if name in allowed:
            return name
    return None


def resolution_target(workflow: Workflow, current_status: str) -> str | None:
    """The status an integration's "resolved" signal moves to, or None (already done, or no allowed move).

    Prefers `resolved`, then the first allowed resolved-category status, then a closed-category one.
    """
    if not workflow.is_open(current_status):
        return None
    allowed = workflow.targets(current_status)
    if "resolved" in allowed and workflow.category_of("resolved") == "resolved":
        return "resolved"
    for name in (*workflow.statuses_in("resolved"), *workflow.statuses_in("closed")):
        if name in allowed:
            return name
    return None


def validate_status_filter(workflow: Workflow, names: Iterable[str]) -> list[str]:
    """Canonical names for a list filter; InvalidStatus for any name the workflow does not list."""
    return [require_status(workflow, name) for name in names]
