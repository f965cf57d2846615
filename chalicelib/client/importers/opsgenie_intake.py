"""Where Opsgenie alerts land in Tocsin: routing, services, integrations, heartbeats, maintenance.
Pure.

A team's default routing rule names what pages for the team's alerts: an escalation (its
policy) or a schedule (a one-level policy on that schedule, made here). The team's services get
that policy. An integration or heartbeat that belongs to a team opens incidents on the team's
service: its one Opsgenie service, or else a service named after the team, made here. Opsgenie
maintenance silences integrations (and alert policies); Tocsin's silences services, so a window
covers the services its integrations open incidents on."""

from __future__ import annotations

from chalicelib.client import document as doc
from chalicelib.client.importers import integrations as kinds
from chalicelib.client.importers.accounts import OpsgenieAccount
from chalicelib.client.importers.context import Context, Translation, clean_name
from chalicelib.client.importers.context import Intake as SheetLine
from chalicelib.client.importers.opsgenie_schedules import when

UNIT_SECONDS = {"minutes": 60, "hours": 3600, "days": 86400}
INTERVAL_MIN, INTERVAL_MAX = 60, 7 * 86400
ROUTED_DELAY = 30  # a routed schedule's one level: minutes before the policy is exhausted


class Intake:
    def __init__(self, account: OpsgenieAccount, ctx: Context, translation: Translation) -> None:
        self.account = account
        self.ctx = ctx
        self.translation = translation
        self.team_policy: dict[str, str | None] = {}  # vendor team id -> policy name
        self.team_services: list[doc.Service] = []
        self._team_service: dict[str, str] = {}
        self._integration_service: dict[str, str] = {}

    # --- routing --------------------------------------------------------------------------------

    def routing_policies(self) -> list[doc.EscalationPolicy]:
        made: list[doc.EscalationPolicy] = []
        for team in self.account.teams:
            team_id, team_name = str(team["id"]), self.ctx.teams[str(team["id"])]
            rules = team.get("routingRules")
            if rules is None:
                self.team_policy[team_id] = self._owned_escalation(team_id, team_name)
                continue
            for rule in rules:
                if not rule.get("isDefault"):
                    self.ctx.notes.skip(
                        "routing_rule",
                        f"{team_name}: {rule.get('name') or rule.get('id')}",
                        str(rule.get("id")),
                        "routing by alert content or time",
                        "an event rule that routes to another service",
                    )
            default = next((r for r in rules if r.get("isDefault")), rules[-1] if rules else None)
            notify = (default or {}).get("notify") or {}
            kind, target_id = notify.get("type"), str(notify.get("id"))
            if kind == "escalation":
                self.team_policy[team_id] = self.ctx.policies.get(target_id)
            elif kind == "schedule" and target_id in self.ctx.schedules:
                policy = self._schedule_policy(target_id)
                made.append(policy)
                self.team_policy[team_id] = policy.name
            else:
                self.team_policy[team_id] = None
                if default is not None:
                    self.ctx.notes.approximate(
                        "team", team_name, team_id, f"its alerts page {kind or 'nobody'}: its services get no policy"
                    )
        return made

    def _owned_escalation(self, team_id: str, team_name: str) -> str | None:
        owned = [e for e in self.account.escalations if str((e.get("ownerTeam") or {}).get("id")) == team_id]
        chosen = next((self.ctx.policies[str(e["id"])] for e in owned if str(e["id"]) in self.ctx.policies), None)
        self.ctx.notes.approximate(
            "team",
            team_name,
            team_id,
            "its routing rules could not be read: its services get "
            + (f"the escalation it owns, {chosen!r}" if chosen else "no policy"),
        )
        return chosen

    def _schedule_policy(self, schedule_id: str) -> doc.EscalationPolicy:
        schedule = self.ctx.schedules[schedule_id]
        name = self.ctx.name("escalation_policy", f"{schedule} (routing)", schedule_id)
        return doc.EscalationPolicy(
            name=name,
            levels=[doc.Level(delay_minutes=ROUTED_DELAY, targets=[doc.Target(schedule=schedule)])],
            source=self.ctx.source(f"routing:{schedule_id}"),
        )

    # --- services -------------------------------------------------------------------------------

    def services(self) -> list[doc.Service]:
        found: list[doc.Service] = []
        by_team: dict[str, list[str]] = {}
        for raw in self.account.services or []:
            vendor_id, team_id = str(raw["id"]), str(raw.get("teamId"))
            name = self.ctx.name("service", raw.get("name"), vendor_id)
            self.ctx.services[vendor_id] = name
            by_team.setdefault(team_id, []).append(name)
            found.append(
                doc.Service(
                    name=name,
                    description=clean_name(raw.get("description"), "") or None,
                    team=self.ctx.teams.get(team_id),
                    escalation_policy=self.team_policy.get(team_id),
                    source=self.ctx.source(vendor_id),
                )
            )
        for team_id, names in by_team.items():
            if len(names) == 1:
                self._team_service[team_id] = names[0]
        return found

    def team_service(self, team_id: str | None) -> str | None:
        """The service a team's alerts land on (made on first use); None without a team."""
        if not team_id or team_id not in self.ctx.teams:
            only = list(self.ctx.teams)
            if len(only) != 1:
                return None
            team_id = only[0]
        if team_id not in self._team_service:
            team = self.ctx.teams[team_id]
            name = self.ctx.name("service", team, f"team:{team_id}")
            self._team_service[team_id] = name
            self.team_services.append(
                doc.Service(
                    name=name,
                    description=f"Alerts Opsgenie routed to the team {team}",
                    team=team,
                    escalation_policy=self.team_policy.get(team_id),
                    source=self.ctx.source(f"team:{team_id}"),
                )
            )
        return self._team_service[team_id]

    # --- integrations and heartbeats ------------------------------------------------------------

    def integrations(self) -> list[doc.Integration]:
        found: list[doc.Integration] = []
        for raw in self.account.integrations:
            vendor_id, kind = str(raw["id"]), str(raw.get("type") or "")
            label = str(raw.get("name") or kind)
            mapped = kinds.opsgenie(kind, self.ctx.existing.integration_types)
            if mapped.type is None:
                self.ctx.notes.skip("integration", label, vendor_id, mapped.reason, mapped.nearest)
                continue
            if mapped.reason:
                self.ctx.notes.approximate("integration", label, vendor_id, mapped.reason, mapped.nearest)
            service = self.team_service(raw.get("teamId"))
            if service is None:
                self.ctx.notes.approximate(
                    "integration", label, vendor_id, "it belongs to no team: alerts must name their service"
                )
            if raw.get("enabled") is False:
                self.ctx.notes.approximate("integration", label, vendor_id, "disabled at Opsgenie; imported active")
            name = self.ctx.name("integration", label, vendor_id)
            if service is not None:
                self._integration_service[vendor_id] = service
            found.append(
                doc.Integration(name=name, type=mapped.type, service=service, source=self.ctx.source(vendor_id))
            )
            self.translation.intakes.append(
                SheetLine(vendor_id, label, kind, name, mapped.type, mapped.keeps_payload, service)
            )
        return found

    def heartbeats(self) -> list[doc.Heartbeat]:
        found: list[doc.Heartbeat] = []
        for raw in self.account.heartbeats:
            label = str(raw.get("name") or "")
            seconds = int(raw.get("interval") or 1) * UNIT_SECONDS.get(str(raw.get("intervalUnit")), 60)
            service = self.team_service((raw.get("ownerTeam") or {}).get("id"))
            if service is None:
                self.ctx.notes.skip(
                    "heartbeat", label, label, "it belongs to no team: a Tocsin heartbeat needs a service"
                )
                continue
            if not INTERVAL_MIN <= seconds <= INTERVAL_MAX:
                self.ctx.notes.approximate(
                    "heartbeat", label, label, f"an interval of {seconds} s: Tocsin's is {INTERVAL_MIN} s to 7 days"
                )
                seconds = min(INTERVAL_MAX, max(INTERVAL_MIN, seconds))
            name = self.ctx.name("heartbeat", label, label)
            # Paused until its pinger is switched (the cut-over sheet): an enabled one would miss its
            # pings and page. One that exists already keeps what a person made of it.
            enabled = self.ctx.existing.heartbeats_enabled.get(name.casefold(), False)
            found.append(
                doc.Heartbeat(
                    name=name,
                    service=service,
                    interval_seconds=seconds,
                    description=clean_name(raw.get("description"), "") or None,
                    enabled=enabled,
                    source=self.ctx.source(label),
                )
            )
            self.translation.heartbeats.append(name)
            if raw.get("enabled") is False:
                self.ctx.notes.approximate("heartbeat", label, label, "disabled at Opsgenie")
        return found

    # --- maintenance ----------------------------------------------------------------------------

    def maintenance_windows(self) -> list[doc.MaintenanceWindow]:
        found: list[doc.MaintenanceWindow] = []
        for raw in self.account.maintenances:
            vendor_id = str(raw["id"])
            label = clean_name(raw.get("description"), f"maintenance {vendor_id}")
            time = raw.get("time") or {}
            start, end = when(time.get("startDate")), when(time.get("endDate"))
            if raw.get("status") in ("past", "cancelled") or (end is not None and end <= self.ctx.now):
                continue
            if start is None or end is None:
                self.ctx.notes.skip(
                    "maintenance_window", label, vendor_id, "it has no end", "a window with an end, or a paused service"
                )
                continue
            services: list[str] = []
            for rule in raw.get("rules") or []:
                entity = rule.get("entity") or {}
                service = self._integration_service.get(str(entity.get("id")))
                if entity.get("type") == "integration" and service is not None:
                    if service not in services:
                        services.append(service)
                    self.ctx.notes.approximate(
                        "maintenance_window",
                        label,
                        vendor_id,
                        f"silences every alert of {service!r}, not one integration",
                    )
                else:
                    self.ctx.notes.skip(
                        "maintenance_window",
                        f"{label}: {entity.get('type')} {entity.get('id')}",
                        vendor_id,
                        "Tocsin's maintenance silences services, not "
                        + {"policy": "alert policies"}.get(str(entity.get("type")), f"{entity.get('type')}s"),
                    )
            if services:
                found.append(
                    doc.MaintenanceWindow(
                        description=self.ctx.name("maintenance_window", label, vendor_id),
                        services=services,
                        start=start,
                        end=end,
                        source=self.ctx.source(vendor_id),
                    )
                )
        return found
