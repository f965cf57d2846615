"""An import's plan as a person reads it (a table: one row per object to create, update or skip,
and per vendor object not carried over exactly) and as JSON for a program."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from chalicelib.client import document as doc
from chalicelib.client.importers.context import Translation
from chalicelib.client.importers.notes import Note
from chalicelib.client.planner import Action, Plan

VERBS = {"create": "create", "update": "update", "delete": "delete", "skip": "skip"}
COLUMNS = ("ACTION", "KIND", "NAME", "FROM", "WHY / WHAT CHANGES")
WIDTHS = (12, 18, 40, 14)
GROUPED_AFTER = 3  # more notes than this with one reason print as one row


def _sources(document: doc.Document) -> dict[tuple[str, str], str]:
    found: dict[tuple[str, str], str] = {}
    for section, _ in doc.SECTIONS:
        for item in document.section(section) or []:
            if item.source is not None:
                found[(section, item.key())] = item.source.id
    return found


def _changes(action: Action) -> str:
    if action.reason:
        return action.reason
    return "changes " + ", ".join(dict.fromkeys(change.field.split("[")[0] for change in action.changes))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _row(cells: tuple[str, str, str, str, str]) -> str:
    fixed = [_cut(cell, width).ljust(width) for cell, width in zip(cells[:4], WIDTHS, strict=True)]
    return "  ".join([*fixed, cells[4]]).rstrip()


def _note_rows(notes: list[Note]) -> list[tuple[str, str, str, str, str]]:
    rows: list[tuple[str, str, str, str, str]] = []
    groups: dict[tuple[str, str, str, str], list[Note]] = {}
    for note in notes:
        groups.setdefault((note.outcome, note.kind, note.reason, note.nearest), []).append(note)
    for (outcome, kind, reason, nearest), members in sorted(
        groups.items(), key=lambda item: (item[0][0] != "skipped", item[0][1], item[1][0].name.casefold())
    ):
        why = reason + (f" (nearest in Tocsin: {nearest})" if nearest else "")
        verb = "not imported" if outcome == "skipped" else "approximated"
        if len(members) > GROUPED_AFTER:
            names = ", ".join(note.name for note in members[:2])
            rows.append((verb, kind.replace("_", " "), f"{len(members)} of them", "", f"{why}; e.g. {names}, ..."))
            continue
        rows += [(verb, kind.replace("_", " "), note.name, note.vendor_id, why) for note in members]
    return rows


def table(plan: Plan, translation: Translation, *, vendor: str, counts: dict[str, int]) -> str:
    sources = _sources(translation.document)
    total = sum(len(translation.document.section(section) or []) for section, _ in doc.SECTIONS)
    changed = [action for action in plan.actions]
    unchanged = total - len({(a.section, a.key) for a in changed if a.op != "delete"})
    read = ", ".join(f"{count} {name}" for name, count in counts.items())
    lines = [f"Read from {vendor}: {read}.", "", _row(COLUMNS)]
    for action in changed:
        lines.append(
            _row(
                (
                    VERBS[action.op],
                    action.kind.replace("_", " "),
                    action.label,
                    sources.get((action.section, action.key), ""),
                    "" if action.op == "create" else _changes(action),
                )
            )
        )
    lines += [_row(row) for row in _note_rows(translation.notes.items)]
    ops = Counter(action.op for action in changed)
    outcomes = Counter(note.outcome for note in translation.notes.items)
    lines += [
        "",
        f"Plan: {ops['create']} to create, {ops['update']} to update, {unchanged} unchanged; "
        f"{outcomes['skipped']} vendor object(s) not imported, {outcomes['approximated']} approximated.",
    ]
    if not plan.changes:
        lines.append(f"No changes: the organization already matches the {vendor} setup.")
    return "\n".join(lines) + "\n"


def as_json(plan: Plan, translation: Translation, *, vendor: str, counts: dict[str, int]) -> dict[str, Any]:
    sources = _sources(translation.document)
    acted = {(action.section, action.key) for action in plan.actions}
    objects: list[dict[str, Any]] = [
        {
            "action": action.op,
            "kind": action.kind,
            "name": action.label,
            "vendor_id": sources.get((action.section, action.key)),
            "reason": action.reason or None,
            "changes": [{"field": c.field, "before": c.before, "after": c.after} for c in action.changes],
        }
        for action in plan.actions
    ]
    for section, model in doc.SECTIONS:
        for item in translation.document.section(section) or []:
            if (section, item.key()) not in acted:
                label = getattr(item, "email", None) or getattr(item, "name", None) or item.key()
                objects.append(
                    {
                        "action": "unchanged",
                        "kind": model.kind,
                        "name": label,
                        "vendor_id": item.source.id if item.source else None,
                        "reason": None,
                        "changes": [],
                    }
                )
    summary = Counter(str(entry["action"]) for entry in objects)
    return {
        "vendor": vendor,
        "read": counts,
        "changes_pending": bool(plan.changes),
        "summary": {
            "create": summary["create"],
            "update": summary["update"],
            "unchanged": summary["unchanged"],
            "skipped": sum(1 for note in translation.notes.items if note.outcome == "skipped"),
            "approximated": sum(1 for note in translation.notes.items if note.outcome == "approximated"),
        },
        "objects": objects,
        "not_carried_over": [note.as_dict() for note in translation.notes.items],
    }


def dumps(body: dict[str, Any]) -> str:
    return json.dumps(body, indent=2, default=str, ensure_ascii=False) + "\n"
