"""The configuration document: YAML read as YAML 1.2 core, validated against the published
schema and then for keys and references, every error naming its line; the committed schema
file is the one the models generate; an export reads back as the same document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chalicelib.client import yamlio
from chalicelib.client.document import Document, json_schema, schema_text
from chalicelib.client.validate import InvalidDocument, check_document, parse

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs" / "tocsin-config.schema.json"

VALID = """\
version: 1
users:
  - email: alice@example.com
    name: Alice
    notification_rules:
      high: [{type: email, address: alice@example.com}]
      low: []
teams:
  - name: Platform
    members: [alice@example.com]
schedules:
  - name: Primary
    time_zone: Europe/Berlin
    team: Platform
    layers:
      - name: Weekly
        members: [alice@example.com]
        rotation: weekly
        handoff_time: 10:30
        start: 2026-11-02T09:00:00Z
escalation_policies:
  - name: Default
    levels:
      - delay_minutes: 10
        targets: [{schedule: Primary}, {user: alice@example.com}]
services:
  - name: Payments
    escalation_policy: Default
"""


def problems(text: str) -> list[tuple[int | None, str, str]]:
    with pytest.raises(InvalidDocument) as raised:
        parse(text, "tocsin.yaml")
    return [(p.line, ".".join(str(part) for part in p.path), p.message) for p in raised.value.problems]


def test_a_valid_document_reads_with_yaml_12_core_types() -> None:
    document, loaded = parse(VALID, "tocsin.yaml")
    assert document.schedules is not None
    layer = document.schedules[0].layers[0]
    assert layer.handoff_time == "10:30"  # YAML 1.1 would read 630
    assert layer.start.isoformat() == "2026-11-02T09:00:00+00:00"
    assert document.integrations is None  # left out: not managed
    assert loaded.line_of(("schedules", 0, "layers", 0, "handoff_time")) == 19
    assert yamlio.load("a: no\nb: on\nc: 0o17\nd: 0x1F\ne: 1.5\nf: ~\ng: True\n").data == {
        "a": "no",
        "b": "on",
        "c": 15,
        "d": 31,
        "e": 1.5,
        "f": None,
        "g": True,
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("version: 1\nservices: [\n", [(3, "", "expected the node content")], id="yaml syntax"),
        pytest.param("version: 1\nversion: 1\n", [(2, "", "the key 'version' is given twice")], id="key twice"),
        pytest.param(
            "version: 1\nservices:\n  - name: Payments\n    colour: blue\n",
            [(3, "services.0", "Additional properties are not allowed ('colour' was unexpected)")],
            id="unknown field",
        ),
        pytest.param("version: 2\n", [(1, "version", "1 was expected")], id="version"),
        pytest.param(
            "version: 1\nheartbeats:\n  - name: b\n    service: S\n    interval_seconds: 10\n",
            [(5, "heartbeats.0.interval_seconds", "10 is less than the minimum of 60")],
            id="a bound",
        ),
        pytest.param(
            "version: 1\nservices:\n  - name: A\n  - description: no name\n",
            [(4, "services.1", "'name' is a required property")],
            id="required",
        ),
        pytest.param(
            "version: 1\nescalation_policies:\n  - name: P\n    levels:\n      - delay_minutes: 1\n"
            "        targets:\n          - {user: a@example.com, schedule: S}\n",
            [
                (
                    7,
                    "escalation_policies.0.levels.0.targets.0",
                    "is valid under each of",
                )
            ],
            id="a target names one thing",
        ),
    ],
)
def test_schema_and_yaml_errors_name_the_line(text: str, expected: list[tuple[int, str, str]]) -> None:
    found = problems(text)
    assert [(line, path) for line, path, _ in found] == [(line, path) for line, path, _ in expected]
    for (_, _, message), (_, _, wanted) in zip(found, expected, strict=True):
        assert wanted in message


def test_keys_and_references_name_the_line() -> None:
    text = VALID.replace("    team: Platform\n", "    team: Platfrom\n").replace(
        "services:\n  - name: Payments\n", "services:\n  - name: Payments\n  - name: payments\n"
    )
    assert problems(text) == [
        (14, "schedules.0.team", "no team 'Platfrom' in the document's teams"),
        (28, "services.1", "a service with the same key is item 0 already"),
    ]
    with pytest.raises(InvalidDocument) as raised:
        parse(text, "tocsin.yaml")
    rendered = str(raised.value)
    assert rendered.splitlines()[0] == "tocsin.yaml:14: schedules.0.team: no team 'Platfrom' in the document's teams"


def test_references_into_a_section_left_out_are_checked_against_the_organization() -> None:
    document = Document.model_validate({"version": 1, "services": [{"name": "Payments", "team": "Ops"}]})
    assert check_document(document) == []  # offline: anything may exist
    assert [p.message for p in check_document(document, known=lambda section, key: False)] == [
        "no team 'Ops' in the organization (teams are not in the document)"
    ]
    assert check_document(document, known=lambda section, key: (section, key) == ("teams", "ops")) == []


def test_inner_names_and_rule_steps() -> None:
    text = """\
version: 1
users:
  - email: a@example.com
    name: A
    contact_methods: [{type: sms, address: "+15551234567"}]
    notification_rules:
      high: [{type: voice, address: "+15551234567"}]
status_pages:
  - name: Public
    slug: acme
    sections:
      - name: Core
        components: [{name: API}]
      - name: core
    templates:
      - {name: Down, title: Down, body: Down, component_statuses: {Web: major_outage}}
event_rules:
  - description: by service
    conditions: [{field: service, op: contains, value: Pay}]
    actions: {drop: true}
"""
    assert [(line, path) for line, path, _ in problems(text)] == [
        (7, "users.0.notification_rules.high.0"),
        (14, "status_pages.0.sections.1.name"),
        (16, "status_pages.0.templates.0.component_statuses.Web"),
        (19, "event_rules.0.conditions.0.op"),
    ]


def test_the_published_schema_is_current() -> None:
    assert SCHEMA_FILE.read_text() == schema_text(), (
        "run: python -m chalicelib.client config schema > docs/tocsin-config.schema.json"
    )
    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["properties"]) == set(Document.model_fields) and schema["required"] == ["version"]
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(json_schema())


def test_a_dumped_document_reads_back_the_same() -> None:
    document, _ = parse(VALID, "tocsin.yaml")
    text = yamlio.dump(document.model_dump(mode="json", exclude_defaults=True, by_alias=True))
    again, _ = parse(text, "again.yaml")
    assert again == document
    assert "handoff_time: '10:30'" in text  # quoted for YAML 1.1 readers too
