"""An alert's details: what a delivery carried beyond the mapped fields, bounded (issue 26)."""

from __future__ import annotations

import json

import pytest

from chalicelib.integration.details import DETAILS_MAX_BYTES, DETAILS_MAX_KEYS, json_safe, keep_details
from chalicelib.integration.normalized import NormalizedAlert


def size(details: dict) -> int:
    return len(json.dumps(details, ensure_ascii=False, separators=(",", ":")).encode())


@pytest.mark.parametrize(
    ("values", "kept", "warnings"),
    [
        ({}, {}, ()),
        ({"a": 1, "b": {"c": [1, "x"]}}, {"a": 1, "b": {"c": [1, "x"]}}, ()),
        (
            {f"k{i}": i for i in range(33)},
            {f"k{i}": i for i in range(32)},
            ("details keep at most 32 keys; 1 more were cut: 'k32'.",),
        ),
        (
            {f"k{i}": i for i in range(40)},
            {f"k{i}": i for i in range(32)},
            ("details keep at most 32 keys; 8 more were cut: 'k32', 'k33', 'k34', 'k35', 'k36' and 3 more.",),
        ),
        (
            {"big": "x" * DETAILS_MAX_BYTES, "small": 1},
            {"small": 1},
            ("details keep at most 16 KiB as JSON; cut to fit: 'big'.",),
        ),
        ({"": 1, "  ": 2}, {"(blank)": 1}, ()),
        ({"nan": float("nan"), "inf": float("inf")}, {"nan": None, "inf": None}, ()),
        ({"bad": "\ud800x"}, {"bad": "?x"}, ()),
    ],
)
def test_keep_details(values, kept, warnings):
    assert keep_details(values) == (kept, warnings)


def test_the_size_bound_counts_utf8_bytes_and_the_rest_still_fits():
    values = {f"k{i}": "é" * 1000 for i in range(10)}  # 2000 bytes each
    kept, warnings = keep_details(values)
    assert len(kept) == 8 and size(kept) <= DETAILS_MAX_BYTES
    assert warnings == ("details keep at most 16 KiB as JSON; cut to fit: 'k8', 'k9'.",)


def test_exactly_at_the_bounds_nothing_is_cut():
    filler = DETAILS_MAX_BYTES - size({"a": ""})
    kept, warnings = keep_details({"a": "x" * filler})
    assert (size(kept), warnings) == (DETAILS_MAX_BYTES, ())
    kept, warnings = keep_details({f"k{i}": i for i in range(DETAILS_MAX_KEYS)})
    assert (len(kept), warnings) == (DETAILS_MAX_KEYS, ())


def test_json_safe_keeps_structure():
    assert json_safe({"a": (1, 2), "b": [None, True, 2.5]}) == {"a": [1, 2], "b": [None, True, 2.5]}


def test_a_normalized_alert_bounds_its_details_once():
    alert = NormalizedAlert(
        source="custom", action="trigger", title="x", details={f"k{i}": i for i in range(40)}, warnings=("first",)
    )
    assert len(alert.details) == DETAILS_MAX_KEYS
    assert alert.warnings[0] == "first" and "8 more were cut" in alert.warnings[1]
    from dataclasses import replace

    again = replace(alert, dedup_key="k")  # re-normalized: nothing more is cut, no warning twice
    assert (again.details, again.warnings) == (alert.details, alert.warnings)


def test_warnings_are_bounded():
    alert = NormalizedAlert(source="custom", action="trigger", title="x", warnings=tuple(f"w{i}" for i in range(50)))
    assert len(alert.warnings) == 20
    long = NormalizedAlert(source="custom", action="trigger", title="x", warnings=("w" * 1000,))
    assert len(long.warnings[0]) == 300
