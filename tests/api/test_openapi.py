"""The served OpenAPI document: valid 3.1.0, and it describes every route the app registers.

The tests iterate `app.routes`, so a route added later without an OpenAPI description fails here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from openapi_spec_validator import validate

from chalicelib.api.lazy import documented_operations as operations
from chalicelib.auth.scopes import ALL_SCOPES

DOCUMENT_PATH = "/api/v1/openapi.json"
# Routes the document does not describe: the catch-all 404 and the document itself.
UNDOCUMENTED_ROUTES = {"/{proxy+}", DOCUMENT_PATH}
# Operations any valid credential may call, so they name no scope (they still answer 401).
ANY_CREDENTIAL_OPERATIONS = {"verifyCredential"}
HTTP_METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
DOCUMENTED_ERROR_CODES = {
    "VALIDATION_ERROR",
    "INVALID_SEVERITY",
    "INVALID_STATUS",
    "TRANSITION_NOT_ALLOWED",
    "UNAUTHORIZED",
    "FORBIDDEN",
    "NOT_FOUND",
    "METHOD_NOT_ALLOWED",
    "IDEMPOTENCY_KEY_REUSED",
    "IDEMPOTENCY_IN_PROGRESS",
    "CONTACT_DETAILS_MISSING",
    "RATE_LIMITED",
    "INTERNAL_ERROR",
    "DELIVERY_FAILED",
}


@pytest.fixture(scope="module")
def app() -> Any:
    from app import app as chalice_app

    return chalice_app


@pytest.fixture(scope="module")
def served(app: Any) -> Iterator[Any]:
    """GET the document once, with no credential. It touches no AWS, so no emulator is needed."""
    from chalice.test import Client

    from chalicelib.settings import get_settings, reset_settings

    # Read settings outside the call: chalice.test applies the 'dev' stage's environment during calls.
    reset_settings()
    get_settings()
    with Client(app) as client:
        yield client.http.get(DOCUMENT_PATH)
    reset_settings()


@pytest.fixture(scope="module")
def document(served: Any) -> dict[str, Any]:
    parsed: dict[str, Any] = json.loads(served.body)
    return parsed


def registered_routes(app: Any) -> list[tuple[str, str]]:
    return sorted(
        (path, method.lower())
        for path, methods in app.routes.items()
        if path not in UNDOCUMENTED_ROUTES
        for method in methods
    )


def documented_operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                yield path, method, operation


def is_public(operation: dict[str, Any]) -> bool:
    return operation.get("security") == []


def test_served_without_auth_and_unenveloped(served: Any) -> None:
    assert served.status_code == 200
    assert served.headers["Content-Type"] == "application/json"
    assert "success" not in json.loads(served.body)


def test_served_even_with_a_bad_credential(app: Any) -> None:
    from chalice.test import Client

    with Client(app) as client:
        response = client.http.get(DOCUMENT_PATH, headers={"Authorization": "Bearer tcs_nonsense"})
    assert response.status_code == 200


def test_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    validate(document)
    assert document["openapi"] == "3.1.0"
    assert document["info"]["version"] == "1.0.0"
    assert document["info"]["title"]


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


def _default_problems(node: Any, where: str) -> Iterator[str]:
    if isinstance(node, dict):
        declared = node.get("type")
        if "default" in node and isinstance(declared, str | list):
            types = [declared] if isinstance(declared, str) else declared
            allowed = tuple(t for name in types for t in _JSON_TYPES.get(name, (object,)))
            if not isinstance(node["default"], allowed):
                yield f"{where}: default {node['default']!r} is not of type {declared}"
        for key, value in node.items():
            yield from _default_problems(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _default_problems(value, f"{where}/{index}")


def test_defaults_match_their_schema(document: dict[str, Any]) -> None:
    """Names every offender (the validator stops at the first). A pydantic field typed `str` with
    `default=None` produces one: type it `str | None`, or keep the default out of the schema."""
    assert list(_default_problems(document, "#")) == []


def test_bearer_security_is_the_default(document: dict[str, Any]) -> None:
    scheme = document["components"]["securitySchemes"]["bearer"]
    assert scheme["type"] == "http"
    assert scheme["scheme"] == "bearer"
    assert document["security"] == [{"bearer": []}]


def test_every_registered_route_is_documented_with_every_method(app: Any, document: dict[str, Any]) -> None:
    routes = registered_routes(app)
    assert ("/api/v1/auth/verify", "get") in routes  # the walk sees the app's routes at all
    # The console's HTML pages (/app) are not API operations; everything else is documented.
    missing = [
        f"{method.upper()} {path}"
        for path, method in routes
        if method not in document["paths"].get(path, {}) and not (path == "/app" or path.startswith("/app/"))
    ]
    assert missing == [], f"routes without an OpenAPI description: {missing}"


def test_every_documented_operation_is_a_registered_route(app: Any, document: dict[str, Any]) -> None:
    routes = set(registered_routes(app))
    stale = [f"{m.upper()} {p}" for p, m, _ in documented_operations(document) if (p, m) not in routes]
    assert stale == [], f"documented but not served: {stale}"


def test_operation_ids_are_unique(document: dict[str, Any]) -> None:
    ids = [operation["operationId"] for _, _, operation in documented_operations(document)]
    assert len(ids) == len(set(ids))
    assert all(ids)


def test_non_public_operations_document_401_403_and_their_scope(document: dict[str, Any]) -> None:
    problems = []
    for path, method, operation in documented_operations(document):
        if is_public(operation):
            continue
        name = f"{method.upper()} {path}"
        for status in ("401", "403"):
            if status not in operation["responses"]:
                problems.append(f"{name}: no {status} response")
        scope = operation.get("x-required-scope")
        if operation["operationId"] in ANY_CREDENTIAL_OPERATIONS:
            if scope is not None:
                problems.append(f"{name}: listed as any-credential but requires {scope}")
            continue
        if scope not in ALL_SCOPES:
            problems.append(f"{name}: declares no known scope ({scope!r})")
        elif f"`{scope}`" not in operation.get("description", ""):
            problems.append(f"{name}: the description does not name its scope {scope}")
    assert problems == []


def test_declared_scope_is_the_enforced_scope(document: dict[str, Any]) -> None:
    enforced = {(op.path, op.method.lower()): op for op in operations()}
    for path, method, operation in documented_operations(document):
        registered = enforced[(path, method)]
        assert operation.get("x-required-scope") == registered.scope, f"{method.upper()} {path}"
        assert is_public(operation) == registered.public, f"{method.upper()} {path}"


def test_every_operation_documents_rate_limits_and_errors(document: dict[str, Any]) -> None:
    for path, method, operation in documented_operations(document):
        name = f"{method.upper()} {path}"
        responses = operation["responses"]
        for status in ("429", "500"):
            assert status in responses, f"{name}: no {status}"
        successes = [code for code in responses if code.startswith("2")]
        assert successes, name
        # Several success statuses share one body shape (an inbound webhook: 201 opened, 200 updated, 202 suppressed).
        assert len({json.dumps(responses[code].get("content"), sort_keys=True) for code in successes}) == 1, name
        headers = responses[successes[0]].get("headers", {})
        for header in ("X-RateLimit-Category", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
            assert header in headers, f"{name}: success response lacks {header}"
        # The API answers in the error envelope; inbound webhooks in the providers' style,
        # PagerDuty's Events API drop-ins (events and change events) as PagerDuty does, and the
        # Opsgenie Alert API drop-in (alerts and heartbeat pings) as Opsgenie does.
        expected = "WebhookError" if not path.startswith("/api/v1") else "ErrorEnvelope"
        expected = "PagerDutyError" if path in ("/v2/enqueue", "/v2/change/enqueue") else expected
        expected = "OpsgenieError" if path.startswith(("/v2/alerts", "/v2/heartbeats/")) else expected
        html_page = "text/html" in responses[successes[0]]["content"]
        for code, response in responses.items():
            if code == "304":
                assert "content" not in response and "If-None-Match" in str(operation["parameters"]), name
            elif html_page and not code.startswith("2"):
                assert response["content"] == {"text/html": {"schema": {"type": "string"}}}, f"{name} {code}"
            elif not code.startswith("2"):
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": f"#/components/schemas/{expected}"}, f"{name} {code}"


def test_success_responses_use_the_envelope(document: dict[str, Any]) -> None:
    for path, method, operation in documented_operations(document):
        if not path.startswith("/api/v1"):
            continue  # inbound webhooks answer in the providers' own shapes
        [success] = [r for code, r in operation["responses"].items() if code.startswith("2")]
        if "application/json" not in success["content"]:
            # An export answers its rows as a file, not in the envelope (docs/EXPORTS.md).
            assert list(success["content"]) == ["text/csv", "application/x-ndjson"], f"{method.upper()} {path}"
            assert path == "/api/v1/exports/{kind}" and method == "get"
            continue
        schema = success["content"]["application/json"]["schema"]
        assert schema["required"] == ["success", "data", "meta"], f"{method.upper()} {path}"
        assert schema["properties"]["meta"] == {"$ref": "#/components/schemas/Meta"}


def test_path_parameters_match_the_template(document: dict[str, Any]) -> None:
    for path, method, operation in documented_operations(document):
        expected = set(re.findall(r"{([^}]+)}", path))
        declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
        assert declared == expected, f"{method.upper()} {path}"


def test_operations_with_bodies_document_400(document: dict[str, Any]) -> None:
    for path, method, operation in documented_operations(document):
        if "requestBody" in operation or any(p["in"] == "query" for p in operation.get("parameters", [])):
            assert "400" in operation["responses"], f"{method.upper()} {path}"


def test_error_envelope_lists_every_contract_code(document: dict[str, Any]) -> None:
    envelope = document["components"]["schemas"]["ErrorEnvelope"]
    codes = set(envelope["properties"]["error"]["properties"]["code"]["enum"])
    assert codes >= DOCUMENTED_ERROR_CODES
    assert envelope["properties"]["error"]["required"] == ["code", "message"]


def test_api_key_operations_are_described(document: dict[str, Any]) -> None:
    create = document["paths"]["/api/v1/api-keys"]["post"]
    assert create["x-required-scope"] == "admin"
    assert "201" in create["responses"]
    verify = document["paths"]["/api/v1/auth/verify"]["get"]
    assert "401" in verify["responses"]


def test_incident_paths_name_their_parameter_id(document: dict[str, Any]) -> None:
    """The spec writes /api/v1/incidents/{id}/...; the value is the incident number."""
    incident_paths = [path for path in document["paths"] if path.startswith("/api/v1/incidents/")]
    assert len(incident_paths) == 7
    for path in incident_paths:
        assert path.startswith("/api/v1/incidents/{id}"), path
        for method, operation in document["paths"][path].items():
            [parameter] = [p for p in operation["parameters"] if p["in"] == "path"]
            assert parameter["name"] == "id", f"{method.upper()} {path}"
            assert "INC-" in parameter["description"], f"{method.upper()} {path}"


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _resolves(document: dict[str, Any], ref: str) -> bool:
    if not ref.startswith("#/"):
        return False
    node: Any = document
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def test_every_ref_resolves(document: dict[str, Any]) -> None:
    """A dangling $ref makes client generators drop the operation (openapi-python-client did)."""
    refs = set(_refs(document))
    assert refs, "the walk finds the document's references at all"
    assert sorted(ref for ref in refs if not _resolves(document, ref)) == []


def test_no_two_models_share_a_name(document: dict[str, Any]) -> None:
    """pydantic qualifies a schema name with its module path when two models share a class name
    (chalicelib__outbound__models__DeliveryV1): every documented model has a name of its own."""
    from pydantic import BaseModel

    def nested(model: type[BaseModel], seen: dict[type[BaseModel], None]) -> None:
        if model in seen:
            return
        seen[model] = None
        for field in model.model_fields.values():
            for candidate in _annotation_types(field.annotation):
                if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                    nested(candidate, seen)

    models: dict[type[BaseModel], None] = {}
    for op in operations():
        for model in (op.body, op.query, op.response):
            if isinstance(model, type) and issubclass(model, BaseModel):
                nested(model, models)
    names = [model.__name__ for model in models]
    assert sorted({n for n in names if names.count(n) > 1}) == []
    assert [name for name in document["components"]["schemas"] if "__" in name] == []


def _annotation_types(annotation: Any) -> Iterator[Any]:
    import typing

    yield annotation
    for argument in typing.get_args(annotation):
        yield from _annotation_types(argument)
