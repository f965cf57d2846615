"""The schedule editor's requests, timed by bench/console_pages.py as the demo owner: the schedule's
page (shifts, cover requests, coverage gaps), the editor, a Preview (the whole form posted, two
weeks of final shifts laid out, nothing saved) and the on-call page (every schedule's and
policy's coverage)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import requests

Timed = Callable[[int, Callable[[], requests.Response], int], list[float]]


def preview_form(schedule: dict[str, Any], token: str) -> list[tuple[str, str]]:
    """The editor's form for `schedule` (an API answer's data) with Preview pressed."""
    zone = ZoneInfo(schedule["time_zone"])

    def local(moment: str | None) -> str:
        if not moment:
            return ""
        return datetime.fromisoformat(moment.replace("Z", "+00:00")).astimezone(zone).strftime("%Y-%m-%dT%H:%M")

    fields = [
        ("csrf_token", token),
        ("op", "preview"),
        ("name", schedule["name"]),
        ("time_zone", schedule["time_zone"]),
        ("team_id", schedule.get("team_id") or ""),
        ("lead", str(schedule.get("handoff_notice_lead_minutes") or 0)),
        ("version", str(schedule["version"])),
        ("layers", str(len(schedule["layers"]))),
    ]
    for n, layer in enumerate(schedule["layers"], start=1):
        key = f"layer{n}_"
        fields += [(key + "id", layer["layer_id"]), (key + "name", layer["name"])]
        fields += [(key + "member", member) for member in layer["members"]]
        fields += [
            (key + "rotation", layer["rotation"]),
            (key + "hours", str(layer.get("rotation_hours") or "")),
            (key + "handoff", layer["handoff_time"]),
            (key + "start", local(layer["start"])),
            (key + "end", local(layer.get("end"))),
        ]
        for restriction in layer.get("restrictions") or []:
            fields += [
                (key + "rkind", restriction["kind"]),
                (key + "rstartday", str(restriction.get("start_day") or 0)),
                (key + "rstart", restriction["start"]),
                (key + "rendday", str(restriction.get("end_day") or 0)),
                (key + "rend", restriction["end"]),
            ]
    return fields


def time_schedule_pages(
    timed: Timed, rounds: int, base: str, owner: requests.Session, api: dict[str, str], schedule_id: str
) -> dict[str, list[float]]:
    schedule = requests.get(f"{base}/api/v1/schedules/{schedule_id}", headers=api, timeout=30)
    schedule.raise_for_status()
    editor = owner.get(f"{base}/app/schedules/{schedule_id}/edit", timeout=30)
    editor.raise_for_status()
    token = editor.text.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    form = preview_form(schedule.json()["data"], token)
    return {
        "GET /app/on-call": timed(rounds, lambda: owner.get(f"{base}/app/on-call", timeout=30), 200),
        "GET /app/schedules/{id}": timed(
            rounds, lambda: owner.get(f"{base}/app/schedules/{schedule_id}", timeout=30), 200
        ),
        "GET /app/schedules/{id}/edit": timed(
            rounds, lambda: owner.get(f"{base}/app/schedules/{schedule_id}/edit", timeout=30), 200
        ),
        "POST .../edit (Preview)": timed(
            rounds, lambda: owner.post(f"{base}/app/schedules/{schedule_id}/edit", data=form, timeout=30), 200
        ),
    }
