"""Date-times in request bodies and queries: RFC 3339 strings with an offset, nothing else, and for
scheduling fields a plausible year (chalicelib.model_base.DateTimeIn / ScheduleTime)."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import AwareDatetime, BaseModel

from tests.model_walk import Leaf, arms, refused_at, request_models

# Scheduling fields: when something happens (maintenance windows, rotations, overrides, the
# shift window asked for). The years 2000-2100 are accepted there; other date-times (listing
# bounds, an imported record's creation time) take any year from 1970.
SCHEDULING = {
    ("LayerIn", "start"),
    ("LayerIn", "end"),
    ("OverrideCreate", "start"),
    ("OverrideCreate", "end"),
    ("ShiftsQuery", "since"),
    ("ShiftsQuery", "until"),
    ("MaintenanceCreate", "scheduled_start"),
    ("MaintenanceCreate", "scheduled_end"),
    ("MaintenancePatch", "scheduled_start"),
    ("MaintenancePatch", "scheduled_end"),
    ("MaintenanceWindowCreate", "start"),
    ("MaintenanceWindowCreate", "end"),
    ("MaintenanceWindowPatch", "start"),
    ("MaintenanceWindowPatch", "end"),
    ("SwapRequestCreate", "start"),  # the span of one's shift asked to be covered
    ("SwapRequestCreate", "end"),
}


def leaves(model: type[BaseModel], value: Any, seen: frozenset[type] = frozenset()) -> Iterator[Leaf]:
    for name, field in model.model_fields.items():
        for inner, location, owner, leaf in _values(field.annotation, value, seen | {model}):
            yield (owner or model.__qualname__, leaf or name, (name, *location), {name: inner})


def _values(annotation: Any, value: Any, seen: frozenset[type]) -> Iterator[tuple[Any, tuple[Any, ...], str, str]]:
    for arm in arms(annotation):
        if arm in (datetime, AwareDatetime):
            yield value, (), "", ""
        elif typing.get_origin(arm) in (list, tuple):
            for inner, location, owner, leaf in _values(typing.get_args(arm)[0], value, seen):
                yield [inner], (0, *location), owner, leaf
        elif isinstance(arm, type) and issubclass(arm, BaseModel) and arm not in seen:
            for owner, leaf, location, document in leaves(arm, value, seen):
                yield document, location, owner, leaf


MODELS = request_models()
ALL_LEAVES = [leaf[:2] for model in MODELS for leaf in leaves(model, "")]


def test_the_scheduling_fields_exist() -> None:
    assert set(ALL_LEAVES) >= SCHEDULING


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__qualname__)
@pytest.mark.parametrize(
    "value",
    [
        -1,  # issue #13: a maintenance window at -1 was accepted as 1969
        0,
        1_790_000_000,
        1.5e9,
        "1790000000",
        "2026-11-22T12:00:00",  # no offset
        "2026-11-22 12:00",
        "2026-11-22",
        "12:00:00Z",
        "2026-W47-7T12:00:00Z",
        "2026-11-22T12:00:00+0200",
        "1969-12-31T23:59:59Z",
        "0001-01-01T00:00:00Z",
        True,
    ],
)
def test_every_request_date_time_is_an_rfc_3339_string_with_an_offset(model: type[BaseModel], value: Any) -> None:
    for owner, field, location, document in leaves(model, value):
        assert refused_at(model, document, location), (owner, field, value)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__qualname__)
@pytest.mark.parametrize("value", ["2026-11-22T12:00:00Z", "2026-11-22T14:00:00.123+02:00", "2026-11-22t12:00:00z"])
def test_rfc_3339_with_an_offset_is_accepted(model: type[BaseModel], value: str) -> None:
    for owner, field, location, document in leaves(model, value):
        assert not refused_at(model, document, location), (owner, field, value)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__qualname__)
@pytest.mark.parametrize("value", ["1999-12-31T23:59:59Z", "2101-01-01T00:00:00Z"])
def test_scheduling_fields_refuse_absurd_years(model: type[BaseModel], value: str) -> None:
    for owner, field, location, document in leaves(model, value):
        assert refused_at(model, document, location) == ((owner, field) in SCHEDULING), (owner, field, value)


def test_the_offset_is_kept_as_the_same_instant() -> None:
    from chalicelib.statuspage.models import MaintenanceCreate

    window = MaintenanceCreate.model_validate(
        {"title": "DB", "scheduled_start": "2026-11-22T14:00:00+02:00", "scheduled_end": "2026-11-22T13:00:00Z"}
    )
    assert window.scheduled_start == datetime(2026, 11, 22, 12, tzinfo=UTC)
