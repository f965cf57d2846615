"""Half-open time intervals [start, end): union, intersection, subtraction. Pure.

A "span list" is sorted, with no two spans overlapping or touching (what `union` returns).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from datetime import datetime, timedelta

Span = tuple[datetime, datetime]


def union(spans: Iterable[Span]) -> list[Span]:
    """Sorted, merged (overlapping or touching spans joined), empty spans dropped."""
    merged: list[Span] = []
    for start, end in sorted(span for span in spans if span[0] < span[1]):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def clip(span: Span, allowed: list[Span]) -> list[Span]:
    """The parts of `span` inside a span list."""
    start, end = span
    pieces: list[Span] = []
    index = max(0, bisect_right(allowed, (start, start)) - 1)
    while index < len(allowed) and allowed[index][0] < end:
        lo, hi = max(start, allowed[index][0]), min(end, allowed[index][1])
        if lo < hi:
            pieces.append((lo, hi))
        index += 1
    return pieces


def subtract(span: Span, covered: list[Span]) -> list[Span]:
    """The parts of `span` outside a span list."""
    start, end = span
    pieces: list[Span] = []
    cursor = start
    for lo, hi in clip(span, covered):
        if cursor < lo:
            pieces.append((cursor, lo))
        cursor = max(cursor, hi)
    if cursor < end:
        pieces.append((cursor, end))
    return pieces


def total(spans: Iterable[Span]) -> timedelta:
    return sum((end - start for start, end in union(spans)), timedelta(0))


def intersect(first: list[Span], second: list[Span]) -> list[Span]:
    """The instants in both span lists, as a span list."""
    return union(piece for span in first for piece in clip(span, second))
