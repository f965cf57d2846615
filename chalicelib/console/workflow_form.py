"""The organization settings page's workflow and SLA forms: rows of inputs to and from the API's
request bodies (PUT /api/v1/settings/workflow, PUT /api/v1/settings/sla), and their problems put
back on the rows.

Workflow: one row per status (`status_<row>_name`, `status_<row>_category`, `status_<row>_remove`)
plus blank rows to add statuses, the initial status as a radio (`initial` = a row), and per row
the statuses it may move to as checkboxes (`moves_<row>` = other rows). Moves name rows, not
names, so renaming a status keeps its moves. A row with a blank name, or ticked to remove, is left
out with every move to or from it.

SLA: per severity `sla_<SEV>_ack` and `sla_<SEV>_resolve`, in minutes; blank clears the target.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from chalicelib.console.form_problems import on_the_form
from chalicelib.console.web import Ctx
from chalicelib.errors import ValidationFailed
from chalicelib.incident.sla import SlaSettings
from chalicelib.incident.workflow import CATEGORIES, Workflow
from chalicelib.severity import SEVERITIES

NEW_ROWS = 2
NAME_RULE = "must be 1 to 40 lowercase letters, digits or underscores"  # the model's pattern, in words
MAX_ROWS = 60
_STATUS_FIELD = re.compile(r"^statuses\.(\d+)\.(name|category)$")
_SLA_FIELD = re.compile(r"^per_severity\.([A-Z0-9]+)(?:\.(acknowledge|resolve)_within_minutes)?$")
CATEGORY_WORDS = {
    "triggered": "Triggered (new, not yet worked)",
    "active": "Active (being worked)",
    "resolved": "Resolved",
    "closed": "Closed",
}


@dataclass(frozen=True)
class StatusRow:
    row: int
    name: str
    category: str
    moves: tuple[int, ...]  # rows it may move to
    is_new: bool
    removed: bool = False  # ticked to remove (a refused form shows it ticked again)

    @property
    def title(self) -> str:
        return self.name.replace("_", " ") if self.name else f"New status {self.row + 1}"


def rows_of(workflow: Workflow) -> tuple[list[StatusRow], int]:
    """The stored workflow as rows (plus blank ones), and the initial status's row."""
    names = list(workflow.status_names)
    rows = [
        StatusRow(
            index,
            status.name,
            status.category,
            tuple(names.index(t) for t in workflow.targets(status.name) if t in names),
            False,
        )
        for index, status in enumerate(workflow.statuses)
    ]
    rows += [StatusRow(len(names) + extra, "", "active", (), True) for extra in range(NEW_ROWS)]
    initial = names.index(workflow.initial_status) if workflow.initial_status in names else 0
    return rows, initial


def _row_count(ctx: Ctx) -> int:
    raw = ctx.value("rows")
    return min(int(raw), MAX_ROWS) if raw.isdigit() else 0


def rows_sent(ctx: Ctx) -> tuple[list[StatusRow], int]:
    """The rows as the form sent them (to show them again after a refusal)."""
    rows = []
    count = _row_count(ctx)
    for row in range(count):
        moves = tuple(int(v) for v in ctx.values(f"moves_{row}") if v.isdigit() and int(v) < count)
        rows.append(
            StatusRow(
                row,
                ctx.value(f"status_{row}_name"),
                ctx.value(f"status_{row}_category", "active"),
                moves,
                ctx.value(f"status_{row}_new") == "1",
                ctx.value(f"status_{row}_remove") == "on",
            )
        )
    initial = ctx.value("initial")
    return rows, int(initial) if initial.isdigit() else 0


def workflow_body(ctx: Ctx) -> tuple[dict[str, Any], list[int]]:
    """The PUT body, and the form row of each status sent (to put its problems back on its row)."""
    rows, initial = rows_sent(ctx)
    kept = [r for r in rows if r.name and not r.removed]
    name_of = {r.row: r.name for r in kept}
    body = {
        "statuses": [{"name": r.name, "category": r.category} for r in kept],
        "moves": {r.name: [name_of[t] for t in r.moves if t in name_of and t != r.row] for r in kept},
        "initial_status": name_of.get(initial, ""),
    }
    return body, [r.row for r in kept]


def workflow_problems(error: ValidationFailed, kept_rows: list[int], names: dict[str, int]) -> ValidationFailed:
    """statuses.2.name -> status_<row>_name, moves.<name> -> moves_<row>, initial_status -> initial."""

    def rename(path: str) -> str:
        found = _STATUS_FIELD.match(path)
        if found and int(found.group(1)) < len(kept_rows):
            return f"status_{kept_rows[int(found.group(1))]}_{found.group(2)}"
        if path.startswith("moves.") and path[len("moves.") :] in names:
            return f"moves_{names[path[len('moves.') :]]}"
        if path == "initial_status":
            return "initial"
        return path

    moved = on_the_form(error, rename)
    details = moved.details if isinstance(moved.details, dict) else {}
    fields = [
        {**p, "message": NAME_RULE} if str(p.get("message", "")).startswith("String should match pattern") else p
        for p in details.get("fields", [])
    ]
    return ValidationFailed(moved.message, details={**details, "fields": fields})


def _text(minutes: int | None) -> str:
    return "" if minutes is None else str(minutes)


def sla_rows(sla: SlaSettings) -> list[dict[str, str]]:
    rows = []
    for severity in SEVERITIES:
        target = sla.target_for(severity)
        ack = target.acknowledge_within_minutes if target else None
        resolve = target.resolve_within_minutes if target else None
        rows.append({"severity": severity, "ack": _text(ack), "resolve": _text(resolve)})
    return rows


def sla_rows_sent(ctx: Ctx) -> list[dict[str, str]]:
    return [
        {"severity": s, "ack": ctx.value(f"sla_{s}_ack"), "resolve": ctx.value(f"sla_{s}_resolve")} for s in SEVERITIES
    ]


def sla_body(ctx: Ctx) -> dict[str, Any]:
    """Every severity's two targets; a blank one is null (cleared)."""
    return {
        "per_severity": {
            row["severity"]: {
                "acknowledge_within_minutes": row["ack"] or None,
                "resolve_within_minutes": row["resolve"] or None,
            }
            for row in sla_rows_sent(ctx)
        }
    }


_SLA_WORDS = {"acknowledge_within_minutes": "the acknowledge target", "resolve_within_minutes": "the resolve target"}


def sla_problems(error: ValidationFailed) -> ValidationFailed:
    """per_severity.SEV1.acknowledge_within_minutes -> sla_SEV1_ack, in words a person reads. (Not
    `on_the_form`: a severity's capital letters would pass for a union branch there.)"""
    details = error.details if isinstance(error.details, dict) else {}
    fields: list[dict[str, str]] = []
    for problem in details.get("fields", []):
        path = str(problem.get("field", ""))
        found = _SLA_FIELD.match(path)
        if found:
            path = f"sla_{found.group(1)}_{'resolve' if found.group(2) == 'resolve' else 'ack'}"
        message = str(problem.get("message", "")).removeprefix("Value error, ")
        for api_name, words in _SLA_WORDS.items():
            message = message.replace(api_name, words)
        moved = {**problem, "field": path, "message": message}
        if moved not in fields:
            fields.append(moved)
    return ValidationFailed(error.message, details={**details, "fields": fields})


CATEGORY_CHOICES = [(category, CATEGORY_WORDS[category]) for category in CATEGORIES]
