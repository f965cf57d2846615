"""Event rules applied to one alert: a pure function of the rule lists and the alert's facts.

`evaluate(rule_sets, facts)` takes the lists in the order they run: the integration's list
first (the most specific), then the organization's. The semantics:

1. A rule matches when every one of its conditions holds (a rule without conditions matches
   every alert). A condition on a field the alert lacks (no severity, no such label) does not
   hold, except that `exists` is then simply false.
   - `equals` / `contains`: the whole value / a substring, ignoring case (Unicode casefold):
     alert tools disagree on `CRITICAL` and `critical`, and a rule means the word.
   - `matches`: an RE2 pattern found anywhere in the value, case-sensitive unless it says
     `(?i)`; anchor it (`^...$`) to match the whole value.
   - `exists`: the field has a non-empty value.
   - `service_id equals` names the service either way: its SER-nnnnn id or its svc_ key.
2. Within one list, the first matching rule wins and the rest of that list is skipped, unless
   that rule says `continue`: then the next rules of the same list are tried too.
3. The lists are independent: a winning rule in the integration's list does not skip the
   organization's list (organization rules are policy for every integration).
4. `drop` ends all evaluation at once: the event is discarded (no alert, no incident).
5. `suppress` is sticky: once a matched rule suppresses, the alert is suppressed.
6. `severity` and `route_to_service`: the first matched rule that sets one decides it; later
   rules do not override it (first match wins, so the integration's list beats the
   organization's, and an earlier rule beats a later `continue` rule).
7. `note`s accumulate, in the order their rules matched.
8. `matched_rule_ids` lists every matched rule in order (the dropping rule included).

Conditions always see the alert as it arrived: a rule that re-routes or changes the severity does
not change what later rules read.

Evaluation has a time budget (`budget_seconds`, on the monotonic `clock` passed in, read before
each condition). Past it, evaluation stops and fails safe: the decision is the one of no matching
rule (the alert is kept, with its own severity and service, and paged), carrying a warning that
the caller logs and shows. Half-applied rules would be worse than none: a later `drop` or
`suppress` never ran, an earlier `note` did.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence

from chalicelib.eventrule.facts import AlertFacts, RuleDecision
from chalicelib.eventrule.regex import pattern_matches
from chalicelib.eventrule.rules import LABEL_PREFIX, Condition, Rule

# Far above what a list within its write-time budget takes (about a tenth of a second at worst),
# far below API Gateway's 29 s.
EVALUATION_BUDGET_SECONDS = 1.0
Clock = Callable[[], float]


def over_budget_warning(budget_seconds: float) -> str:
    return (
        f"Event rules were skipped for this event: evaluating them took longer than {budget_seconds:g} s. "
        "The alert was kept and paged as if no rule matched; simplify the rules' matches patterns."
    )


class _OverBudget(Exception):
    """Raised inside evaluation when the deadline has passed."""


def field_value(facts: AlertFacts, field: str) -> str | None:
    """The alert's value of a condition's field; None when it has none."""
    if field.startswith(LABEL_PREFIX):
        return facts.labels.get(field[len(LABEL_PREFIX) :])
    value = getattr(facts, field, None)
    return value if isinstance(value, str) else None


def condition_holds(condition: Condition, facts: AlertFacts) -> bool:
    if _names_service_key(condition, facts):
        return True
    actual = field_value(facts, condition.field)
    if condition.op == "exists":
        return bool(actual)
    if actual is None or not condition.value:
        return False
    if condition.op == "equals":
        return actual.casefold() == condition.value.casefold()
    if condition.op == "contains":
        return condition.value.casefold() in actual.casefold()
    if condition.op == "matches":
        return pattern_matches(condition.value, actual)
    return False  # an op this code does not know matches nothing rather than everything


def _names_service_key(condition: Condition, facts: AlertFacts) -> bool:
    """`service_id equals svc_...`: a service named by its key rather than its id."""
    return (
        condition.field == "service_id"
        and condition.op == "equals"
        and bool(facts.service_key and condition.value)
        and str(condition.value).casefold() == str(facts.service_key).casefold()
    )


def rule_matches(rule: Rule, facts: AlertFacts, in_time: Callable[[], bool] = lambda: True) -> bool:
    """Every condition holds; `in_time` is asked before each (raising _OverBudget when it says no)."""
    for condition in rule.conditions:
        if not in_time():
            raise _OverBudget()
        if not condition_holds(condition, facts):
            return False
    return True


def evaluate(
    rule_sets: Iterable[Sequence[Rule]],
    facts: AlertFacts,
    *,
    clock: Clock = time.monotonic,
    budget_seconds: float | None = None,
) -> RuleDecision:
    """The decision of the lists, in the order given (integration's, then organization's); past
    the time budget (None: EVALUATION_BUDGET_SECONDS), the decision of no rule with a warning (the
    module's docstring)."""
    budget = EVALUATION_BUDGET_SECONDS if budget_seconds is None else budget_seconds
    deadline = clock() + budget
    try:
        return _evaluate(rule_sets, facts, lambda: clock() <= deadline)
    except _OverBudget:
        return RuleDecision(warnings=(over_budget_warning(budget),))


def _evaluate(rule_sets: Iterable[Sequence[Rule]], facts: AlertFacts, in_time: Callable[[], bool]) -> RuleDecision:
    suppressed = False
    severity: str | None = None
    route_to_service: str | None = None
    notes: list[str] = []
    matched: list[str] = []

    def decision(*, dropped: bool) -> RuleDecision:
        return RuleDecision(
            dropped=dropped,
            suppressed=suppressed,
            severity=severity,
            route_to_service=route_to_service,
            notes=tuple(notes),
            matched_rule_ids=tuple(matched),
        )

    for rules in rule_sets:
        for rule in rules:
            if not rule_matches(rule, facts, in_time):
                continue
            matched.append(rule.rule_id)
            actions = rule.actions
            if actions.drop:
                return decision(dropped=True)
            suppressed = suppressed or actions.suppress
            severity = severity or actions.severity
            route_to_service = route_to_service or actions.route_to_service
            if actions.note:
                notes.append(actions.note)
            if not rule.continues:
                break
    return decision(dropped=False)
