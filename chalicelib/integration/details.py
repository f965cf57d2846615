"""An alert's details: what a delivery carried beyond the fields its source's format maps, kept
instead of refused (docs/INTAKE.md). Pure.

Bounded: at most 32 keys and 16 KiB as compact JSON (UTF-8). Keys are taken in the order sent;
a key past the 32nd, or one whose value would pass 16 KiB, is cut and named in a warning (the
keys after it may still fit). Strings that cannot be UTF-8 (lone surrogates from JSON escapes)
get `?` in their place, so every kept value can be stored and shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

DETAILS_MAX_KEYS: Final = 32
DETAILS_MAX_BYTES: Final = 16 * 1024
DETAIL_KEY_MAX: Final = 200
NAMES_IN_WARNING: Final = 5


def keep_details(values: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The details kept of `values`, and a warning for each kind of cut (none when all fit)."""
    kept: dict[str, Any] = {}
    size = 2  # the braces
    over_count: list[str] = []
    over_size: list[str] = []
    for raw_key, raw_value in values.items():
        key = utf8_text(raw_key).strip()[:DETAIL_KEY_MAX] or "(blank)"
        if key in kept:
            continue
        if len(kept) >= DETAILS_MAX_KEYS:
            over_count.append(key)
            continue
        value = json_safe(raw_value)
        piece = len(_compact({key: value}).encode("utf-8")) - 2 + (1 if kept else 0)  # plus a comma
        if size + piece > DETAILS_MAX_BYTES:
            over_size.append(key)
            continue
        kept[key] = value
        size += piece
    warnings: list[str] = []
    if over_count:
        warnings.append(
            f"details keep at most {DETAILS_MAX_KEYS} keys; {len(over_count)} more were cut: {_names(over_count)}."
        )
    if over_size:
        warnings.append(
            f"details keep at most {DETAILS_MAX_BYTES // 1024} KiB as JSON; cut to fit: {_names(over_size)}."
        )
    return kept, tuple(warnings)


def json_safe(value: Any) -> Any:
    """`value` with every string (keys too) valid UTF-8 and no NaN or infinity (they become null)."""
    if isinstance(value, str):
        return utf8_text(value)
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else None
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, Mapping):
        return {utf8_text(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, Sequence):
        return [json_safe(item) for item in value]
    return utf8_text(value)


def utf8_text(value: object) -> str:
    """`value` as text that always encodes as UTF-8 (lone surrogates from JSON become '?')."""
    text = value if isinstance(value, str) else str(value)
    return text.encode("utf-8", "replace").decode("utf-8")


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _names(names: list[str]) -> str:
    shown = ", ".join(f"'{name[:60]}'" for name in names[:NAMES_IN_WARNING])
    more = len(names) - NAMES_IN_WARNING
    return shown + (f" and {more} more" if more > 0 else "")
