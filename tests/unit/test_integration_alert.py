from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from chalicelib.errors import DeliveryRejected, InvalidPayload, InvalidSignature, SignatureExpired
from chalicelib.integration.normalized import (
    ELLIPSIS,
    SOURCES,
    NormalizedAlert,
    bounded_details,
    get_header,
    normalize_dedup_key,
    one_line,
    stringify,
    truncate,
)


def test_title_is_truncated_to_200_with_an_ellipsis():
    alert = NormalizedAlert(source="custom", action="trigger", title="x" * 500)
    assert len(alert.title) == 200
    assert alert.title.endswith(ELLIPSIS)


def test_title_of_exactly_200_is_kept():
    alert = NormalizedAlert(source="custom", action="trigger", title="y" * 200)
    assert alert.title == "y" * 200


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("title", ["", "   ", "\n\t", "\x00\x01"])
def test_title_is_never_empty(source, title):
    alert = NormalizedAlert(source=source, action="trigger", title=title)
    assert alert.title.endswith(" alert")
    assert alert.summary


def test_title_is_one_line():
    alert = NormalizedAlert(source="sentry", action="trigger", title="  a\nb\r\n\tc  ")
    assert alert.title == "a b c"


def test_description_truncated_to_10000_and_blank_is_none():
    long = NormalizedAlert(source="custom", action="trigger", title="t", description="d" * 20_000)
    assert long.description is not None and len(long.description) == 10_000
    assert long.description.endswith(ELLIPSIS)
    assert NormalizedAlert(source="custom", action="trigger", title="t", description="  ").description is None


def test_long_dedup_key_is_hashed_stably():
    key = "k" * 300
    first = NormalizedAlert(source="alertmanager", action="trigger", dedup_key=key)
    second = NormalizedAlert(source="alertmanager", action="resolve", dedup_key=key)
    assert first.dedup_key == second.dedup_key
    assert first.dedup_key is not None and first.dedup_key.startswith("sha256:") and len(first.dedup_key) == 71
    assert normalize_dedup_key("  ") is None
    assert normalize_dedup_key("x" * 255) == "x" * 255


def test_lone_surrogates_are_made_encodable():
    alert = NormalizedAlert(source="custom", action="trigger", title="bad \ud800 text", metadata={"k": "\udfff"})
    alert.title.encode("utf-8")
    alert.metadata["k"].encode("utf-8")


def test_metadata_is_bounded_and_stringified():
    values: dict[str, object] = {f"key{i}": i for i in range(80)}
    values["blob"] = "z" * 5000
    alert = NormalizedAlert(source="legacy", action="trigger", metadata=values)  # type: ignore[arg-type]
    assert len(alert.metadata) == 50
    assert all(isinstance(v, str) for v in alert.metadata.values())
    assert alert.metadata["key3"] == "3"


def test_raw_details_are_size_bounded():
    huge: dict[str, object] = {f"k{i}": ["v" * 2000] * 50 for i in range(100)}
    huge["nested"] = {"a": {"b": {"c": {"d": {"e": {"f": {"g": 1}}}}}}}
    bounded = bounded_details(huge)
    assert len(json.dumps(bounded)) <= 16_000
    small = bounded_details({"a": 1, "b": [1, 2], "c": None, "d": True, "e": 1.5})
    assert small == {"a": 1, "b": [1, 2], "c": None, "d": True, "e": 1.5}


def test_invalid_construction_is_a_programming_error():
    with pytest.raises(ValueError):
        NormalizedAlert(source="nagios", action="trigger")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        NormalizedAlert(source="custom", action="explode")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        NormalizedAlert(source="custom", action="trigger", severity="P1")  # type: ignore[arg-type]


def test_as_dict_is_json_friendly():
    from datetime import UTC, datetime

    alert = NormalizedAlert(source="custom", action="trigger", title="t", occurred_at=datetime(2026, 1, 1, tzinfo=UTC))
    data = alert.as_dict()
    json.dumps(data)
    assert data["occurred_at"] == "2026-01-01T00:00:00+00:00"


def test_get_header_is_case_insensitive():
    headers = {"X-Service-Signature": " sha256=abc ", "content-type": "application/json"}
    assert get_header(headers, "x-service-signature") == "sha256=abc"
    assert get_header(headers, "Content-Type") == "application/json"
    assert get_header(MappingProxyType(headers), "CONTENT-TYPE") == "application/json"
    assert get_header(headers, "missing") is None
    assert get_header(None, "x") is None
    assert get_header({}, "x") is None


def test_rejection_carries_code_status_and_details():
    rejected = InvalidPayload.from_problems(["'a' is required.", "'b' is bad."])
    assert rejected.code == "INVALID_PAYLOAD"
    assert rejected.status == 400
    assert rejected.details == ["'a' is required.", "'b' is bad."]
    assert "'a' is required." in rejected.message and "'b' is bad." in str(rejected)
    assert InvalidSignature("nope").status == 401
    assert SignatureExpired("old").status == 401
    rejections = (InvalidPayload, InvalidSignature, SignatureExpired)
    assert all(issubclass(kind, DeliveryRejected) for kind in rejections)
    assert {kind.code: kind.status for kind in rejections} == {
        "INVALID_PAYLOAD": 400,
        "INVALID_SIGNATURE": 401,
        "SIGNATURE_EXPIRED": 401,
    }
    # A single problem is its own detail (the PagerDuty body lists it); a fetch failure is retryable.
    assert InvalidSignature("nope").details == ["nope"]
    assert InvalidSignature("fetch failed", retryable=True).retryable


def test_text_helpers():
    assert truncate("abcdef", 4) == "abc" + ELLIPSIS
    assert truncate("abc", 3) == "abc"
    assert one_line("a\x00b\n c", 100) == "a b c"
    assert stringify({"b": 1, "a": [True]}) == '{"a":[true],"b":1}'
    assert stringify(None) == "null"
    assert stringify("x" * 2000).endswith(ELLIPSIS)


def test_controls_and_bidi_overrides_are_cleaned_not_refused():
    # Issue #13: monitoring tools send what they send; what the API's text rule refuses is taken
    # out of an alert instead (README, "Text in requests").
    alert = NormalizedAlert(
        source="custom",
        action="trigger",
        title="Disk \u202efull\u2066 on db-1\u200b\ufeff",
        description="line one\r\nline\x00 two\u202e\rthree\u2029four",
        metadata={"host\u202e": "db-1\x00\u2067"},
    )
    assert alert.title == "Disk full on db-1"
    assert alert.description == "line one\nline  two\nthree\nfour"
    assert alert.metadata == {"host": "db-1 "}
    assert alert.summary == "Custom webhook: trigger"


def test_characters_real_text_needs_are_kept_in_alerts():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # zero-width joiners
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # zero-width non-joiner
    alert = NormalizedAlert(
        source="custom", action="trigger", title=f"{family} {persian} \u05e9\u05dc\u05d5\u05dd\u200f"
    )
    assert alert.title == f"{family} {persian} \u05e9\u05dc\u05d5\u05dd\u200f"
