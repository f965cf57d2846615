"""The test account as Opsgenie's REST API describes its objects (opsgenie-oas)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tests.importers import account as spec

Raw = dict[str, Any]
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
ROLES = ("Owner", "Admin", "User", "User", "User", "Observer")


def user_id(index: int) -> str:
    return f"og-user-{index:03d}"


def _user_ref(index: int) -> Raw:
    return {"type": "user", "id": user_id(index), "username": spec.user_email(index)}


def users(size: spec.Size = spec.FULL) -> tuple[list[Raw], dict[str, list[Raw]], dict[str, list[Raw]]]:
    found, contacts, rules = [], {}, {}
    for index in range(size.users):
        uid, email, phone = user_id(index), spec.user_email(index), f"1-555010{index:04d}"
        role = ROLES[0] if index == 0 else ROLES[1 + index % 5]
        found.append(
            {
                "id": uid,
                "username": email,
                "fullName": spec.user_name(index),
                "role": {"name": role},
                "timeZone": spec.ZONES[index % 10],
                "blocked": False,
                "verified": True,
            }
        )
        contacts[uid] = [
            {"id": f"{uid}-e", "method": "email", "to": email, "status": {"enabled": True}},
            {"id": f"{uid}-s", "method": "sms", "to": phone, "status": {"enabled": True}},
            {"id": f"{uid}-v", "method": "voice", "to": phone, "status": {"enabled": True}},
            {"id": f"{uid}-m", "method": "mobile", "to": "iPhone", "status": {"enabled": True}},
        ]
        rules[uid] = [
            {
                "id": f"{uid}-r1",
                "name": "New alert",
                "actionType": "create-alert",
                "order": 0,
                "enabled": True,
                "criteria": {"type": "match-all"},
                "steps": [
                    {
                        "id": f"{uid}-s1",
                        "contact": {"method": "email", "to": email},
                        "sendAfter": {"timeAmount": 0, "timeUnit": "minutes"},
                        "enabled": True,
                    },
                    {
                        "id": f"{uid}-s2",
                        "contact": {"method": "sms", "to": phone},
                        "sendAfter": {"timeAmount": 5, "timeUnit": "minutes"},
                        "enabled": True,
                    },
                ],
            },
            {
                "id": f"{uid}-r2",
                "name": "On-call starts",
                "actionType": "schedule-start",
                "order": 1,
                "enabled": True,
                "steps": [],
            },
        ]
    return found, contacts, rules


def teams(built: spec.Built) -> tuple[list[Raw], dict[str, list[Raw]]]:
    found, routing = [], {}
    for index, name in enumerate(spec.TEAMS[: built.size.teams]):
        tid = f"og-team-{index}"
        found.append(
            {
                "id": tid,
                "name": name,
                "description": f"The {name} team",
                "members": [
                    {"user": _user_ref((index * 5 + k) % built.size.users), "role": "admin" if k == 0 else "user"}
                    for k in range(5)
                ],
            }
        )
        policy = built.policies[index % len(built.policies)]
        notify = {"type": "escalation", "id": policy["id"], "name": policy["name"]}
        if index == built.size.teams - 2:  # one team routes straight to a schedule
            routed = built.schedules[index % len(built.schedules)]
            notify = {"type": "schedule", "id": routed.id, "name": routed.name}
        rules = [{"id": f"{tid}-default", "name": "Default", "isDefault": True, "order": 1, "notify": notify}]
        if index == built.size.teams - 1:
            rules.insert(
                0,
                {
                    "id": f"{tid}-p1",
                    "name": "P1 to SRE",
                    "isDefault": False,
                    "order": 0,
                    "criteria": {
                        "type": "match-all-conditions",
                        "conditions": [{"field": "priority", "operation": "equals", "expectedValue": "P1"}],
                    },
                    "notify": {"type": "escalation", "id": built.policies[-1]["id"]},
                },
            )
        routing[tid] = rules
    return found, routing


def _rotation_kind(seconds: int) -> tuple[str, int]:
    if seconds % (7 * 86400) == 0:
        return "weekly", seconds // (7 * 86400)
    if seconds % 86400 == 0:
        return "daily", seconds // 86400
    return "hourly", seconds // 3600


def _restriction(layer: spec.Layer) -> Raw | None:
    if layer.daily:
        clock, minutes = layer.daily
        hours, mins = (int(part) for part in clock.split(":"))
        end = hours * 60 + mins + minutes
        return {
            "type": "time-of-day",
            "restriction": {"startHour": hours, "startMin": mins, "endHour": end // 60 % 24, "endMin": end % 60},
        }
    if layer.weekly:
        parts = []
        for day, clock, minutes in layer.weekly:
            hours, mins = (int(part) for part in clock.split(":"))
            end = (day - 1) * 1440 + hours * 60 + mins + minutes
            parts.append(
                {
                    "startDay": WEEKDAYS[day - 1],
                    "startHour": hours,
                    "startMin": mins,
                    "endDay": WEEKDAYS[end // 1440 % 7],
                    "endHour": end % 1440 // 60,
                    "endMin": end % 60,
                }
            )
        return {"type": "weekday-and-time-of-day", "restrictions": parts}
    return None


def schedules(built: spec.Built) -> tuple[list[Raw], dict[str, list[Raw]]]:
    found, overrides = [], {}
    for schedule in built.schedules:
        rotations = []
        for layer in schedule.layers:
            kind, length = _rotation_kind(layer.turn_seconds)
            start = layer.start if layer.start > built.now else layer.virtual_start
            rotation: Raw = {
                "id": f"{layer.id}-rot",
                "name": layer.name,
                "startDate": start.isoformat(),
                "type": kind,
                "length": length,
                "participants": [_user_ref(member) for member in layer.members],
            }
            if layer.end is not None:
                rotation["endDate"] = layer.end.isoformat()
            restriction = _restriction(layer)
            if restriction:
                rotation["timeRestriction"] = restriction
            rotations.append(rotation)
        found.append(
            {
                "id": schedule.id,
                "name": schedule.name,
                "description": "",
                "timezone": schedule.zone,
                "enabled": True,
                "ownerTeam": {"id": f"og-team-{schedule.team}", "name": spec.TEAMS[schedule.team]},
                "rotations": rotations,
            }
        )
        overrides[schedule.id] = [
            {
                "alias": f"{schedule.id}-o{number}",
                "user": _user_ref(user),
                "startDate": start.isoformat(),
                "endDate": end.isoformat(),
                "rotations": [],
            }
            for number, (user, start, end) in enumerate(schedule.overrides)
        ]
    return found, overrides


def escalations(built: spec.Built) -> list[Raw]:
    found = []
    for policy in built.policies:
        rules, at = [], 0
        for level in policy["levels"]:
            for kind, target in level["targets"]:
                recipient = (
                    {"type": "schedule", "id": built.schedules[target].id, "name": built.schedules[target].name}
                    if kind == "schedule"
                    else _user_ref(target)
                )
                rules.append(
                    {
                        "condition": "if-not-acked",
                        "notifyType": "default",
                        "delay": {"timeAmount": at, "timeUnit": "minutes"},
                        "recipient": recipient,
                    }
                )
            at += level["delay"]
        item: Raw = {
            "id": policy["id"],
            "name": policy["name"],
            "description": "",
            "rules": rules,
            "ownerTeam": {"id": f"og-team-{policy['team']}", "name": spec.TEAMS[policy["team"]]},
        }
        if policy["loops"]:
            item["repeat"] = {
                "waitInterval": policy["levels"][-1]["delay"],
                "count": policy["loops"],
                "resetRecipientStates": False,
                "closeAlertAfterAll": False,
            }
        found.append(item)
    return found


def account(now: datetime, size: spec.Size = spec.FULL) -> dict[str, Any]:
    built = spec.Built.at(now, size)
    teams_count = size.teams
    people, contacts, rules = users(size)
    team_list, routing = teams(built)
    scheduled, overrides = schedules(built)
    integrations = [
        {
            "id": f"og-int-{n:03d}",
            "name": f"{spec.TEAMS[n % teams_count]} {spec.OG_INTEGRATIONS[n % 9]} {n}",
            "type": spec.OG_INTEGRATIONS[n % 9],
            "enabled": n != size.integrations - 1,
            "teamId": f"og-team-{n % teams_count}",
        }
        for n in range(size.integrations)
    ]
    start = now.replace(second=0, microsecond=0) + timedelta(days=2)
    return {
        "users": people,
        "contacts": contacts,
        "notification_rules": rules,
        "teams": team_list,
        "routing_rules": routing,
        "schedules": scheduled,
        "overrides": overrides,
        "escalations": escalations(built),
        "services": [
            {
                "id": f"og-svc-{n:03d}",
                "name": name,
                "description": f"{name} service",
                "teamId": f"og-team-{n % teams_count}",
            }
            for n, name in enumerate(built.services)
        ],
        "integrations": integrations,
        "maintenances": [
            {
                "id": "og-mnt-1",
                "status": "planned",
                "description": "Payments freeze",
                "time": {
                    "type": "schedule",
                    "startDate": start.isoformat(),
                    "endDate": (start + timedelta(hours=4)).isoformat(),
                },
                "rules": [
                    {"state": "disabled", "entity": {"id": "og-int-000", "type": "integration"}},
                    {"state": "disabled", "entity": {"id": "og-policy-1", "type": "policy"}},
                ],
            },
        ],
        "heartbeats": [
            {
                "name": f"{spec.TEAMS[n]} cron",
                "description": "nightly job",
                "interval": 10 * (n + 1),
                "intervalUnit": "minutes",
                "enabled": True,
                "ownerTeam": {"id": f"og-team-{n}", "name": spec.TEAMS[n]},
            }
            for n in range(min(3, teams_count))
        ],
    }
