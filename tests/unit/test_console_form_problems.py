"""Request-model problems moved onto a console form's inputs."""

from __future__ import annotations

import pytest

from chalicelib.console.form_problems import field_path, on_the_form
from chalicelib.errors import ValidationFailed


@pytest.mark.parametrize(
    ("location", "path"),
    [
        ("name", "name"),
        ("repeat_count.constrained-int", "repeat_count"),
        ("repeat_count.none", None),
        ("levels.list[LevelIn].0.delay_minutes", "levels.0.delay_minutes"),
        ("urgency_rule.support_hours.start", "urgency_rule.support_hours.start"),
        ("none", "none"),  # a field really called none is kept
    ],
)
def test_union_branches_leave_the_path(location: str, path: str | None) -> None:
    assert field_path(location) == path


def test_problems_are_renamed_once_each() -> None:
    error = ValidationFailed.for_fields(
        [
            {"field": "name.constrained-str", "message": "too short"},
            {"field": "name.none", "message": "Input should be None"},
            {"field": "name.function-after[check()]", "message": "too short"},
            {"field": "urgency_rule.support_hours.end", "message": "required"},
        ],
        "The request is invalid.",
    )
    moved = on_the_form(error, lambda path: "hours_end" if path.endswith(".end") else path)
    assert moved.message == "The request is invalid."
    assert moved.details == {
        "fields": [{"field": "name", "message": "too short"}, {"field": "hours_end", "message": "required"}]
    }
