"""The Opsgenie Alert API bodies as tables: priorities, tags, details, bounds, alias, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chalicelib.errors import InvalidFields, InvalidPayload
from chalicelib.integration.parsers import parse
from chalicelib.integration.parsers.opsgenie import (
    OpsgenieCreate,
    parse_action,
    parse_create,
    tag_labels,
)
from chalicelib.severity import opsgenie_priority
from tests.fuzzing import any_body, fuzz_settings, only_4xx

FIXTURES = Path(__file__).parent / "fixtures" / "integration"

RESPONDER_PROBLEM = "each recipient needs a type (team, user, escalation, schedule) and an id, a name or a username"


def create(**fields: Any) -> OpsgenieCreate:
    return parse_create(json.dumps({"message": "Disk full on db-1", **fields}).encode())


def invalid(body: Any) -> dict[str, str]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    with pytest.raises(InvalidFields) as caught:
        parse_create(raw)
    assert caught.value.status == 422
    assert caught.value.details == [f"{name}: {problem}" for name, problem in caught.value.fields.items()]
    return caught.value.fields


def test_a_full_create() -> None:
    made = create(
        alias="db-1/disk",
        description="Disk / is 97% full",
        responders=[{"type": "team", "name": "DBA"}, {"type": "user", "username": "ana@example.org"}],
        visibleTo=[{"type": "team", "id": "4513b7ea"}],
        actions=["Restart", "Ping"],
        tags=["env:prod", "database", "team=dba"],
        details={"host": "db-1", "free_gb": "3"},
        entity="db-1",
        source="nagios",
        priority="P2",
        user="ana",
        note="Paged from the runbook",
    )
    alert, fields = made.alert, made.fields
    assert (alert.source, alert.action, alert.title) == ("opsgenie", "trigger", "Disk full on db-1")
    assert (alert.description, alert.severity, alert.dedup_key) == ("Disk / is 97% full", "SEV1", "db-1/disk")
    assert alert.details == {"host": "db-1", "free_gb": "3"}
    assert alert.metadata == {
        "env": "prod",
        "database": "true",
        "team": "dba",
        "priority": "P2",
        "entity": "db-1",
        "source": "nagios",
    }
    assert alert.summary == "Opsgenie alert from nagios"
    assert alert.warnings == ()
    assert fields.alias == "db-1/disk" and fields.priority == "P2"
    assert fields.tags == ("env:prod", "database", "team=dba")
    assert (fields.entity, fields.source, fields.user, fields.note) == (
        "db-1",
        "nagios",
        "ana",
        "Paged from the runbook",
    )
    assert fields.actions == ("Restart", "Ping")
    assert fields.responders == ({"type": "team", "name": "DBA"}, {"type": "user", "username": "ana@example.org"})
    assert fields.visible_to == ({"type": "team", "id": "4513b7ea"},)


@pytest.mark.parametrize(
    ("priority", "severity"),
    [
        ("P1", "SEV0"),
        ("P2", "SEV1"),
        ("P3", "SEV2"),
        ("P4", "SEV3"),
        ("P5", "SEV4"),
        ("p1", "SEV0"),
        (" P5 ", "SEV4"),
        (None, "SEV2"),
        ("", "SEV2"),
    ],
)
def test_priorities_are_severities(priority: str | None, severity: str) -> None:
    made = create(**({} if priority is None else {"priority": priority}))
    assert made.alert.severity == severity
    assert opsgenie_priority(severity) == made.fields.priority


@pytest.mark.parametrize("priority", ["P0", "P6", "critical", 1, True, ["P1"]])
def test_another_priority_is_refused_as_opsgenie_does(priority: Any) -> None:
    assert invalid({"message": "x", "priority": priority}) == {"priority": "must be one of P1, P2, P3, P4, P5"}


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"message": "is required and must not be blank"}),
        ({"message": "   "}, {"message": "is required and must not be blank"}),
        ({"message": {"text": "x"}}, {"message": "must be a string, not an object"}),
        ({"message": "x", "alias": ["a"]}, {"alias": "must be a string, not an array"}),
        ({"message": "x", "tags": {"env": "prod"}}, {"tags": "must be a list of strings"}),
        ({"message": "x", "tags": ["ok", {"no": 1}]}, {"tags": "must be a list of strings"}),
        ({"message": "x", "details": ["a"]}, {"details": "must be an object of strings, not an array"}),
        (
            {"message": "x", "responders": [{"type": "robot", "id": "1"}]},
            {"responders": RESPONDER_PROBLEM},
        ),
        (
            {"message": "x", "visibleTo": [{"type": "schedule", "id": "1"}]},
            {"visibleTo": "each recipient needs a type (team, user) and an id, a name or a username"},
        ),
        (
            {"message": "x", "responders": [{"type": "team"}]},
            {"responders": RESPONDER_PROBLEM},
        ),
        ({"message": "x", "responders": "team"}, {"responders": "must be a list of recipients"}),
        (
            {"priority": "P9", "entity": {}},
            {
                "message": "is required and must not be blank",
                "priority": "must be one of P1, P2, P3, P4, P5",
                "entity": "must be a string, not an object",
            },
        ),
    ],
)
def test_invalid_fields_are_named_all_at_once(body: dict[str, Any], fields: dict[str, str]) -> None:
    assert invalid(body) == fields


@pytest.mark.parametrize("body", [b"", b"not json", b"[1, 2]", b'"text"', b"\xff\xfe"])
def test_a_body_that_is_not_a_json_object_is_a_bad_request(body: bytes) -> None:
    with pytest.raises(InvalidPayload) as caught:
        parse_create(body)
    assert caught.value.status == 400


@pytest.mark.parametrize(
    ("field", "limit"),
    [("message", 130), ("alias", 512), ("entity", 512), ("source", 100), ("user", 100), ("note", 25_000)],
)
def test_over_opsgenies_limits_fields_are_cut_as_opsgenie_does(field: str, limit: int) -> None:
    made = create(**{field: "a" * (limit + 7)})
    kept = made.alert.title if field == "message" else getattr(made.fields, field)
    assert kept == "a" * limit
    assert made.alert.warnings == (f"'{field}' has {limit + 7} characters; cut to {limit}, as Opsgenie does.",)


def test_a_long_description_is_cut_to_opsgenies_limit_then_to_an_incidents() -> None:
    made = create(description="d" * 15_010)
    assert made.alert.description is not None and len(made.alert.description) == 10_000
    assert made.alert.warnings == (
        "'description' has 15010 characters; cut to 15000, as Opsgenie does.",
        "'description' is kept to its first 10000 characters (an incident's limit).",
    )


def test_an_alias_longer_than_a_dedup_key_is_kept_whole_as_its_hash() -> None:
    long_alias = "x" * 400
    made = create(alias=long_alias)
    assert made.fields.alias == long_alias
    assert made.alert.dedup_key is not None and made.alert.dedup_key.startswith("sha256:")
    assert create(alias=long_alias).alert.dedup_key == made.alert.dedup_key
    assert create(alias="x" * 399).alert.dedup_key != made.alert.dedup_key


@pytest.mark.parametrize(
    ("alias", "dedup_key"), [(None, None), ("", None), ("  ", None), (42, "42"), (" api/5xx ", "api/5xx")]
)
def test_alias_is_the_dedup_key(alias: Any, dedup_key: str | None) -> None:
    assert create(**({} if alias is None else {"alias": alias})).alert.dedup_key == dedup_key


@pytest.mark.parametrize(
    ("tags", "labels"),
    [
        (("env:prod",), {"env": "prod"}),
        (("env=prod",), {"env": "prod"}),
        (("url:https://x.example/a=b",), {"url": "https://x.example/a=b"}),
        (("a=b:c",), {"a": "b:c"}),
        (("critical",), {"critical": "true"}),
        ((":odd",), {":odd": "true"}),
        (("empty:",), {"empty:": "true"}),
        (("env:prod", "env:dev"), {"env": "prod"}),
    ],
)
def test_tags_are_labels(tags: tuple[str, ...], labels: dict[str, str]) -> None:
    assert tag_labels(tags) == labels


def test_tags_bounds_and_spelling() -> None:
    made = create(tags=[f"t{i}" for i in range(25)] + ["t1"])
    assert made.fields.tags == tuple(f"t{i}" for i in range(20))
    assert made.alert.warnings == ("'tags' has 25 entries; the first 20 are kept, as Opsgenie does.",)
    assert create(tags="env:prod, db ,, db").fields.tags == ("env:prod", "db")
    assert create(tags=["x" * 60, "  ", 7]).fields.tags == ("x" * 50, "7")


def test_details_are_strings_as_opsgenie_has_them() -> None:
    made = create(details={"count": 3, "ok": False, "none": None, "nested": {"a": [1]}, "text": "t"})
    assert made.alert.details == {"count": "3", "ok": "false", "none": "", "nested": '{"a":[1]}', "text": "t"}
    assert made.alert.warnings == ("details 'nested' were not strings; kept as their JSON text.",)


def test_fields_opsgenie_does_not_define_are_kept_as_details() -> None:
    made = create(team="dba", details={"host": "db-1", "team": "kept first"})
    assert made.alert.details == {"host": "db-1", "team": "kept first"}
    assert made.alert.warnings == ("'team' is not part of Opsgenie's alert; kept in details.",)


@pytest.mark.parametrize(
    ("fields", "hint"),
    [
        ({"details": {"service_id": "ser-00002"}}, "SER-00002"),
        ({"tags": ["service_id:SER-00003"]}, "SER-00003"),
        ({"tags": ["service_id=svc_abcdefghij"]}, "svc_abcdefghij"),
        ({"details": {"service_id": "SER-00002"}, "tags": ["service_id:SER-00003"]}, "SER-00002"),
        ({"details": {"service_id": "payments"}}, None),
        ({}, None),
    ],
)
def test_the_service_is_named_by_details_or_a_tag(fields: dict[str, Any], hint: str | None) -> None:
    assert create(**fields).alert.service_hint == hint


def test_runbook_url_comes_from_details() -> None:
    assert create(details={"runbook_url": "https://wiki.example.org/disk"}).alert.runbook_url == (
        "https://wiki.example.org/disk"
    )
    assert create(details={"runbook_url": "wiki/disk"}).alert.runbook_url is None


def test_the_webhook_url_reads_the_same_body_and_refuses_as_a_webhook() -> None:
    alert = parse("opsgenie", {}, json.dumps({"message": "m", "priority": "P4"}).encode())
    assert (alert.source, alert.severity) == ("opsgenie", "SEV3")
    with pytest.raises(InvalidPayload) as caught:
        parse("opsgenie", {}, json.dumps({"priority": "P7"}).encode())
    assert caught.value.details == [
        "message: is required and must not be blank",
        "priority: must be one of P1, P2, P3, P4, P5",
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"", (None, None, None)),
        (b"  ", (None, None, None)),
        (b"{}", (None, None, None)),
        (b'{"user": "ana", "source": "cli", "note": "on it"}', ("ana", "cli", "on it")),
        (b'{"note": 42}', (None, None, "42")),
    ],
)
def test_action_bodies(body: bytes, expected: tuple[str | None, ...]) -> None:
    action = parse_action(body)
    assert (action.user, action.source, action.note) == expected


def test_an_action_body_is_checked_too() -> None:
    with pytest.raises(InvalidFields) as caught:
        parse_action(b'{"user": ["ana"]}')
    assert caught.value.fields == {"user": "must be a string, not an array"}
    with pytest.raises(InvalidFields) as caught:
        parse_action(b'{"user": "ana"}', note_required=True)
    assert caught.value.fields == {"note": "is required and must not be blank"}
    with pytest.raises(InvalidPayload):
        parse_action(b"[]")


@pytest.mark.parametrize("name", ["opsgenie_create.json", "opsgenie_alertmanager_create.json"])
def test_fixtures_of_real_senders(name: str) -> None:
    made = parse_create((FIXTURES / name).read_bytes())
    assert made.alert.warnings == ()
    assert made.alert.severity in ("SEV0", "SEV1")
    assert made.alert.service_hint in ("SER-00001", "SER-00002")


@fuzz_settings()
@given(body=any_body([json.loads((FIXTURES / "opsgenie_create.json").read_text())]), note=st.booleans())
def test_action_bodies_give_an_action_or_a_4xx(body: bytes, note: bool) -> None:
    only_4xx(lambda: parse_action(body, note_required=note))
