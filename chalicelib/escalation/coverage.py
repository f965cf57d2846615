"""Coverage gaps of an escalation policy: the spans in which a level reaches nobody. Pure.

A level reaches nobody at an instant when each of its targets does: a user target that cannot be
paged (deactivated or removed), a schedule target in one of its gaps (chalicelib.oncall.coverage)
or a schedule that no longer exists. That is the runtime's "nobody to page" decision
(docs/PAGING.md), made for every instant of a window instead of for now.

A policy's gaps are the spans in which at least one level reaches nobody, cut where the set of
such levels changes: `[PolicyGap(start, end, levels=(1,))]` says that an incident triggering then
pages nobody at level 1 (the fallback contacts instead).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from chalicelib.escalation.steps import EscalationPolicy, Target
from chalicelib.oncall.intervals import Span, intersect


@dataclass(frozen=True)
class PolicyGap:
    start: datetime
    end: datetime
    levels: tuple[int, ...]  # 1-based: the levels that reach nobody throughout [start, end)


def target_gaps(
    target: Target, window: Span, schedule_gaps: Mapping[str, list[Span]], pageable: Callable[[str], bool]
) -> list[Span]:
    """Where one target reaches nobody within the window."""
    if target.kind == "user":
        return [] if pageable(target.id) else [window]
    return schedule_gaps.get(target.id, [window])  # a schedule that is gone reaches nobody


def level_gaps(
    targets: Sequence[Target], window: Span, schedule_gaps: Mapping[str, list[Span]], pageable: Callable[[str], bool]
) -> list[Span]:
    """Where every target of a level reaches nobody (a level without targets: the whole window)."""
    missing = [window]
    for target in targets:
        missing = intersect(missing, target_gaps(target, window, schedule_gaps, pageable))
        if not missing:
            break
    return missing


def policy_gaps(
    policy: EscalationPolicy,
    window: Span,
    schedule_gaps: Mapping[str, list[Span]],
    pageable: Callable[[str], bool],
) -> list[PolicyGap]:
    """The spans of `window` in which some level reaches nobody, each with those levels."""
    per_level = [level_gaps(level.targets, window, schedule_gaps, pageable) for level in policy.levels]
    cuts = sorted({moment for spans in per_level for span in spans for moment in span})
    cursors = [0] * len(per_level)  # per level: its first span not ended before the current piece
    gaps: list[PolicyGap] = []
    for start, end in pairwise(cuts):
        missing: list[int] = []
        for index, spans in enumerate(per_level):
            while cursors[index] < len(spans) and spans[cursors[index]][1] <= start:
                cursors[index] += 1
            if cursors[index] < len(spans) and spans[cursors[index]][0] <= start:
                missing.append(index + 1)  # cuts include every endpoint: the span holds [start, end)
        levels = tuple(missing)
        if not levels:
            continue
        if gaps and gaps[-1].end == start and gaps[-1].levels == levels:
            gaps[-1] = PolicyGap(gaps[-1].start, end, levels)
        else:
            gaps.append(PolicyGap(start, end, levels))
    return gaps


def spans_of(gaps: Sequence[PolicyGap]) -> list[Span]:
    return [(gap.start, gap.end) for gap in gaps]
