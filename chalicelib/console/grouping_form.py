"""A service's alert grouping on the service form: flat HTML fields <-> the API's `alert_grouping`,
and the setting in words.

Without script the form shows every grouping input at once, so the chosen type says which apply:
`none` takes neither window nor fields, `time` takes the window only. What is left in the other
inputs is not sent, as a person switching the type would expect. The body is validated by the
API's own `AlertGroupingIn` (inside ServiceCreate / ServicePatch) and the catalog's rules, so a
problem is the API's, shown next to the input it belongs to.
"""

from __future__ import annotations

import re
from typing import Any, Final

from chalicelib.catalog.grouping import CONTENT_FIELDS, LABEL_PREFIX, AlertGrouping
from chalicelib.console.web import Ctx

TYPE_LABELS: Final = {
    "none": "None: each alert opens its own incident",
    "time": "Time: alerts close in time share an incident",
    "content": "Content: alerts with the same fields share an incident",
}
FIELD_LABELS: Final = {
    "title": "Title",
    "source": "Source",
    "severity": "Severity",
    "integration_type": "Integration type",
    "dedup_key": "Dedup key",
}
# The API's field paths -> the form's inputs.
_PROBLEM_INPUTS: Final = (
    ("alert_grouping.window_minutes", "grouping_window"),
    ("alert_grouping.fields", "grouping_fields"),
    ("alert_grouping", "grouping_type"),
)
_LABEL_SPLIT = re.compile(r"[,\s]+")


def problem_input(path: str) -> str | None:
    """The form input an `alert_grouping...` problem belongs to; None for any other path."""
    for prefix, name in _PROBLEM_INPUTS:
        if path == prefix or path.startswith(prefix + "."):
            return name
    return None


def form_of(grouping: AlertGrouping) -> dict[str, Any]:
    """The form's values for a stored setting."""
    return {
        "grouping_type": grouping.type,
        "grouping_window": str(grouping.window_minutes) if grouping.window_minutes is not None else "",
        "grouping_fields": [name for name in grouping.fields if name in CONTENT_FIELDS],
        "grouping_labels": ", ".join(
            name.removeprefix(LABEL_PREFIX) for name in grouping.fields if name.startswith(LABEL_PREFIX)
        ),
    }


def form_sent(ctx: Ctx) -> dict[str, Any]:
    """What the person sent, to show again with its problems."""
    return {
        "grouping_type": ctx.value("grouping_type") or "none",
        "grouping_window": ctx.value("grouping_window"),
        "grouping_fields": ctx.values("grouping_fields"),
        "grouping_labels": ctx.value("grouping_labels"),
    }


def _fields(ctx: Ctx) -> list[str]:
    """Ticked fields in the form's order, then each named label as labels.<name>."""
    ticked = ctx.values("grouping_fields")
    labels = [name for name in _LABEL_SPLIT.split(ctx.value("grouping_labels")) if name]
    return [*ticked, *(name if name.startswith(LABEL_PREFIX) else LABEL_PREFIX + name for name in labels)]


def body(ctx: Ctx) -> dict[str, Any] | None:
    """The API's `alert_grouping`, or None when the form has no grouping inputs (nothing to change)."""
    if "grouping_type" not in ctx.form:
        return None
    kind = ctx.value("grouping_type")
    typed = ctx.value("grouping_window")
    # The API takes a JSON integer only; a form sends text, so digits become the number it means.
    window: int | str | None = int(typed) if typed.isdigit() else (typed or None)
    if kind == "time":
        return {"type": kind, "window_minutes": window}
    if kind == "content":
        return {"type": kind, "fields": _fields(ctx), "window_minutes": window}
    return {"type": kind or "none"}


def _minutes(count: int) -> str:
    return f"{count} minute" if count == 1 else f"{count} minutes"


def _joined(names: tuple[str, ...]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def words(grouping: AlertGrouping) -> str:
    """The setting as a sentence: what happens to a new alert of the service."""
    window = grouping.window_minutes
    if grouping.type == "time" and window is not None:
        return f"Time: alerts within {_minutes(window)} of the first join its incident"
    if grouping.type == "content":
        same = f"Content: alerts with the same {_joined(grouping.fields)}"
        if window is None:
            return same + " join the open incident of the first"
        return same + f" within {_minutes(window)} of the first join its incident"
    return "None: each alert opens its own incident"
