"""The `matches` operator's regular expressions: RE2, never a backtracking engine.

A rule's pattern runs on every inbound alert, and anyone with integrations:write writes it, so
Python's `re` is out: `(a+)+$` against a long title backtracks for minutes and stalls the
webhook. RE2 (the `google-re2` package) matches in time linear in the text and refuses what it
cannot do that way (backreferences, lookaround) when the rule is written, as a 400. The pattern
is capped in length and its compiled program in memory, so one rule cannot make every event slow.

Syntax: RE2's (https://github.com/google/re2/wiki/Syntax), the common Perl subset. A pattern
matches anywhere in the text (`search`); anchor it with `^...$` for the whole value; `(?i)` makes
it case-insensitive.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

MAX_PATTERN_LENGTH = 256
# RE2's budget for one compiled pattern; a pattern whose automaton needs more is refused.
MAX_PROGRAM_MEMORY_BYTES = 1 << 20


class PatternRefused(ValueError):
    """The pattern is too long, not valid RE2, or compiles to too large a program."""


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # a refused pattern is the caller's 400, not a line on stderr
    options.max_mem = MAX_PROGRAM_MEMORY_BYTES
    return options


@lru_cache(maxsize=2048)
def compile_pattern(pattern: str) -> Any:
    """The compiled RE2 pattern (cached: a warm Lambda compiles each rule's pattern once).

    Raises PatternRefused with a message a person can act on."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternRefused(f"must be at most {MAX_PATTERN_LENGTH} characters")
    try:
        return re2.compile(pattern, _options())
    except re2.error as error:
        raise PatternRefused(f"is not a valid RE2 regular expression: {_reason(error)}") from None


def _reason(error: Exception) -> str:
    reason = error.args[0] if error.args else "invalid"
    return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


def check_pattern(pattern: str) -> None:
    """Raise PatternRefused when `pattern` cannot be a rule's pattern."""
    compile_pattern(pattern)


def pattern_matches(pattern: str, text: str) -> bool:
    """True when `pattern` matches somewhere in `text`. A pattern stored before a rule change that
    no longer compiles matches nothing (evaluation never raises)."""
    try:
        compiled = compile_pattern(pattern)
    except PatternRefused:
        return False
    return compiled.search(text) is not None
