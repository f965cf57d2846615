"""The cut-over sheet: for each vendor integration, what to put in its sender to send to Tocsin,
and which senders keep their payload (PagerDuty Events v2 at /v2/enqueue; the Opsgenie drop-in).
A key is shown by Tocsin once, when the integration is made: a later run names the integration
and how to issue a new key instead."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.client.importers.context import Intake, Translation
from chalicelib.client.importers.integrations import SENDER_STEPS
from chalicelib.client.reconcile import Outcome

VENDOR_NAMES = {"pagerduty": "PagerDuty", "opsgenie": "Opsgenie"}


@dataclass(frozen=True)
class Line:
    intake: Intake
    integration_id: str | None
    url: str | None  # shown once: only on the run that made the integration
    key: str | None
    key_hint: str | None
    steps: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "vendor_id": self.intake.vendor_id,
            "vendor_name": self.intake.vendor_name,
            "vendor_type": self.intake.vendor_type,
            "integration": self.intake.name,
            "integration_id": self.integration_id,
            "type": self.intake.type,
            "service": self.intake.service,
            "keeps_payload": self.intake.keeps_payload,
            "url": self.url,
            "routing_key": self.key,
            "key_hint": self.key_hint,
            "steps": self.steps,
        }


@dataclass(frozen=True)
class Sheet:
    vendor: str
    base_url: str
    lines: list[Line]
    heartbeats: list[dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "senders": [line.as_dict() for line in self.lines],
            "heartbeats": self.heartbeats,
            "note": self.caution(),
        }

    def caution(self) -> str:
        name = VENDOR_NAMES.get(self.vendor, self.vendor)
        return (
            f"Every sender still points at {name}: nothing reaches Tocsin until you switch it, so the imported "
            "schedules and policies page nobody before the cut-over. Imported heartbeats are paused until their "
            "pinger is switched."
        )


def sheet(
    translation: Translation,
    outcome: Outcome | None,
    integrations: list[dict[str, Any]],
    heartbeats: list[dict[str, Any]],
    *,
    vendor: str,
    base_url: str,
) -> Sheet:
    issued = {(i.section, i.name.casefold()): i.values for i in (outcome.issued if outcome else [])}
    by_name = {str(i["name"]).casefold(): i for i in integrations if i.get("state", "active") == "active"}
    base = base_url.rstrip("/")
    lines = []
    for intake in translation.intakes:
        shown = issued.get(("integrations", intake.name.casefold()), {})
        found = by_name.get(intake.name.casefold(), {})
        lines.append(
            Line(
                intake,
                found.get("id"),
                shown.get("url"),
                shown.get("routing_key"),
                found.get("routing_key_hint"),
                SENDER_STEPS.get(intake.type, SENDER_STEPS["custom"]).format(base=base),
            )
        )
    beats = []
    wanted = {name.casefold() for name in translation.heartbeats}
    for beat in heartbeats:
        if str(beat.get("name", "")).casefold() in wanted:
            shown = issued.get(("heartbeats", str(beat["name"]).casefold()), {})
            beats.append(
                {
                    "name": beat["name"],
                    "id": beat.get("id"),
                    "ping_url": shown.get("ping_url"),
                    "enabled": beat.get("enabled"),
                }
            )
    return Sheet(vendor, base, lines, beats)


def text(sheet: Sheet) -> str:
    name = VENDOR_NAMES.get(sheet.vendor, sheet.vendor)
    lines = ["", f"Cut-over sheet: switch each sender from {name} to Tocsin", sheet.caution(), ""]
    groups = (
        ("Keep the payload; change only the URL and key:", [line for line in sheet.lines if line.intake.keeps_payload]),
        ("Switch to Tocsin's format for the sender:", [line for line in sheet.lines if not line.intake.keeps_payload]),
    )
    for title, members in groups:
        if not members:
            continue
        lines.append(title)
        for line in members:
            lines.append(f"  {line.intake.vendor_name} ({name} {line.intake.vendor_id}, {line.intake.vendor_type})")
            lines.append(f"    -> Tocsin integration {line.intake.name!r} ({line.intake.type}): {line.steps}")
            if line.key and line.intake.type == "pagerduty":
                lines.append(f"       events URL: {sheet.base_url}/v2/enqueue   routing key: {line.key}")
            elif line.key and line.intake.type == "opsgenie":
                lines.append(f"       API URL: {sheet.base_url}   GenieKey: {line.key}")
            elif line.url or line.key:
                lines.append(f"       URL: {line.url}")
            else:
                hint = f" (its key starts {line.key_hint})" if line.key_hint else ""
                lines.append(
                    f"       made by an earlier run{hint}; its key was shown then. A new URL and key: "
                    f"POST {sheet.base_url}/api/v1/integrations/{line.integration_id or '<id>'}/regenerate"
                )
    if sheet.heartbeats:
        lines.append("Heartbeats (paused: point the pinger at the URL, then resume the heartbeat):")
        for beat in sheet.heartbeats:
            where = beat["ping_url"] or (
                f"shown when it was made; a new one: POST {sheet.base_url}/api/v1/heartbeats/{beat['id']}/regenerate"
            )
            state = "enabled" if beat.get("enabled") else "paused"
            lines.append(f"  {beat['name']} ({state}): {where}")
    return "\n".join(lines) + "\n"
