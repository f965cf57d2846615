"""What an import could not carry over exactly, object by object: never dropped silently.

A note names the vendor object (kind, name, vendor id), what became of it (`skipped`: nothing
was made of it; `approximated`: it was made, but differs where the reason says), why, and the
nearest Tocsin equivalent a person can set up by hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Outcome = Literal["skipped", "approximated"]


@dataclass(frozen=True)
class Note:
    kind: str  # user, team, schedule, escalation_policy, service, integration, ...
    name: str
    vendor_id: str
    outcome: Outcome
    reason: str
    nearest: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "vendor_id": self.vendor_id,
            "outcome": self.outcome,
            "reason": self.reason,
            "nearest": self.nearest or None,
        }


@dataclass
class Notes:
    items: list[Note] = field(default_factory=list)

    def skip(self, kind: str, name: str, vendor_id: str, reason: str, nearest: str = "") -> None:
        self.items.append(Note(kind, name, vendor_id, "skipped", reason, nearest))

    def approximate(self, kind: str, name: str, vendor_id: str, reason: str, nearest: str = "") -> None:
        self.items.append(Note(kind, name, vendor_id, "approximated", reason, nearest))

    def of_kind(self, kind: str) -> list[Note]:
        return [note for note in self.items if note.kind == kind]


def text(notes: list[Note]) -> str:
    """The notes as a person reads them: one line per note, skipped first."""
    if not notes:
        return "Everything read from the vendor maps to Tocsin exactly.\n"
    lines = [f"Not carried over exactly ({len(notes)}):"]
    for note in sorted(notes, key=lambda n: (n.outcome != "skipped", n.kind, n.name.casefold())):
        sign = "!" if note.outcome == "skipped" else "~"
        line = f"  {sign} {note.outcome} {note.kind.replace('_', ' ')} {note.name!r} ({note.vendor_id}): {note.reason}"
        if note.nearest:
            line += f". Nearest in Tocsin: {note.nearest}"
        lines.append(line)
    return "\n".join(lines) + "\n"
