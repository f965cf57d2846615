"""The test account as PagerDuty's REST API v2 describes its objects (rest-openapiv3)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tests.importers import account as spec

Raw = dict[str, Any]


def _ref(kind: str, object_id: str, summary: str = "") -> Raw:
    return {"id": object_id, "type": f"{kind}_reference", "summary": summary}


def users(size: spec.Size = spec.FULL) -> list[Raw]:
    found = []
    for index in range(size.users):
        uid = f"PUSR{index:03d}"
        email = spec.user_email(index)
        methods = [
            {"id": f"{uid}E", "type": "email_contact_method", "label": "Work", "address": email},
            {
                "id": f"{uid}S",
                "type": "sms_contact_method",
                "label": "Mobile",
                "country_code": 1,
                "address": f"555010{index:04d}",
            },
            {
                "id": f"{uid}P",
                "type": "phone_contact_method",
                "label": "Mobile",
                "country_code": 1,
                "address": f"555010{index:04d}",
            },
            {"id": f"{uid}A", "type": "push_notification_contact_method", "label": "iPhone", "address": "token"},
        ]
        rules = [
            {
                "id": f"{uid}R1",
                "type": "assignment_notification_rule",
                "urgency": "high",
                "start_delay_in_minutes": 0,
                "contact_method": {"id": f"{uid}E", "type": "email_contact_method_reference"},
            },
            {
                "id": f"{uid}R2",
                "type": "assignment_notification_rule",
                "urgency": "high",
                "start_delay_in_minutes": 3,
                "contact_method": {"id": f"{uid}S", "type": "sms_contact_method_reference"},
            },
            {
                "id": f"{uid}R3",
                "type": "assignment_notification_rule",
                "urgency": "low",
                "start_delay_in_minutes": 0,
                "contact_method": {"id": f"{uid}E", "type": "email_contact_method_reference"},
            },
        ]
        role = "owner" if index == 0 else ("admin" if index % 10 == 1 else ("observer" if index % 13 == 5 else "user"))
        found.append(
            {
                "id": uid,
                "type": "user",
                "name": spec.user_name(index),
                "email": email,
                "role": role,
                "time_zone": spec.ZONES[index % len(spec.ZONES)],
                "contact_methods": methods,
                "notification_rules": rules,
            }
        )
    return found


def teams(size: spec.Size = spec.FULL) -> list[Raw]:
    return [
        {
            "id": f"PTEAM{index:02d}",
            "type": "team",
            "name": name,
            "description": f"The {name} team",
            "members": [
                {
                    "user": _ref("user", f"PUSR{(index * 5 + k) % size.users:03d}"),
                    "role": "manager" if k == 0 else "responder",
                }
                for k in range(5)
            ],
        }
        for index, name in enumerate(spec.TEAMS[: size.teams])
    ]


def _restrictions(layer: spec.Layer) -> list[Raw]:
    found = []
    if layer.daily:
        found.append(
            {
                "type": "daily_restriction",
                "start_time_of_day": f"{layer.daily[0]}:00",
                "duration_seconds": layer.daily[1] * 60,
            }
        )
    for day, clock, minutes in layer.weekly:
        found.append(
            {
                "type": "weekly_restriction",
                "start_day_of_week": day,
                "start_time_of_day": f"{clock}:00",
                "duration_seconds": minutes * 60,
            }
        )
    return found


def schedules(built: spec.Built) -> tuple[list[Raw], dict[str, list[Raw]]]:
    """The schedules (layers listed highest first, as PagerDuty does) and each one's overrides."""
    found, overrides = [], {}
    for schedule in built.schedules:
        layers = [
            {
                "id": layer.id,
                "name": layer.name,
                "start": layer.start.isoformat(),
                "end": layer.end.isoformat() if layer.end else None,
                "rotation_virtual_start": layer.virtual_start.isoformat(),
                "rotation_turn_length_seconds": layer.turn_seconds,
                "users": [{"user": _ref("user", f"PUSR{member:03d}")} for member in layer.members],
                "restrictions": _restrictions(layer),
            }
            for layer in reversed(schedule.layers)
        ]
        found.append(
            {
                "id": schedule.id,
                "type": "schedule",
                "name": schedule.name,
                "time_zone": schedule.zone,
                "description": "",
                "schedule_layers": layers,
                "teams": [_ref("team", f"PTEAM{schedule.team:02d}")],
            }
        )
        overrides[schedule.id] = [
            {
                "id": f"{schedule.id}O{number}",
                "start": start.isoformat(),
                "end": end.isoformat(),
                "user": _ref("user", f"PUSR{user:03d}"),
            }
            for number, (user, start, end) in enumerate(schedule.overrides)
        ]
    return found, overrides


def policies(built: spec.Built) -> list[Raw]:
    found = []
    for policy in built.policies:
        rules = []
        for number, level in enumerate(policy["levels"]):
            targets = [
                _ref("schedule", built.schedules[i].id) if kind == "schedule" else _ref("user", f"PUSR{i:03d}")
                for kind, i in level["targets"]
            ]
            rules.append(
                {"id": f"{policy['id']}R{number}", "escalation_delay_in_minutes": level["delay"], "targets": targets}
            )
        found.append(
            {
                "id": policy["id"],
                "type": "escalation_policy",
                "name": policy["name"],
                "escalation_rules": rules,
                "num_loops": policy["loops"],
                "teams": [_ref("team", f"PTEAM{policy['team']:02d}")],
            }
        )
    return found


def services(built: spec.Built) -> list[Raw]:
    found = []
    for index, name in enumerate(built.services):
        sid = f"PSVC{index:03d}"
        service: Raw = {
            "id": sid,
            "type": "service",
            "name": name,
            "description": f"{name} service",
            "status": "disabled" if index == 29 else "active",
            "escalation_policy": _ref("escalation_policy", built.policies[index % built.size.policies]["id"]),
            "teams": [_ref("team", f"PTEAM{index % built.size.teams:02d}")],
            "incident_urgency_rule": {"type": "constant", "urgency": ("high", "severity_based", "low")[index % 3]},
            "auto_resolve_timeout": 14400 if index % 5 == 0 else None,
            "acknowledgement_timeout": None,
            "integrations": [],
        }
        if index % 6 == 1:
            service["incident_urgency_rule"] = {
                "type": "use_support_hours",
                "during_support_hours": {"type": "constant", "urgency": "high"},
                "outside_support_hours": {"type": "constant", "urgency": "low"},
            }
            service["support_hours"] = {
                "type": "fixed_time_per_day",
                "time_zone": "America/New_York",
                "days_of_week": [1, 2, 3, 4, 5],
                "start_time": "09:00:00",
                "end_time": "17:00:00",
            }
        if index % 7 == 2:
            service["alert_grouping_parameters"] = {"type": "time", "config": {"timeout": 15}}
        found.append(service)
    for number in range(built.size.integrations):
        service = found[number % built.size.services]
        kind, vendor, label = spec.PD_INTEGRATIONS[number % len(spec.PD_INTEGRATIONS)]
        item: Raw = {
            "id": f"PINT{number:03d}",
            "type": kind,
            "name": label,
            "summary": label,
            "service": _ref("service", service["id"]),
            "integration_key": f"key{number:028d}",
        }
        if vendor:
            item["vendor"] = {"id": f"PVEN{number % 8}", "type": "vendor_reference", "summary": vendor}
        service["integrations"].append(item)
    return found


def maintenance_windows(built: spec.Built) -> list[Raw]:
    now = built.now.replace(second=0, microsecond=0)
    windows = [
        ("PMW001", now + timedelta(days=3), now + timedelta(days=3, hours=2), [0, 1], "Database upgrade"),
        ("PMW002", now - timedelta(hours=1), now + timedelta(hours=5), [4], "Network maintenance"),
    ]
    return [
        {
            "id": wid,
            "type": "maintenance_window",
            "start_time": start.isoformat(),
            "end_time": end.isoformat(),
            "description": text,
            "services": [_ref("service", f"PSVC{i:03d}") for i in services],
        }
        for wid, start, end, services, text in windows
    ]


def account(now: datetime, size: spec.Size = spec.FULL) -> dict[str, Any]:
    built = spec.Built.at(now, size)
    scheduled, overrides = schedules(built)
    return {
        "users": users(size),
        "teams": teams(size),
        "schedules": scheduled,
        "overrides": overrides,
        "escalation_policies": policies(built),
        "services": services(built),
        "maintenance_windows": maintenance_windows(built),
    }
