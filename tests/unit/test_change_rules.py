"""PagerDuty change events: the body as PagerDuty checks it (every problem at once), the content
fingerprint that makes retries idempotent, and the sort keys a time range is queried with."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib.change import rules
from chalicelib.change.rules import ChangeLink, parse_change_event
from chalicelib.errors import InvalidPayload

KEY = "0123456789abcdef0123456789abcdef"


def body(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "routing_key": KEY,
        "payload": {
            "summary": "Build Success: Increase snapshot create timeout to 30 seconds",
            "timestamp": "2026-11-22T08:42:58.315+0000",
            "source": "acme-build-pipeline",
            "custom_details": {"build_state": "passed", "build_number": "2"},
        },
        "links": [{"href": "https://ci.example.org/build/2", "text": "View build"}],
    }
    return document | changes


def payload(**changes: Any) -> dict[str, Any]:
    return body(payload=body()["payload"] | changes)


def problems(document: Any) -> list[str]:
    raw = document if isinstance(document, str | bytes) else json.dumps(document)
    with pytest.raises(InvalidPayload) as caught:
        parse_change_event(raw)
    assert isinstance(caught.value.details, list)
    return [str(problem) for problem in caught.value.details]


def test_a_full_event() -> None:
    event = parse_change_event(json.dumps(body()))
    assert event.routing_key == KEY
    assert event.summary == "Build Success: Increase snapshot create timeout to 30 seconds"
    assert event.source == "acme-build-pipeline"
    assert event.timestamp == datetime(2026, 11, 22, 8, 42, 58, 315000, tzinfo=UTC)
    assert event.custom_details == {"build_state": "passed", "build_number": "2"}
    assert event.links == (ChangeLink("https://ci.example.org/build/2", "View build"),)
    assert event.service_ref is None


def test_only_summary_is_required() -> None:
    event = parse_change_event(json.dumps({"routing_key": KEY, "payload": {"summary": "Deployed api 1.2"}}))
    assert (event.source, event.timestamp, event.custom_details, event.links) == (None, None, None, ())


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"payload": {"summary": "x"}}, ["'routing_key' is missing or blank"]),
        (body(routing_key="  "), ["'routing_key' is missing or blank"]),
        (body(routing_key=42), ["'routing_key' is missing or blank"]),
        ({"routing_key": KEY}, ["'payload' is missing or not an object", "'payload.summary' is missing or blank"]),
        (body(payload="deployed"), ["'payload' is missing or not an object", "'payload.summary' is missing or blank"]),
        (payload(summary=""), ["'payload.summary' is missing or blank"]),
        (payload(summary=7), ["'payload.summary' is missing or blank"]),
        (payload(summary="x" * 1025), ["'payload.summary' is too long (must be at most 1024 characters)"]),
        (payload(source=["a"]), ["'payload.source' must be a string"]),
        (payload(source="s" * 1025), ["'payload.source' is too long (must be at most 1024 characters)"]),
        (payload(timestamp="yesterday"), ["'payload.timestamp' is invalid"]),
        (payload(timestamp=1700000000), ["'payload.timestamp' is invalid"]),
        (payload(custom_details="build 2"), ["'payload.custom_details' must be an object"]),
        (payload(custom_details={"log": "x" * 17000}), ["'payload.custom_details' is too large"]),
        (payload(custom_details={"service_id": "payments"}), ["'payload.custom_details.service_id' is invalid"]),
        (payload(custom_details={"service_id": 12}), ["'payload.custom_details.service_id' is invalid"]),
        (body(links={"href": "https://x.example"}), ["'links' must be an array"]),
        (body(links=["https://x.example"]), ["'links[0]' must be an object"]),
        (body(links=[{"text": "no href"}]), ["'links[0].href' is missing or blank"]),
        (body(links=[{"href": "javascript:alert(1)"}]), ["'links[0].href' must be an http or https URL"]),
        (body(links=[{"href": "https://x.example", "text": 5}]), ["'links[0].text' must be a string"]),
    ],
)
def test_each_problem_is_named(document: dict[str, Any], expected: list[str]) -> None:
    found = problems(document)
    assert len(found) == len(expected), found
    for problem, start in zip(found, expected, strict=True):
        assert problem.startswith(start), (problem, start)


def test_every_problem_at_once() -> None:
    found = problems({"payload": {"summary": "", "timestamp": "soon"}, "links": [{"href": "ftp://x"}]})
    assert len(found) == 4
    assert found[0] == "'routing_key' is missing or blank"


@pytest.mark.parametrize("raw", ["", "not json", "[1, 2]", "null", b"\xff\xfe"])
def test_not_a_json_object(raw: str | bytes) -> None:
    with pytest.raises(InvalidPayload):
        parse_change_event(raw)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("SER-00002", "SER-00002"),
        ("ser-00002", "SER-00002"),
        ("svc_abcdefghij", "svc_abcdefghij"),
        (" SVC_ABCDEFGHIJ ", "svc_abcdefghij"),
    ],
)
def test_service_named_by_custom_details(given: str, expected: str) -> None:
    assert parse_change_event(json.dumps(payload(custom_details={"service_id": given}))).service_ref == expected


def test_links_beyond_the_cap_are_ignored() -> None:
    many = [{"href": f"https://ci.example.org/{n}"} for n in range(rules.LINKS_MAX + 5)]
    many.append({"href": "javascript:ignored-too"})
    event = parse_change_event(json.dumps(body(links=many)))
    assert len(event.links) == rules.LINKS_MAX
    assert event.links[0] == ChangeLink("https://ci.example.org/0", None)


def test_summary_and_text_fields_are_trimmed() -> None:
    event = parse_change_event(json.dumps(payload(summary="  Deployed  ", source="   ")))
    assert (event.summary, event.source) == ("Deployed", None)


def test_fingerprint_ignores_key_order_and_spacing_but_not_content() -> None:
    document = body()
    reordered = json.dumps(dict(reversed(list(document.items()))), indent=4)
    assert parse_change_event(reordered).fingerprint == parse_change_event(json.dumps(document)).fingerprint
    other = parse_change_event(json.dumps(payload(summary="another change")))
    assert other.fingerprint != parse_change_event(json.dumps(document)).fingerprint
    other_key = parse_change_event(json.dumps(body(routing_key="f" * 32)))
    assert other_key.fingerprint != parse_change_event(json.dumps(document)).fingerprint


def test_change_id_of_a_timed_change_is_its_content() -> None:
    event = parse_change_event(json.dumps(body()))
    now = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
    first = rules.change_id(event, now)
    assert first.startswith("chg_") and len(first) == 4 + 24
    assert rules.change_id(event, now + timedelta(hours=5)) == first
    assert rules.claim_lifetime(event) == rules.RETENTION


def test_change_id_of_an_untimed_change_includes_its_receipt() -> None:
    event = parse_change_event(json.dumps({"routing_key": KEY, "payload": {"summary": "Deployed"}}))
    now = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
    assert rules.change_id(event, now) != rules.change_id(event, now + timedelta(seconds=1))
    assert rules.claim_lifetime(event) == rules.UNTIMED_RETRY_WINDOW


def test_sort_keys_order_as_time_and_bound_ranges_inclusively() -> None:
    t0 = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)
    keys = [rules.sort_key(t0 + timedelta(microseconds=n * 999_999), f"chg_{n:024x}") for n in range(5)]
    assert keys == sorted(keys)
    low, high = rules.sort_range(t0, t0 + timedelta(microseconds=999_999))
    assert [k for k in keys if low <= k <= high] == keys[:2]
    # Another zone names the same instant.
    assert rules.sort_time(t0.astimezone(timezone_plus_two())) == rules.sort_time(t0)
    assert rules.sort_range(None, None)[0] < keys[0] < rules.sort_range(None, None)[1]


def timezone_plus_two() -> Any:
    from datetime import timezone

    return timezone(timedelta(hours=2))


def test_text_is_cleaned_not_refused() -> None:
    """As an alert's text: controls become spaces, line breaks a space, invisible and bidi characters go."""
    event = parse_change_event(
        json.dumps(
            body(
                payload={"summary": "Deploy\u202e 1.2\x00 done\nok\u200b", "source": "ci\u2066"},
                links=[{"href": "https://ci.example.org/1", "text": "Build\r\n1\ufeff"}],
            )
        )
    )
    assert (event.summary, event.source, event.links[0].text) == ("Deploy 1.2  done ok", "ci", "Build 1")
    assert problems(payload(summary="\u200b\x00 \n")) == ["'payload.summary' is missing or blank"]
