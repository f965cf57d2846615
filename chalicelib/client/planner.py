"""The plan: what it takes to make the organization match a document. A pure function of the
desired document, the current one (as `state` reads it), the time, and whether to prune.

Objects are matched by source first (the vendor id the import ledger recorded, so a renamed
object is found again), then by key. Actions come in the order they must run: creates and
updates section by section (users, teams, schedules, policies, services, integrations, rules,
windows, heartbeats, status pages), then deletes in the reverse order, so nothing is deleted
while something kept still names it. Deleting is only done with prune; users, teams and services
are deactivated rather than deleted (the API keeps them), integrations revoked."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from chalicelib.client import canonical
from chalicelib.client import document as doc

Op = Literal["create", "update", "delete", "skip"]
Key = tuple[str, str]
Sources = dict[Key, set[tuple[str, str]]]
Renamed = dict[str, dict[str, str]]  # section -> {key in the organization: name in the document}
DEACTIVATED = frozenset({"users", "teams", "services"})
# Fields the API sets only when it creates the object: a change is reported, not attempted.
CREATE_ONLY: dict[str, dict[str, str]] = {
    "integrations": {
        "type": "an integration's type cannot change: revoke it and create another (a new URL)",
        "signing": "signing is chosen when an integration is created: create another (a new URL and secret)",
    },
    "heartbeats": {"service": "a heartbeat's service cannot change: delete it and create another (a new ping URL)"},
}


@dataclass(frozen=True)
class Change:
    field: str
    before: Any = None
    after: Any = None


@dataclass
class Action:
    op: Op
    section: str
    key: str
    label: str
    changes: list[Change] = field(default_factory=list)
    reason: str = ""
    desired: doc.Keyed | None = None
    current_key: str | None = None  # the matched object's key in the organization (update, delete)
    position: int | None = None  # event rules: the place in its list
    detach_policy: bool = False  # a service deactivated with its policy deleted lets go of it

    @property
    def kind(self) -> str:
        return dict(doc.SECTIONS)[self.section].kind


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)  # (section, label): not in the document

    @property
    def changes(self) -> list[Action]:
        return [action for action in self.actions if action.op != "skip"]


def label(item: doc.Keyed) -> str:
    for name in ("email", "name"):
        value = getattr(item, name, None)
        if isinstance(value, str):
            return value
    if isinstance(item, doc.EventRule):
        where = f" ({item.integration})" if item.integration else ""
        return (item.description or "rule without description") + where
    if isinstance(item, doc.MaintenanceWindow):
        return item.description or f"{', '.join(item.services)} from {canonical.utc(item.start)}"
    return item.key()


def _sources_of(item: doc.Keyed, sources: Sources, section: str) -> set[tuple[str, str]]:
    found = set(sources.get((section, item.key()), set()))
    if item.source is not None:
        found.add((item.source.vendor, item.source.id))
    return found


def match(
    section: str, desired: list[doc.Keyed], current: list[doc.Keyed], sources: Sources
) -> tuple[list[tuple[doc.Keyed, doc.Keyed | None]], list[doc.Keyed]]:
    """Each desired object with the current one it is (by source, else by key), and the current
    objects nothing matched."""
    by_source: dict[tuple[str, str], doc.Keyed] = {}
    for item in current:
        for found in _sources_of(item, sources, section):
            by_source.setdefault(found, item)
    by_key = {item.key(): item for item in current}
    used: set[str] = set()
    pairs: list[tuple[doc.Keyed, doc.Keyed | None]] = []
    for item in desired:
        chosen = by_source.get((item.source.vendor, item.source.id)) if item.source else None
        if chosen is None or chosen.key() in used:
            chosen = by_key.get(item.key())
        if chosen is not None and chosen.key() in used:
            chosen = None
        if chosen is not None:
            used.add(chosen.key())
        pairs.append((item, chosen))
    return pairs, [item for item in current if item.key() not in used]


def diff(
    section: str,
    desired: doc.Keyed,
    current: doc.Keyed,
    *,
    now: datetime,
    prune: bool,
    sources: Sources,
    renamed: Renamed | None = None,
) -> tuple[list[Change], list[Change]]:
    """(changes the API can make, changes it cannot) from current to desired. The current
    object's references to objects the document renames are read under their new names."""
    renamed = renamed or {}
    wanted = canonical.fields(desired, now)
    seen = canonical.compared(wanted, canonical.fields(current, now, canonical.Ref(renamed=renamed)), prune=prune)
    # Compared with references folded, shown as written.
    shown_wanted = canonical.fields(desired, now, canonical.Ref(fold=False))
    shown_current = canonical.fields(current, now, canonical.Ref(fold=False, renamed=renamed))
    shown_seen = canonical.compared(shown_wanted, shown_current, prune=prune)
    changes = [
        Change(name, shown_seen.get(name), shown_wanted[name])
        for name, value in wanted.items()
        if seen.get(name) != value
    ]
    started = isinstance(current, doc.MaintenanceWindow) and current.start <= now
    if started and isinstance(desired, doc.MaintenanceWindow) and desired.start <= now:
        # "a start in the past means now": a started window's start is whenever it started
        changes = [change for change in changes if change.field != "start"]
    if desired.source is not None and (desired.source.vendor, desired.source.id) not in _sources_of(
        current, sources, section
    ):
        before = current.source.model_dump() if current.source else None
        changes.append(Change("source", before, desired.source.model_dump()))
    blocked_fields = CREATE_ONLY.get(section, {})
    if isinstance(current, doc.MaintenanceWindow) and current.start <= now:
        blocked_fields = {"start": "the window has started: its start cannot move (end it and create another)"}
    blocked = [change for change in changes if change.field in blocked_fields]
    return [change for change in changes if change.field not in blocked_fields], blocked


def plan(
    desired: doc.Document,
    current: doc.Document,
    *,
    now: datetime,
    prune: bool = False,
    sources: Sources | None = None,
) -> Plan:
    sources = sources or {}
    result = Plan()
    deletes: list[list[Action]] = []
    renamed: Renamed = {}  # objects found by their source under a new name, section by section
    for section, _ in doc.SECTIONS:
        wanted = desired.section(section)
        if wanted is None:
            deletes.append([])
            continue
        present = current.section(section) or []
        if section == "event_rules":
            # A renamed integration's rules are still its list: seen under its new name, and
            # found in the organization under their own key.
            moved = [_moved(rule, renamed.get("integrations", {})) for rule in present]
            original = {rule.key(): before.key() for rule, before in zip(moved, present, strict=True)}
            actions, removed = _rules(
                wanted, moved, now=now, prune=prune, sources=sources, kept=result.kept, renamed=renamed
            )
            for action in [*removed, *actions]:
                if action.current_key is not None:
                    action.current_key = original[action.current_key]
            result.actions += removed  # a list's deletes run before its moves, so positions hold
            result.actions += actions
            deletes.append([])
            continue
        pairs, unmatched = match(section, wanted, present, sources)
        renamed[section] = {found.key(): label(item) for item, found in pairs if found and found.key() != item.key()}
        for item, found in pairs:
            result.actions += _one(section, item, found, now=now, prune=prune, sources=sources, renamed=renamed)
        deletes.append(list(_removals(section, unmatched, prune=prune, kept=result.kept)))
    for removals in reversed(deletes):
        result.actions += removals
    _check_in_use(result, desired, current)
    return result


def _one(
    section: str,
    item: doc.Keyed,
    found: doc.Keyed | None,
    *,
    now: datetime,
    prune: bool,
    sources: Sources,
    renamed: Renamed,
) -> Iterator[Action]:
    if isinstance(item, doc.MaintenanceWindow) and item.end <= now:
        yield Action("skip", section, item.key(), label(item), reason="the window is over", desired=item)
        return
    if found is None:
        yield Action("create", section, item.key(), label(item), desired=item)
        return
    changes, blocked = diff(section, item, found, now=now, prune=prune, sources=sources, renamed=renamed)
    if changes:
        yield Action("update", section, item.key(), label(item), changes, desired=item, current_key=found.key())
    if blocked:
        reasons = {**CREATE_ONLY.get(section, {}), "start": "the window has started: its start cannot move"}
        reason = "; ".join(reasons[change.field] for change in blocked)
        yield Action("skip", section, item.key(), label(item), blocked, reason, item, found.key())


def _removals(
    section: str, unmatched: list[doc.Keyed], *, prune: bool, kept: list[tuple[str, str]]
) -> Iterator[Action]:
    for item in unmatched:
        if section in DEACTIVATED and not getattr(item, "active", True):
            continue  # deactivated already: as deleted as the API makes it
        if not prune:
            kept.append((section, label(item)))
            continue
        reason = "deactivated (the API keeps it)" if section in DEACTIVATED else ""
        if section == "integrations":
            reason = "revoked: its URL stops answering"
        yield Action("delete", section, item.key(), label(item), reason=reason, current_key=item.key())


def _moved(rule: doc.Keyed, renamed: dict[str, str]) -> doc.Keyed:
    integration = getattr(rule, "integration", None)
    if integration is None or integration.casefold() not in renamed:
        return rule
    return rule.model_copy(update={"integration": renamed[integration.casefold()]})


def _rules(
    wanted: list[doc.Keyed],
    present: list[doc.Keyed],
    *,
    now: datetime,
    prune: bool,
    sources: Sources,
    kept: list[tuple[str, str]],
    renamed: Renamed,
) -> tuple[list[Action], list[Action]]:
    """Event rules, list by list: each desired rule at its place in its list (its index among the
    document's rules of that list); rules the document does not name stay after them."""
    actions: list[Action] = []
    removed: list[Action] = []
    lists: dict[str, tuple[list[doc.EventRule], list[doc.EventRule]]] = {}
    for rule in wanted:
        assert isinstance(rule, doc.EventRule)
        lists.setdefault((rule.integration or "").casefold(), ([], []))[0].append(rule)
    for rule in present:
        assert isinstance(rule, doc.EventRule)
        lists.setdefault((rule.integration or "").casefold(), ([], []))[1].append(rule)
    for desired_list, current_list in lists.values():
        pairs, unmatched = match("event_rules", list(desired_list), list(current_list), sources)
        removed += _removals("event_rules", unmatched, prune=prune, kept=kept)
        pruned = {rule.key() for rule in unmatched} if prune else set()
        order = [rule.key() for rule in current_list if rule.key() not in pruned]
        for index, (item, found) in enumerate(pairs):
            if found is None:
                actions.append(Action("create", "event_rules", item.key(), label(item), desired=item, position=index))
                order.insert(index, item.key())
                continue
            changes, _ = diff("event_rules", item, found, now=now, prune=prune, sources=sources, renamed=renamed)
            place = order.index(found.key())
            if place != index:
                changes.append(Change("position", place, index))
                order.insert(index, order.pop(place))
            if changes:
                actions.append(
                    Action("update", "event_rules", item.key(), label(item), changes, "", item, found.key(), index)
                )
    return actions, removed


def _check_in_use(result: Plan, desired: doc.Document, current: doc.Document) -> None:
    """A schedule or policy to delete that something kept still names is not deleted (409 at the
    server); a service deactivated along with its policy lets go of the policy."""
    deleting = {(a.section, a.key) for a in result.actions if a.op == "delete"}
    policies = desired.escalation_policies if desired.escalation_policies is not None else current.escalation_policies
    users: dict[Key, list[str]] = {}
    for policy in policies or []:
        if ("escalation_policies", policy.key()) in deleting:
            continue
        for level in policy.levels:
            for target in level.targets:
                if target.schedule:
                    users.setdefault(("schedules", target.schedule.casefold()), []).append(policy.name)
    services_managed = desired.services is not None
    for service in (desired.services if services_managed else current.services) or []:
        if service.escalation_policy:
            users.setdefault(("escalation_policies", service.escalation_policy.casefold()), []).append(service.name)
    for action in result.actions:
        if action.op != "delete":
            continue
        if action.section == "services":
            pruned = next((s for s in current.services or [] if s.key() == action.key), None)
            policy_key = pruned.escalation_policy.casefold() if pruned and pruned.escalation_policy else None
            action.detach_policy = policy_key is not None and ("escalation_policies", policy_key) in deleting
        named_by = users.get((action.section, action.key))
        if named_by:
            action.op = "skip"
            action.reason = f"still used by {', '.join(sorted(set(named_by)))}"
