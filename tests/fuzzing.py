"""Hypothesis strategies and the one property every fuzzed entry point shares.

The property: whatever the bytes and headers, the entry point returns its normal result or raises
an `errors.AppError` of the 4xx class; no other exception escapes (the API would answer it 500).
Strategies go beyond random bytes: valid-shaped documents with one field mutated, deep nesting,
huge numbers, NaN/Infinity literals, lone surrogates, wrong types.

Example counts are bounded by the settings profiles of tests/conftest.py (`FUZZ_EXAMPLES` is the
per-target count, scaled by the profile) so every target takes a few seconds at most.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from chalicelib.errors import AppError

T = TypeVar("T")

# Examples per fuzzed target; FUZZ_SCALE=10 (say) digs deeper on a workstation.
FUZZ_EXAMPLES = int(60 * float(os.environ.get("FUZZ_SCALE", "1")))


def fuzz_settings(examples: int = FUZZ_EXAMPLES) -> Any:
    """The settings of one fuzz target: bounded examples, no deadline (moto and RSA are slow on a busy CI)."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    )


def only_4xx(call: Callable[[], T]) -> T | AppError:
    """The result of `call`, or the AppError it raised when that is a 4xx; anything else fails the test."""
    try:
        return call()
    except AppError as error:
        assert 400 <= error.status < 500, f"{error!r} is a {error.status}"
        return error


# --- JSON values -----------------------------------------------------------------------------------

LONE_SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
nasty_text = st.text(
    st.characters(codec=None, exclude_categories=()) | LONE_SURROGATES | st.sampled_from(["\x00", "\u202e", "\ufeff"]),
    max_size=24,
)
huge_numbers = st.sampled_from([10**30, -(10**30), 2**63, 2**64 + 1, 1e308, -1e308, 5e-324, 1.7976931348623157e308])
scalars = (
    st.none()
    | st.booleans()
    # Bounded: an unbounded draw can exceed Python's 4300-digit int-to-str limit, and then the
    # generator itself fails (json.dumps) before any parser sees the body.
    | st.integers(-(10**40), 10**40)
    | huge_numbers
    | st.floats(allow_nan=False, allow_infinity=False)
    | nasty_text
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(nasty_text, children, max_size=4),
    max_leaves=20,
)

# Literal JSON text that Python's json module reads into something surprising, or refuses.
RAW_JSON_ODDITIES = (
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-1e400",
    "1" + "0" * 5000,  # beyond int's default digit limit: a ValueError while parsing
    '"\\ud800"',
    '"\\udfff\\ud800"',
    '"\\u0000"',
    "true",
    "null",
    "[]",
    "{}",
    '"' + "x" * 3000 + '"',
)
raw_oddities = st.sampled_from(RAW_JSON_ODDITIES)


def nested(depth: int, leaf: str = "1") -> str:
    """`depth` levels of alternating arrays and objects around `leaf`, as JSON text."""
    opening = "".join('{"a":' if level % 2 else "[" for level in range(depth))
    closing = "".join("}" if level % 2 else "]" for level in reversed(range(depth)))
    return opening + leaf + closing


# Deep enough for RecursionError in a recursive walker, shallow enough that json itself copes.
moderate_depth = st.integers(1, 200).map(nested)


def dumps(value: Any) -> bytes:
    """JSON bytes for `value`; lone surrogates kept as escapes (what an attacker can send)."""
    return json.dumps(value, ensure_ascii=True, allow_nan=True).encode()


@st.composite
def mutated_document(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    """`base` (a valid payload) with a few fields, at any depth, replaced by odd values or removed."""
    document = json.loads(json.dumps(base))
    for _ in range(draw(st.integers(1, 3))):
        path: list[Any] = []
        cursor: Any = document
        while isinstance(cursor, dict | list) and cursor and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(cursor) if isinstance(cursor, dict) else list(range(len(cursor)))))
            path.append(key)
            cursor = cursor[key]
        if not path:
            key = draw(st.sampled_from(sorted(document))) if document else "x"
            path = [key]
        parent: Any = document
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and draw(st.integers(0, 5)) == 0:
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = draw(json_values | st.sampled_from([[], {}, "", " ", 0, -1, True]))
    return document


def mutated_body(base: dict[str, Any]) -> st.SearchStrategy[bytes]:
    """A valid payload mutated, then sometimes given a raw odd literal in place of one value."""

    def with_oddity(document: dict[str, Any], oddity: str) -> bytes:
        text = dumps(document).decode()
        marker = '"__ODD__"'
        if document:
            first = sorted(document)[0]
            document = {**document, first: "__ODD__"}
            text = dumps(document).decode().replace(marker, oddity, 1)
        return text.encode()

    documents = mutated_document(base)
    return documents.map(dumps) | st.tuples(documents, raw_oddities).map(lambda pair: with_oddity(*pair))


def any_body(valid: list[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    """Random bytes, odd JSON, nested JSON, and valid-shaped payloads with mutations."""
    return (
        st.binary(max_size=256)
        | raw_oddities.map(str.encode)
        | moderate_depth.map(str.encode)
        | json_values.map(dumps)
        | st.sampled_from(valid).flatmap(mutated_body)
    )


header_names = st.sampled_from(
    [
        "Content-Type",
        "X-Service-Signature",
        "X-Service-Timestamp",
        "Sentry-Hook-Signature",
        "Sentry-Hook-Resource",
        "x-amz-sns-message-type",
        "Authorization",
    ]
) | st.text(max_size=12)
headers_strategy = st.dictionaries(header_names, nasty_text | st.text("0123456789abcdef=sha", max_size=80), max_size=6)
