"""The incident state machine: the default table, planning, validation and random workflows."""

from __future__ import annotations

import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.errors import InvalidStatus, TransitionNotAllowed, ValidationFailed
from chalicelib.incident import workflow as wf
from chalicelib.incident.workflow import (
    CATEGORIES,
    DEFAULT_WORKFLOW,
    StatusDefinition,
    Workflow,
    acknowledge_target,
    plan_transition,
    resolution_target,
    validate_status_filter,
    validate_workflow,
)

NAMES = ("new", "investigating", "identified", "monitoring", "resolved", "closed")
ALLOWED = {
    "new": {"investigating", "identified", "monitoring", "resolved"},
    "investigating": {"identified", "monitoring", "resolved"},
    "identified": {"investigating", "monitoring", "resolved"},
    "monitoring": {"investigating", "identified", "resolved"},
    "resolved": {"investigating", "closed"},
    "closed": set(),
}
PAIRS = [(a, b) for a in NAMES for b in NAMES if a != b]


def test_default_workflow_statuses_and_categories():
    assert DEFAULT_WORKFLOW.status_names == NAMES
    assert DEFAULT_WORKFLOW.initial_status == "new"
    assert [DEFAULT_WORKFLOW.category_of(n) for n in NAMES] == [
        "triggered",
        "active",
        "active",
        "active",
        "resolved",
        "closed",
    ]
    assert DEFAULT_WORKFLOW.open_statuses() == ("new", "investigating", "identified", "monitoring")
    validate_workflow(DEFAULT_WORKFLOW)


def test_default_moves_table_is_exactly_the_contract():
    assert {name: set(DEFAULT_WORKFLOW.targets(name)) for name in NAMES} == ALLOWED


@pytest.mark.parametrize(("current", "target"), PAIRS)
def test_every_default_move(current, target):
    if target in ALLOWED[current]:
        plan = plan_transition(DEFAULT_WORKFLOW, current, target)
        assert (plan.from_status, plan.to_status, plan.no_op) == (current, target, False)
        assert DEFAULT_WORKFLOW.allows(current, target)
    else:
        with pytest.raises(TransitionNotAllowed) as caught:
            plan_transition(DEFAULT_WORKFLOW, current, target)
        assert caught.value.code == "TRANSITION_NOT_ALLOWED"
        assert caught.value.status == 400
        assert caught.value.details == {
            "from": current,
            "to": target,
            "allowed": [n for n in NAMES if n in ALLOWED[current]],
        }
        assert not DEFAULT_WORKFLOW.allows(current, target)


@pytest.mark.parametrize("name", NAMES)
def test_same_status_is_a_no_op(name):
    plan = plan_transition(DEFAULT_WORKFLOW, name, name)
    assert plan.no_op
    assert not (plan.resolves or plan.reopens or plan.closes)
    assert DEFAULT_WORKFLOW.allows(name, name)


def test_closed_is_terminal_but_no_op_allowed():
    assert plan_transition(DEFAULT_WORKFLOW, "closed", "closed").no_op
    for target in NAMES[:-1]:
        with pytest.raises(TransitionNotAllowed):
            plan_transition(DEFAULT_WORKFLOW, "closed", target)


@pytest.mark.parametrize("target", ["nope", "", "RESOLVED_", "resolved!", "Closed down"])
def test_unknown_target_is_invalid_status(target):
    with pytest.raises(InvalidStatus) as caught:
        plan_transition(DEFAULT_WORKFLOW, "new", target)
    assert caught.value.code == "INVALID_STATUS"
    assert caught.value.details == {"status": target, "allowed": list(NAMES)}


def test_unknown_target_checked_before_allowed_move():
    with pytest.raises(InvalidStatus):
        plan_transition(DEFAULT_WORKFLOW, "closed", "nope")


def test_target_case_and_space_are_forgiven():
    plan = plan_transition(DEFAULT_WORKFLOW, "new", "  Investigating ")
    assert plan.to_status == "investigating"


@pytest.mark.parametrize(
    ("current", "target", "resolves", "reopens", "closes", "event"),
    [
        ("new", "investigating", False, False, False, "status_changed"),
        ("investigating", "monitoring", False, False, False, "status_changed"),
        ("new", "resolved", True, False, False, "resolved"),
        ("monitoring", "resolved", True, False, False, "resolved"),
        ("resolved", "investigating", False, True, False, "reopened"),
        ("resolved", "closed", False, False, True, "status_changed"),
    ],
)
def test_flags(current, target, resolves, reopens, closes, event):
    plan = plan_transition(DEFAULT_WORKFLOW, current, target)
    assert (plan.resolves, plan.reopens, plan.closes) == (resolves, reopens, closes)
    assert plan.event_type == event
    assert plan.is_open_after == (target not in ("resolved", "closed"))
    assert plan.describe() == f"Status changed from {current} to {target}"


def test_direct_close_from_open_resolves_and_closes():
    workflow = Workflow.build(
        statuses=[("open", "triggered"), ("done", "resolved"), ("gone", "closed")],
        moves={"open": ["gone", "done"], "done": ["gone"], "gone": ["open"]},
        initial_status="open",
    )
    plan = plan_transition(workflow, "open", "gone")
    assert (plan.resolves, plan.reopens, plan.closes) == (True, False, True)
    plan = plan_transition(workflow, "gone", "open")
    assert (plan.resolves, plan.reopens, plan.closes) == (False, True, False)


def test_status_no_longer_in_workflow_can_move_anywhere_and_counts_open():
    assert DEFAULT_WORKFLOW.category_of("triage") is None
    assert DEFAULT_WORKFLOW.is_open("triage")
    plan = plan_transition(DEFAULT_WORKFLOW, "triage", "resolved")
    assert plan.resolves and plan.from_category == "active"
    assert plan_transition(DEFAULT_WORKFLOW, "triage", "new").to_status == "new"


def test_is_open():
    assert [DEFAULT_WORKFLOW.is_open(n) for n in NAMES] == [True, True, True, True, False, False]


# ---------------------------------------------------------------- acknowledge and resolution targets


@pytest.mark.parametrize(
    ("current", "expected"),
    [
        ("new", "investigating"),
        ("investigating", None),
        ("identified", None),
        ("monitoring", None),
        ("resolved", None),
        ("closed", None),
        ("unknown", None),
    ],
)
def test_acknowledge_target_default(current, expected):
    assert acknowledge_target(DEFAULT_WORKFLOW, current) == expected


def test_acknowledge_falls_back_to_first_allowed_active_status():
    workflow = Workflow.build(
        statuses=[
            ("paged", "triggered"),
            ("investigating", "active"),
            ("triage", "active"),
            ("working", "active"),
            ("fixed", "resolved"),
        ],
        moves={
            "paged": ["working", "triage"],
            "triage": ["investigating"],
            "investigating": ["fixed"],
            "working": ["fixed"],
        },
        initial_status="paged",
    )
    validate_workflow(workflow)
    assert acknowledge_target(workflow, "paged") == "triage"


def test_acknowledge_keeps_triggered_status_with_no_active_move():
    workflow = Workflow.build(
        statuses=[("paged", "triggered"), ("fixed", "resolved")],
        moves={"paged": ["fixed"]},
        initial_status="paged",
    )
    assert acknowledge_target(workflow, "paged") is None


@pytest.mark.parametrize(
    ("current", "expected"),
    [("new", "resolved"), ("monitoring", "resolved"), ("resolved", None), ("closed", None)],
)
def test_resolution_target_default(current, expected):
    assert resolution_target(DEFAULT_WORKFLOW, current) == expected


def test_resolution_target_custom():
    workflow = Workflow.build(
        statuses=[("open", "triggered"), ("fixed", "resolved"), ("gone", "closed"), ("stuck", "active")],
        moves={"open": ["stuck", "fixed"], "stuck": ["gone"]},
        initial_status="open",
    )
    assert resolution_target(workflow, "open") == "fixed"
    assert resolution_target(workflow, "stuck") == "gone"


def test_validate_status_filter():
    assert validate_status_filter(DEFAULT_WORKFLOW, ["Resolved", "new"]) == ["resolved", "new"]
    with pytest.raises(InvalidStatus):
        validate_status_filter(DEFAULT_WORKFLOW, ["new", "bogus"])


def test_timeline_event_types_cover_the_contract():
    contract = [
        *("created", "status_changed", "acknowledged", "assigned", "updated", "comment", "paged", "escalated"),
        *("alert_received", "resolved", "reopened", "sla_breached", "postmortem_created", "notification_failed"),
    ]
    assert set(contract) <= set(wf.TIMELINE_EVENT_TYPES)
    assert "severity_changed" in wf.TIMELINE_EVENT_TYPES
    assert len(set(wf.TIMELINE_EVENT_TYPES)) == len(wf.TIMELINE_EVENT_TYPES)


# ---------------------------------------------------------------- validate_workflow


def _fields(workflow: Workflow) -> list[dict[str, str]]:
    with pytest.raises(ValidationFailed) as caught:
        validate_workflow(workflow)
    assert caught.value.code == "VALIDATION_ERROR"
    fields = caught.value.details["fields"]
    assert fields
    return fields


def _has(fields, field, text):
    return any(f["field"] == field and text in f["message"] for f in fields)


def simple(**overrides):
    spec = {
        "statuses": [("open", "triggered"), ("working", "active"), ("done", "resolved")],
        "moves": {"open": ["working", "done"], "working": ["done"], "done": ["working"]},
        "initial_status": "open",
    }
    spec.update(overrides)
    return Workflow.build(**spec)


def test_simple_workflow_is_valid():
    validate_workflow(simple())


def test_empty_workflow():
    fields = _fields(Workflow(statuses=(), moves={}, initial_status="new"))
    assert _has(fields, "statuses", "at least one status")
    assert _has(fields, "initial_status", "not one of the statuses")


def test_too_many_statuses():
    statuses = [("s0", "triggered"), ("done", "resolved")] + [(f"s{i}", "active") for i in range(1, 50)]
    moves = {name: ["done"] for name, _ in statuses if name != "done"}
    moves["s0"] = [name for name, _ in statuses if name != "s0"]
    fields = _fields(Workflow.build(statuses=statuses, moves=moves, initial_status="s0"))
    assert _has(fields, "statuses", "at most 50")


def test_fifty_statuses_are_allowed():
    statuses = [("s0", "triggered"), ("done", "resolved")] + [(f"s{i}", "active") for i in range(1, 49)]
    moves = {name: ["done"] for name, _ in statuses if name != "done"}
    moves["s0"] = [name for name, _ in statuses if name != "s0"]
    validate_workflow(Workflow.build(statuses=statuses, moves=moves, initial_status="s0"))


def test_duplicate_names():
    workflow = simple(statuses=[("open", "triggered"), ("working", "active"), ("done", "resolved"), ("open", "active")])
    assert _has(_fields(workflow), "statuses.3.name", "duplicate status 'open'")


@pytest.mark.parametrize("name", ["", "Open", "in progress", "x" * 41, "naïve", "a-b", "done!"])
def test_invalid_names(name):
    workflow = simple(statuses=[("open", "triggered"), ("working", "active"), ("done", "resolved"), (name, "active")])
    assert _has(_fields(workflow), "statuses.3.name", "lowercase letters, digits or underscores")


@pytest.mark.parametrize("name", ["a", "x" * 40, "waiting_on_vendor", "level_2", "2nd_line"])
def test_valid_names(name):
    workflow = simple(
        statuses=[("open", "triggered"), ("working", "active"), ("done", "resolved"), (name, "active")],
        moves={"open": ["working", "done", name], "working": ["done"], name: ["done"]},
    )
    validate_workflow(workflow)


def test_invalid_category():
    workflow = Workflow(
        statuses=(
            StatusDefinition("open", "triggered"),
            StatusDefinition("done", "resolved"),
            StatusDefinition("odd", "weird"),  # type: ignore[arg-type]
        ),
        moves={"open": frozenset({"done", "odd"}), "odd": frozenset({"done"})},
        initial_status="open",
    )
    assert _has(_fields(workflow), "statuses.2.category", "must be one of")


def test_initial_status_missing():
    assert _has(_fields(simple(initial_status="start")), "initial_status", "'start' is not one of the statuses")


@pytest.mark.parametrize("initial", ["done"])
def test_initial_status_in_resolved_category(initial):
    fields = _fields(simple(initial_status=initial))
    assert _has(fields, "initial_status", "triggered or active")


def test_initial_status_in_closed_category():
    workflow = Workflow.build(
        statuses=[("gone", "closed"), ("open", "active"), ("done", "resolved")],
        moves={"gone": ["open"], "open": ["done"]},
        initial_status="gone",
    )
    assert _has(_fields(workflow), "initial_status", "triggered or active")


def test_initial_status_may_be_active():
    validate_workflow(simple(statuses=[("open", "active"), ("working", "active"), ("done", "resolved")]))


def test_move_from_unknown_status():
    workflow = simple(moves={"open": ["working", "done"], "working": ["done"], "ghost": ["done"]})
    assert _has(_fields(workflow), "moves.ghost", "'ghost' is not one of the statuses")


def test_move_to_unknown_status():
    workflow = simple(moves={"open": ["working", "done", "ghost"], "working": ["done"]})
    assert _has(_fields(workflow), "moves.open", "'ghost' is not one of the statuses")


def test_no_resolved_category():
    workflow = Workflow.build(
        statuses=[("open", "triggered"), ("working", "active"), ("gone", "closed")],
        moves={"open": ["working", "gone"], "working": ["gone"]},
        initial_status="open",
    )
    assert _has(_fields(workflow), "statuses", "resolved category")


def test_unreachable_status():
    workflow = simple(
        statuses=[("open", "triggered"), ("working", "active"), ("done", "resolved"), ("island", "active")],
        moves={"open": ["working", "done"], "working": ["done"], "island": ["done"]},
    )
    assert _has(_fields(workflow), "statuses.3.name", "'island' cannot be reached from 'open'")


def test_open_status_that_can_never_be_resolved():
    workflow = simple(moves={"open": ["working", "done"], "done": ["working"]})
    assert _has(_fields(workflow), "moves.working", "no resolved or closed status can be reached")


def test_every_problem_is_reported_at_once():
    workflow = Workflow.build(
        statuses=[("Bad", "active"), ("ok", "active"), ("ok", "active")],
        moves={"ghost": ["ok"]},
        initial_status="missing",
    )
    fields = _fields(workflow)
    assert {f["field"] for f in fields} >= {"statuses.0.name", "statuses.2.name", "initial_status", "moves.ghost"}


# ---------------------------------------------------------------- storage form


def test_to_dict_shape():
    data = DEFAULT_WORKFLOW.to_dict()
    assert data["initial_status"] == "new"
    assert data["statuses"][0] == {"name": "new", "category": "triggered"}
    assert data["moves"]["new"] == ["investigating", "identified", "monitoring", "resolved"]
    assert data["moves"]["resolved"] == ["investigating", "closed"]
    assert data["moves"]["closed"] == []
    assert json.loads(json.dumps(data)) == data


def test_default_round_trips_through_json():
    assert Workflow.from_dict(json.loads(json.dumps(DEFAULT_WORKFLOW.to_dict()))) == DEFAULT_WORKFLOW


def test_workflow_is_hashable_and_picklable():
    copy = Workflow.from_dict(DEFAULT_WORKFLOW.to_dict())
    assert hash(copy) == hash(DEFAULT_WORKFLOW)
    assert {copy, DEFAULT_WORKFLOW} == {DEFAULT_WORKFLOW}
    assert pickle.loads(pickle.dumps(DEFAULT_WORKFLOW)) == DEFAULT_WORKFLOW


def test_moves_are_read_only():
    with pytest.raises(TypeError):
        DEFAULT_WORKFLOW.moves["closed"] = frozenset({"new"})  # type: ignore[index]


def test_empty_moves_equal_missing_moves():
    a = Workflow.build(statuses=[("a", "triggered")], moves={"a": []}, initial_status="a")
    b = Workflow.build(statuses=[("a", "triggered")], moves={}, initial_status="a")
    assert a == b


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"moves": {}, "initial_status": "a"}, "statuses"),
        ({"statuses": "a", "initial_status": "a"}, "statuses"),
        ({"statuses": [{"name": 3, "category": "active"}], "initial_status": "a"}, "statuses.0.name"),
        ({"statuses": [{"name": "a", "category": "nope"}], "initial_status": "a"}, "statuses.0.category"),
        ({"statuses": ["a"], "initial_status": "a"}, "statuses.0.name"),
        ({"statuses": [], "moves": [], "initial_status": "a"}, "moves"),
        ({"statuses": [], "moves": {"a": "b"}, "initial_status": "a"}, "moves.a"),
        ({"statuses": [], "moves": {"a": [1]}, "initial_status": "a"}, "moves.a"),
        ({"statuses": []}, "initial_status"),
    ],
)
def test_from_dict_shape_errors(data, field):
    with pytest.raises(ValidationFailed) as caught:
        Workflow.from_dict(data)
    assert field in [f["field"] for f in caught.value.details["fields"]]


# ---------------------------------------------------------------- random workflows

status_names = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)
categories = st.sampled_from(CATEGORIES)


@st.composite
def workflows(draw):
    names = draw(st.lists(status_names, min_size=1, max_size=8, unique=True))
    statuses = [(name, draw(categories)) for name in names]
    moves = {name: draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True)) for name in names}
    initial = draw(st.sampled_from(names))
    return Workflow.build(statuses=statuses, moves=moves, initial_status=initial)


@st.composite
def workflow_and_move(draw):
    workflow = draw(workflows())
    known = st.sampled_from(workflow.status_names)
    current = draw(st.one_of(known, status_names, st.text(max_size=5)))
    target = draw(st.one_of(known, status_names, st.text(max_size=5)))
    return workflow, current, target


@settings(max_examples=400)
@given(workflow_and_move())
def test_plan_transition_agrees_with_the_table(case):
    workflow, current, target = case
    canonical = target.strip().lower()
    try:
        plan = plan_transition(workflow, current, target)
    except InvalidStatus:
        assert canonical not in workflow.status_names
        return
    except TransitionNotAllowed:
        assert canonical in workflow.status_names
        assert canonical != current
        assert workflow.has_status(current)
        assert canonical not in workflow.moves.get(current, frozenset())
        return
    assert plan.to_status == canonical
    assert plan.from_status == current
    if canonical == current:
        assert plan.no_op and not (plan.resolves or plan.reopens or plan.closes)
        return
    assert not plan.no_op
    assert canonical in workflow.moves.get(current, frozenset()) or not workflow.has_status(current)
    from_open = workflow.is_open(current)
    to_open = workflow.is_open(canonical)
    assert plan.resolves == (from_open and not to_open)
    assert plan.reopens == (not from_open and to_open)
    assert plan.closes == (workflow.category_of(canonical) == "closed" and workflow.category_of(current) != "closed")
    assert not (plan.resolves and plan.reopens)


@given(workflows())
def test_round_trip(workflow):
    data = json.loads(json.dumps(workflow.to_dict()))
    assert Workflow.from_dict(data) == workflow
    assert Workflow.from_dict(data).to_dict() == workflow.to_dict()


@given(workflows())
def test_validate_raises_only_validation_failed(workflow):
    try:
        validate_workflow(workflow)
    except ValidationFailed as error:
        assert error.details["fields"]
        return
    # A valid workflow: the initial status is open, and resolving is possible from every open status.
    assert workflow.is_open(workflow.initial_status)
    assert workflow.statuses_in("resolved")


@given(workflows())
def test_acknowledge_target_is_an_allowed_active_move(workflow):
    for name in workflow.status_names:
        target = acknowledge_target(workflow, name)
        if target is None:
            continue
        assert workflow.category_of(name) == "triggered"
        assert workflow.category_of(target) == "active"
        plan_transition(workflow, name, target)


@given(workflows())
def test_resolution_target_is_an_allowed_resolving_move(workflow):
    for name in workflow.status_names:
        target = resolution_target(workflow, name)
        if target is not None:
            assert plan_transition(workflow, name, target).resolves
