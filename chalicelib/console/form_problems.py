"""A request model's problems named by a console form's inputs.

The console validates forms through the API's request models, whose field paths are the JSON
body's (`urgency_rule.support_hours.start`, `levels.0.delay_minutes`). A form names its inputs
differently, and a PATCH model's `value | None` fields make pydantic report a problem once per
union branch (`repeat_count.constrained-int`, `repeat_count.none`). This puts each problem on the
input the person typed it in, once.
"""

from __future__ import annotations

from collections.abc import Callable

from chalicelib.errors import ValidationFailed

_BASIC_TYPES = frozenset({"str", "int", "bool", "float", "none", "list", "dict"})


def _is_branch(part: str) -> bool:
    """A union branch pydantic put in the path (a type, never a field name)."""
    return part in _BASIC_TYPES or "-" in part or "[" in part or part[:1].isupper()


def field_path(location: str) -> str | None:
    """The body path without union branches; None for the `null` branch (not a problem of its own)."""
    parts = location.split(".")
    if "none" in parts[1:]:
        return None
    return ".".join(part for part in parts if not _is_branch(part)) or location


def on_the_form(error: ValidationFailed, rename: Callable[[str], str]) -> ValidationFailed:
    """`error` with each problem under `rename(path)`, duplicates and the null branch left out."""
    details = error.details if isinstance(error.details, dict) else {}
    fields: list[dict[str, str]] = []
    for problem in details.get("fields", []):
        path = field_path(str(problem.get("field")))
        if path is None:
            continue
        moved = {**problem, "field": rename(path)}
        if moved not in fields:
            fields.append(moved)
    return ValidationFailed(error.message, details={**details, "fields": fields})
