"""Event rules as people read and type them in the console.

`in_words` says a stored rule as a sentence ("If labels.env equals “staging” → suppress, note:
…"). `rule_body` turns the add-a-rule form (up to FORM_CONDITIONS condition rows, the actions,
continue) into the API's create body, and `form_field` names the input a problem of that body
belongs to, so the refused form shows it next to the field the person typed it in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from chalicelib.eventrule.rules import ALERT_FIELDS, LABEL_PREFIX, Rule

FORM_CONDITIONS = 3
LABEL_CHOICE = "label"  # the field select's choice for `labels.<name>` (the name in its own input)
FIELD_CHOICES: tuple[tuple[str, str], ...] = (
    *((name, name) for name in ALERT_FIELDS),
    (LABEL_CHOICE, "a label (name below)"),
)
OP_CHOICES: tuple[tuple[str, str], ...] = (
    ("equals", "equals"),
    ("contains", "contains"),
    ("matches", "matches (RE2 pattern)"),
    ("exists", "exists"),
)
_CONDITION_PROBLEM = re.compile(r"^conditions\.(\d+)\.(field|op|value)$")


def _quoted(value: str | None) -> str:
    return f"“{value}”" if value is not None else ""


def in_words(rule: Rule, service_names: Mapping[str, str]) -> str:
    """The rule as a sentence: its conditions, an arrow, its actions (and whether it continues)."""
    conditions = [
        f"{c.field} {c.op}" if c.value is None else f"{c.field} {c.op} {_quoted(c.value)}" for c in rule.conditions
    ]
    actions = rule.actions
    taken: list[str] = []
    if actions.drop:
        taken.append("drop")
    if actions.suppress:
        taken.append("suppress")
    if actions.severity:
        taken.append(f"severity {actions.severity}")
    if actions.route_to_service:
        name = service_names.get(actions.route_to_service_key or "", "")
        target = f"{name} ({actions.route_to_service})" if name else actions.route_to_service
        taken.append(f"route to {target}")
    if actions.note:
        taken.append(f"note: {actions.note}")
    head = "If " + " and ".join(conditions) if conditions else "Every alert"
    tail = "; then the next rules too" if rule.continues else ""
    return f"{head} → {', '.join(taken)}{tail}"


def rule_body(value: Callable[[str], str]) -> tuple[dict[str, Any], list[int]]:
    """The create body from the form (`value(name)` reads one input), and for each condition in
    the body the form row it came from. A row without a field is left out."""
    conditions: list[dict[str, Any]] = []
    rows: list[int] = []
    for row in range(FORM_CONDITIONS):
        chosen = value(f"cond_field_{row}")
        if not chosen:
            continue
        field = LABEL_PREFIX + value(f"cond_label_{row}") if chosen == LABEL_CHOICE else chosen
        condition: dict[str, Any] = {"field": field, "op": value(f"cond_op_{row}")}
        if value(f"cond_value_{row}") or condition["op"] != "exists":
            condition["value"] = value(f"cond_value_{row}")
        conditions.append(condition)
        rows.append(row)
    actions: dict[str, Any] = {"suppress": bool(value("suppress")), "drop": bool(value("drop"))}
    for name in ("severity", "route_to_service", "note"):
        if value(name):
            actions[name] = value(name)
    body: dict[str, Any] = {"conditions": conditions, "actions": actions, "continue": bool(value("continue"))}
    if value("description"):
        body["description"] = value("description")
    return body, rows


def form_field(path: str, rows: list[int]) -> str:
    """The form input of a problem at `path` of the create body."""
    found = _CONDITION_PROBLEM.match(path)
    if found is not None:
        index, part = int(found.group(1)), found.group(2)
        row = rows[index] if index < len(rows) else index
        return f"cond_{part}_{row}"
    if path.startswith("actions."):
        return path.removeprefix("actions.")
    return path
