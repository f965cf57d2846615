"""Spending the outbound budget: one conditional counter per limit, in DynamoDB.

`spend` charges each counter a message counts against (chalicelib/budget/rules.py), narrowest
first, with one UpdateItem each: add 1 only while the window's count is below its allowance. A
counter that refuses wrote nothing, the ones charged before it are given back, and the refusal
says which limit and when there will be room (Retry-After). However many sends race, no counter
ever passes its allowance: the condition is checked by DynamoDB on each add.

The counters live in the rate-limit table (chalicelib/ratelimit), keyed
`outbound#<limit>#<whose>#<window start>` and expiring two windows later (the previous window is
read for the sliding count; one BatchGetItem). A send whose provider failed gives its charge back
(`Decision.refund`), so a retried message is not counted twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime

from chalicelib.budget import limits, organization_limits, rules
from chalicelib.budget.rules import Counter, Send
from chalicelib.errors import RateLimited
from chalicelib.ratelimit.tables import RateLimitWindowRecord
from chalicelib.settings import Settings
from chalicelib.store import best_effort, update_if

logger = logging.getLogger("tocsin.budget")


@dataclass(frozen=True)
class Refusal:
    limit: str
    value: int
    window_seconds: int
    retry_after: int  # seconds until one more would fit

    @property
    def message(self) -> str:
        definition = limits.BY_NAME[self.limit]
        per = {"organization": " for the organization", "deployment": " for this deployment"}.get(definition.per, "")
        return (
            f"At most {self.value} {definition.counts}{per} {limits.window_words(self.window_seconds)} "
            f"(outbound limit {self.limit}); there is room again in {limits.wait_words(self.retry_after)}."
        )

    def error(self) -> RateLimited:
        """The 429 a request that caused this refusal answers."""
        return RateLimited(
            self.message,
            details={"limit": self.limit, "value": self.value, "retry_after_seconds": self.retry_after},
            headers={"Retry-After": str(self.retry_after)},
        )


@dataclass
class Decision:
    refusal: Refusal | None
    charged: list[str] = field(default_factory=list)  # counter item keys, to give back

    @property
    def allowed(self) -> bool:
        return self.refusal is None

    def refund(self) -> None:
        """Give the charge back (the provider failed: the message did not leave)."""
        _give_back(self.charged)
        self.charged = []


@dataclass(frozen=True)
class _Plan:
    counter: Counter
    value: int
    seconds: int
    start: int

    @property
    def key(self) -> str:
        return f"{self.counter.key}#{self.start}"

    @property
    def previous_key(self) -> str:
        return f"{self.counter.key}#{self.start - self.seconds}"


def spend(send: Send, now: datetime, *, settings: Settings) -> Decision:
    """Charge every counter `send` counts against, or none: a Decision that allows it (and can be
    refunded) or names the limit that refused it."""
    values = organization_limits.in_effect(send.organization_id, settings=settings)
    epoch = now.timestamp()
    plans = []
    for counter in rules.counters_for(send):
        seconds = limits.window_seconds(limits.BY_NAME[counter.limit], settings)
        plans.append(_Plan(counter, values[counter.limit], seconds, rules.window_start(epoch, seconds)))
    previous = _hits([plan.previous_key for plan in plans])
    charged: list[str] = []
    for plan in plans:
        elapsed = epoch - plan.start
        before = previous.get(plan.previous_key, 0)
        room = rules.allowance(plan.value, before, elapsed, plan.seconds)
        if room > 0 and _charge(plan, room):
            charged.append(plan.key)
            continue
        _give_back(charged)
        current = _hits([plan.key]).get(plan.key, 0)
        wait = rules.seconds_until_room(plan.value, before, current, elapsed, plan.seconds)
        refusal = Refusal(plan.counter.limit, plan.value, plan.seconds, wait)
        logger.info(
            "outbound budget refused a message",
            extra={
                "limit": refusal.limit,
                "purpose": send.purpose,
                "channel": send.channel,
                "organization_id": send.organization_id,
                "user_id": send.user_id,
                "retry_after": wait,
            },
        )
        return Decision(refusal)
    return Decision(None, charged)


def spend_or_raise(send: Send, now: datetime, *, settings: Settings) -> Decision:
    """`spend` for a request: a refusal is the request's 429 (RATE_LIMITED, Retry-After)."""
    decision = spend(send, now, settings=settings)
    if decision.refusal is not None:
        raise decision.refusal.error()
    return decision


def _charge(plan: _Plan, room: int) -> bool:
    record = RateLimitWindowRecord(plan.key)
    # Kept a window past the next one's start: that window reads it for its sliding count.
    expires = datetime.fromtimestamp(plan.start + 2 * plan.seconds + 60, UTC)
    below = RateLimitWindowRecord.hits.does_not_exist() | (RateLimitWindowRecord.hits < room)
    return update_if(record, [RateLimitWindowRecord.hits.add(1), RateLimitWindowRecord.expires_at.set(expires)], below)


def _give_back(keys: list[str]) -> None:
    for key in keys:
        with best_effort("outbound budget refund"):
            RateLimitWindowRecord(key).update(actions=[RateLimitWindowRecord.hits.add(-1)])


def _hits(keys: list[str]) -> dict[str, int]:
    if not keys:
        return {}
    return {str(item.window_key): int(item.hits or 0) for item in RateLimitWindowRecord.batch_get(keys)}
