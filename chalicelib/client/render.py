"""A plan as a person reads it (a diff, object by object), and as JSON for a program."""

from __future__ import annotations

import json
from typing import Any

from chalicelib.client.document import SECTIONS
from chalicelib.client.planner import Action, Change, Plan
from chalicelib.client.reconcile import Outcome

SIGNS = {"create": "+", "update": "~", "delete": "-", "skip": "!"}
MAX_SHOWN = 200  # characters of one value before it is cut


def _singular(section: str) -> str:
    return dict(SECTIONS)[section].kind.replace("_", " ")


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def _list_lines(change: Change) -> list[str]:
    before = change.before if isinstance(change.before, list) else []
    after = change.after if isinstance(change.after, list) else []
    if before and len(before) == len(after) and all(isinstance(item, dict) for item in [*before, *after]):
        # The same number of objects (layers, levels): what changed in each, by its place.
        return [
            line
            for index, (old, new) in enumerate(zip(before, after, strict=True))
            if old != new
            for line in _change_lines(Change(f"{change.field}[{index}]", old, new))
        ]
    lines = [f"      {change.field}:"]
    lines += [f"        - {_short(item)}" for item in before if item not in after]
    lines += [f"        + {_short(item)}" for item in after if item not in before]
    if len(lines) == 1:  # the same items in another order
        lines[0] += f" reordered: {_short(after)}"
    return lines


def _change_lines(change: Change) -> list[str]:
    if isinstance(change.before, list) or isinstance(change.after, list):
        return _list_lines(change)
    if isinstance(change.before, dict) and isinstance(change.after, dict):
        keys = list(dict.fromkeys([*change.after, *change.before]))
        return [
            line
            for key in keys
            if change.before.get(key) != change.after.get(key)
            for line in _change_lines(Change(f"{change.field}.{key}", change.before.get(key), change.after.get(key)))
        ]
    return [f"      {change.field}: {_short(change.before)} -> {_short(change.after)}"]


def _headline(action: Action) -> str:
    kind = action.kind.replace("_", " ")
    text = f"  {SIGNS[action.op]} {kind} {action.label!r}"
    if action.op == "update" and action.current_key and action.current_key != action.key:
        text += " (found by its source)"
    if action.position is not None and action.op == "create":
        text += f" at position {action.position}"
    if action.reason:
        text += f": {action.reason}"
    return text


def text(plan: Plan, *, organization: str = "", prune: bool = False) -> str:
    lines: list[str] = []
    if organization:
        lines.append(f"Organization: {organization}")
    for action in plan.actions:
        lines.append(_headline(action))
        if action.op in ("update", "skip"):
            for change in action.changes:
                lines += _change_lines(change)
    counts = {op: sum(1 for a in plan.actions if a.op == op) for op in SIGNS}
    if plan.kept and not prune:
        lines.append(
            f"  {len(plan.kept)} object(s) of the organization are not in the document and are kept "
            "(--prune deletes them): "
            + ", ".join(f"{_singular(section)} {name!r}" for section, name in plan.kept[:10])
            + (" ..." if len(plan.kept) > 10 else "")
        )
    if not plan.changes and counts["skip"]:
        lines.append(f"No changes can be made: {counts['skip']} skipped (marked !, with what to do).")
    elif not plan.changes:
        lines.append("No changes. The organization matches the document.")
    else:
        lines.append(
            f"Plan: {counts['create']} to create, {counts['update']} to update, {counts['delete']} to delete"
            + (f", {counts['skip']} skipped." if counts["skip"] else ".")
        )
    return "\n".join(lines) + "\n"


def as_json(plan: Plan, *, organization: str = "") -> str:
    body = {
        "organization": organization,
        "changes_pending": bool(plan.changes),
        "summary": {op: sum(1 for a in plan.actions if a.op == op) for op in SIGNS},
        "actions": [
            {
                "op": action.op,
                "kind": action.kind,
                "key": action.key,
                "name": action.label,
                "reason": action.reason or None,
                "position": action.position,
                "changes": [{"field": c.field, "before": c.before, "after": c.after} for c in action.changes],
            }
            for action in plan.actions
        ],
        "kept": [{"section": section, "name": name} for section, name in plan.kept],
    }
    return json.dumps(body, indent=2, default=str, ensure_ascii=False) + "\n"


def outcome_text(outcome: Outcome) -> str:
    if not outcome.done:
        return "No changes. The organization matches the document.\n"
    counts = {op: sum(1 for a in outcome.done if a.op == op) for op in ("create", "update", "delete")}
    lines = [f"Applied: {counts['create']} created, {counts['update']} updated, {counts['delete']} deleted."]
    if outcome.issued:
        lines.append("Shown once, keep them now (put each URL or key in its sender):")
        for issued in outcome.issued:
            values = ", ".join(f"{name}={value}" for name, value in issued.values.items())
            lines.append(f"  {_singular(issued.section)} {issued.name!r}: {values}")
    return "\n".join(lines) + "\n"
