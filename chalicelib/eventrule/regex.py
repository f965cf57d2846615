"""The `matches` operator's regular expressions: RE2, never a backtracking engine.

A rule's pattern runs on every inbound alert, and anyone with integrations:write writes it, so
Python's `re` is out: `(a+)+$` against a long title backtracks for minutes and stalls the
webhook. RE2 (the `google-re2` package) matches in time linear in the text and refuses what it
cannot do that way (backreferences, lookaround) when the rule is written, as a 400. The pattern
is capped in length and its compiled program in memory.

Linear is not cheap: when RE2's DFA runs out of room it falls back to simulating the program
instruction by instruction, so a search costs up to (program size x text length). A counted
repetition such as `(?:.{1,50}){1,5}` compiles to over 2,000 instructions and took 26 ms on one
1,000-character label; 99 rules of 16 such conditions kept a webhook 26 s. So each pattern's
program is capped (`MAX_PROGRAM_SIZE`, a 400 when written), each list's total too
(chalicelib/eventrule/rules.py, `check_regex_budget`), and evaluation stops at a time budget
(chalicelib/eventrule/evaluate.py).

Syntax: RE2's (https://github.com/google/re2/wiki/Syntax), the common Perl subset. A pattern
matches anywhere in the text (`search`); anchor it with `^...$` for the whole value; `(?i)` makes
it case-insensitive.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import re2

MAX_PATTERN_LENGTH = 256
# RE2 instructions in one compiled pattern: room for `^[a-z0-9-]{1,63}\.example\.com$` (about 280),
# not for counted repetitions of counted repetitions.
MAX_PROGRAM_SIZE = 500
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


def program_size(pattern: str) -> int:
    """The compiled pattern's instruction count (what a search costs per byte at worst); 0 for a
    stored pattern that no longer compiles (it matches nothing and never runs)."""
    try:
        return int(compile_pattern(pattern).programsize)
    except PatternRefused:
        return 0


def check_pattern(pattern: str) -> None:
    """Raise PatternRefused when `pattern` cannot be a rule's pattern."""
    size = int(compile_pattern(pattern).programsize)
    if size > MAX_PROGRAM_SIZE:
        raise PatternRefused(
            f"is too costly to run on every event ({size} RE2 instructions, at most {MAX_PROGRAM_SIZE}): "
            "use fewer or smaller counted repetitions such as {1,50}"
        )


def pattern_matches(pattern: str, text: str) -> bool:
    """True when `pattern` matches somewhere in `text`. A pattern stored before a rule change that
    no longer compiles matches nothing (evaluation never raises)."""
    try:
        compiled = compile_pattern(pattern)
    except PatternRefused:
        return False
    return compiled.search(text) is not None
