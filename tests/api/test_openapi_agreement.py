"""The served document and the request models agree on what a body may be, case by case.

Each row is a body the document and its model once judged differently (Schemathesis found them):
the document's schema and the model (through the API's body reader) must now give the same answer.
tests/e2e/test_api_contract.py sweeps every operation the same way against the running stack.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

from chalicelib.api.validation import parse_body
from chalicelib.apikey.models import ApiKeyCreate
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.catalog.models import ServicePatch
from chalicelib.directory.models import TeamPatch, UserCreate, UserPatch
from chalicelib.errors import AppError
from chalicelib.escalation.models import EscalationPolicyPatch
from chalicelib.incident.models import IncidentListQuery, IncidentUpdate
from chalicelib.integration.models import IntegrationCreate
from chalicelib.oncall.models import SchedulePatch
from chalicelib.outbound.models import SubscriptionPatch
from chalicelib.postmortem.models import PostmortemPatch
from chalicelib.statuspage.models import PageCreate, StatusIncidentCreate, TemplateCreate

ROWS: list[tuple[type[BaseModel], dict[str, Any], bool]] = [
    # A PATCH needs a field to change: `version` alone is nothing to change.
    (SchedulePatch, {"version": 1}, False),
    (EscalationPolicyPatch, {"version": 2}, False),
    (SubscriptionPatch, {"version": 3}, False),
    (SchedulePatch, {"name": "Primary", "version": 1}, True),
    (IncidentUpdate, {}, False),
    (IncidentUpdate, {"description": None}, True),
    # version is at least 1 (null answers 500 until finding 2 of issue 13 is fixed).
    (PostmortemPatch, {"summary": "s", "version": 0}, False),
    # A field only `nullable` lists may be null.
    (ServicePatch, {"name": None}, False),
    (ServicePatch, {"description": None}, True),
    (UserPatch, {"name": None}, True),
    # Trimmed strings: whitespace alone is empty (U+0085 is whitespace to pydantic, not to ECMA \s).
    (PageCreate, {"name": "\r", "slug": "ok"}, False),
    (PageCreate, {"name": "\x85\u3000", "slug": "ok"}, False),
    # U+001C is not whitespace to a JSON Schema regex but is a control character: the text
    # rule (README, "Text in requests") refuses it, and the document says so.
    (PageCreate, {"name": "\x1c", "slug": "ok"}, False),
    (StatusIncidentCreate, {"title": "Down", "body": "b", "component_ids": [" "]}, False),
    # Email addresses: the same characters count as whitespace on both sides.
    (UserCreate, {"name": "Ann", "email": "a\x85b@example.com"}, False),
    (UserCreate, {"name": "Ann", "email": "a\ufeffb@example.com"}, True),
    # Booleans are JSON true or false, not 0 or 1.
    (TeamPatch, {"is_active": 0}, False),
    (UserPatch, {"is_active": 1}, False),
    (IntegrationCreate, {"type": "custom", "name": "n", "signing": 0}, False),
    (IntegrationCreate, {"type": "custom", "name": "n", "signing": True}, True),
    # A map's keys follow the key rule and every value the value rule: the document said so only for
    # keys matching the pattern (patternProperties), leaving a key with U+001C free to hold anything.
    (TemplateCreate, {"name": "n", "title": "t", "body": "b", "component_statuses": {"\x1c": "major_outage"}}, False),
    (TemplateCreate, {"name": "n", "title": "t", "body": "b", "component_statuses": {"\x1c": {"a": [True]}}}, False),
    (TemplateCreate, {"name": "n", "title": "t", "body": "b", "component_statuses": {"cmp_1": "on_fire"}}, False),
    (TemplateCreate, {"name": "n", "title": "t", "body": "b", "component_statuses": {"cmp_1": "major_outage"}}, True),
]


def document_allows(document: dict[str, Any], model: type[BaseModel], body: dict[str, Any]) -> bool:
    validator = Draft202012Validator({**document, "$ref": f"#/components/schemas/{model.__name__}"})
    return validator.is_valid(body)


def model_allows(model: type[BaseModel], body: dict[str, Any]) -> bool:
    try:
        parse_body(model, json.dumps(body))
    except AppError:
        return False
    return True


@pytest.mark.parametrize(
    ("model", "body", "valid"), ROWS, ids=[f"{m.__name__}-{i}" for i, (m, _, _) in enumerate(ROWS)]
)
def test_the_document_and_the_model_agree(
    document: dict[str, Any], model: type[BaseModel], body: dict[str, Any], valid: bool
) -> None:
    assert (document_allows(document, model, body), model_allows(model, body)) == (valid, valid)


def test_scopes_are_listed() -> None:
    schema = ApiKeyCreate.model_json_schema()
    assert schema["properties"]["scopes"]["items"]["enum"] == list(ALL_SCOPES)


def test_cross_field_rules_are_described() -> None:
    """The rules the models check between two fields, which JSON Schema cannot state, are written down."""
    query = IncidentListQuery.model_json_schema()["properties"]
    assert "created_after" in query["created_before"]["description"]
    assert "resolved_after" in query["resolved_before"]["description"]


def test_the_pagerduty_drop_in_answers_its_documented_error_body(document: dict[str, Any]) -> None:
    """POST /v2/enqueue answers errors as PagerDuty does, and the document says so (it said WebhookError)."""
    from chalice.test import Client

    from app import app

    with Client(app) as client:
        response = client.http.post("/v2/enqueue", body=b"{}", headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    schema = document["paths"]["/v2/enqueue"]["post"]["responses"]["400"]["content"]["application/json"]["schema"]
    Draft202012Validator({**document, **schema}).validate(json.loads(response.body))


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("POST", "/v2/alerts", b"{}", 401),  # no GenieKey
        ("GET", "/v2/alerts/x", b"", 401),
        ("GET", "/v2/heartbeats/nightly/ping", b"", 401),
        ("DELETE", "/v2/alerts/x", b"", 405),
    ],
)
def test_the_opsgenie_drop_in_answers_its_documented_error_body(
    document: dict[str, Any], client: Any, method: str, path: str, body: bytes, status: int
) -> None:
    """The Opsgenie drop-in answers errors as Opsgenie does ({message, took, requestId}), and the document says so."""
    response = client.http.request(method, path, body=body, headers={"Content-Type": "application/json"})
    assert response.status_code == status
    documented = "post" if method == "POST" else "get"
    route = "/v2/alerts/{identifier}" if path == "/v2/alerts/x" else path
    route = "/v2/heartbeats/{name}/ping" if path.startswith("/v2/heartbeats/") else route
    schema = document["paths"][route][documented]["responses"]["401"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/OpsgenieError"}
    Draft202012Validator({**document, **schema}).validate(json.loads(response.body))


@pytest.mark.parametrize(
    ("url", "valid"),
    [
        ("https://hooks.example.com/x?a=1", True),
        ("http://x.example/", True),
        ("ftp://x.example/", False),
        ("https://x.example/a b", False),
        ("example.com/hook", False),
    ],
)
def test_the_target_url_pattern_is_the_code_check(document: dict[str, Any], url: str, valid: bool) -> None:
    from chalicelib.delivery.targets import parse_target
    from chalicelib.errors import ValidationFailed

    pattern = document["components"]["schemas"]["SubscriptionCreate"]["properties"]["url"]["pattern"]
    try:
        parse_target(url, allow_local=True)
        accepted = True
    except ValidationFailed:
        accepted = False
    assert (re.search(pattern, url) is not None, accepted) == (valid, valid)


@pytest.mark.parametrize("slug", ["status", "a", "a-b-9", "-a", "a-", "A", "a_b", "", "a" * 64])
def test_the_slug_pattern_is_the_code_check(document: dict[str, Any], slug: str) -> None:
    from chalicelib.errors import ValidationFailed
    from chalicelib.statuspage.rules import check_slug

    schema = document["components"]["schemas"]["PageCreate"]["properties"]["slug"]
    try:
        check_slug(slug)
        accepted = True
    except ValidationFailed:
        accepted = False
    assert Draft202012Validator(schema).is_valid(slug) == accepted
