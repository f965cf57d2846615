"""Reads remembered for one unit of work: the handling of one queue message.

A message may have several consumers (the escalation and the outbound webhooks both follow
`incident.created`), and one consumer takes several steps (assign the on-call person, start the
escalation); each of them used to read the organization, the service, the policy, the schedules,
the people and the incident again. Inside `read_scope()` the domain getters remember what they
read, so a message reads each item once.

Only immutable values are remembered (the domains' frozen dataclasses, or an item's raw data from
which a fresh model object is built on every read), so a caller that changes what it got cannot
change what the next one gets. Outside a scope (API requests) nothing is remembered.

Staleness is bounded by the message: a remembered item is at most as old as the handling of one
message. Writes that depend on an item stay conditional (version checks); a writer that learns
its copy was stale forgets it (`forget`) before it reads again.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

V = TypeVar("V")
_ABSENT = object()  # remembered as "not there": a second lookup does not read again
_memory: ContextVar[dict[Hashable, Any] | None] = ContextVar("tocsin_read_scope", default=None)


@contextmanager
def read_scope() -> Iterator[None]:
    """Remember reads until the block ends (nested scopes share the outer one)."""
    if _memory.get() is not None:
        yield
        return
    token = _memory.set({})
    try:
        yield
    finally:
        _memory.reset(token)


def active() -> bool:
    return _memory.get() is not None


def remembered(key: Hashable, load: Callable[[], V]) -> V:
    """`load()` once per scope for `key`; outside a scope, every time."""
    memory = _memory.get()
    if memory is None:
        return load()
    if key in memory:
        return memory[key]  # type: ignore[no-any-return]
    value = load()
    memory[key] = value
    return value


def remembered_many(
    kind: str, scope_id: str, ids: Iterable[str], load: Callable[[list[str]], Mapping[str, V]]
) -> dict[str, V]:
    """A batch read that loads only the ids this scope has not read yet; absent ids stay absent."""
    wanted = list(dict.fromkeys(ids))
    memory = _memory.get()
    if memory is None:
        return dict(load(wanted)) if wanted else {}
    missing = [item_id for item_id in wanted if (kind, scope_id, item_id) not in memory]
    if missing:
        loaded = load(missing)
        for item_id in missing:
            memory[(kind, scope_id, item_id)] = loaded.get(item_id, _ABSENT)
    found: dict[str, V] = {}
    for item_id in wanted:
        value = memory[(kind, scope_id, item_id)]
        if value is not _ABSENT:
            found[item_id] = value
    return found


def remember(key: Hashable, value: object) -> None:
    """Put what a write made current (no effect outside a scope)."""
    memory = _memory.get()
    if memory is not None:
        memory[key] = value


def forget(key: Hashable) -> None:
    memory = _memory.get()
    if memory is not None:
        memory.pop(key, None)
