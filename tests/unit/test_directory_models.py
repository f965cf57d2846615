"""Request models: limits, unknown fields, PATCH semantics (no AWS)."""

from __future__ import annotations

import pytest
from openapi_spec_validator import validate
from pydantic import ValidationError

from chalicelib.catalog.models import ServiceCreate, ServiceListQuery, ServicePatch
from chalicelib.directory.models import (
    TeamCreate,
    TeamPatch,
    UserCreate,
    UserPatch,
)


def _problems(model, document):
    with pytest.raises(ValidationError) as raised:
        model.model_validate(document)
    return {(".".join(str(p) for p in e["loc"]), e["type"]) for e in raised.value.errors()}


def test_unknown_fields_are_rejected():
    assert ("colour", "extra_forbidden") in _problems(ServiceCreate, {"name": "API", "colour": "red"})
    assert ("nickname", "extra_forbidden") in _problems(UserCreate, {"name": "A", "email": "a@b.io", "nickname": "x"})
    assert ("owner", "extra_forbidden") in _problems(TeamPatch, {"owner": "x"})


def test_name_limits_after_trimming():
    assert ServiceCreate.model_validate({"name": "  API  "}).name == "API"
    assert ("name", "string_too_short") in _problems(ServiceCreate, {"name": "   "})
    assert ("name", "string_too_long") in _problems(ServiceCreate, {"name": "x" * 101})
    assert ServiceCreate.model_validate({"name": "x" * 100}).name == "x" * 100


def test_description_limit():
    assert ("description", "string_too_long") in _problems(TeamCreate, {"name": "T", "description": "x" * 1001})
    assert TeamCreate.model_validate({"name": "T", "description": "x" * 1000}).description == "x" * 1000


def test_user_email_and_role():
    assert ("email", "string_pattern_mismatch") in _problems(UserCreate, {"name": "A", "email": "nope"})
    assert ("email", "missing") in _problems(UserCreate, {"name": "A"})
    assert ("role", "literal_error") in _problems(UserCreate, {"name": "A", "email": "a@b.io", "role": "god"})
    created = UserCreate.model_validate({"name": "A", "email": " a@b.io "})
    assert (created.email, created.role, created.slack_user_id) == ("a@b.io", "responder", None)


def test_patch_needs_one_field():
    assert ("", "empty_patch") in _problems(ServicePatch, {})
    assert ("", "empty_patch") in _problems(UserPatch, {})
    assert ("", "empty_patch") in _problems(TeamPatch, {})


def test_patch_null_clears_only_nullable_fields():
    assert ServicePatch.model_validate({"description": None, "team_id": None}).changes() == {
        "description": None,
        "team_id": None,
    }
    assert UserPatch.model_validate({"name": None}).changes() == {"name": None}
    assert ("is_active", "null_not_allowed") in _problems(ServicePatch, {"is_active": None})
    assert ("name", "null_not_allowed") in _problems(ServicePatch, {"name": None})
    assert ("email", "null_not_allowed") in _problems(UserPatch, {"email": None})
    assert ("member_ids", "null_not_allowed") in _problems(TeamPatch, {"member_ids": None})


def test_patch_changes_lists_only_given_fields():
    assert ServicePatch.model_validate({"is_active": False}).changes() == {"is_active": False}


def test_team_member_ids_shape():
    assert ("member_ids.0", "string_pattern_mismatch") in _problems(TeamCreate, {"name": "T", "member_ids": ["a/b"]})
    assert ("member_ids", "too_long") in _problems(TeamCreate, {"name": "T", "member_ids": ["a"] * 501})


def test_list_query_coerces_booleans_and_bounds_limit():
    query = ServiceListQuery.model_validate({"is_active": "false", "limit": "5"})
    assert (query.is_active, query.limit, query.offset) == (False, 5, 0)
    assert ("limit", "less_than_equal") in _problems(ServiceListQuery, {"limit": "101"})
    assert ("is_active", "bool_parsing") in _problems(ServiceListQuery, {"is_active": "maybe"})


def test_openapi_describes_every_directory_operation(monkeypatch):
    import chalicelib.api.routes.directory  # noqa: F401  (registers the operations)
    from chalicelib.api import lazy, openapi

    # Only this module's operations, so another domain's work in progress cannot fail this test.
    mine = [op for op in lazy.documented_operations() if op.tag == "directory"]
    monkeypatch.setattr(openapi, "documented_operations", lambda: mine)
    document = openapi.build_document()
    validate(document)
    operation_ids = {op["operationId"] for path in document["paths"].values() for op in path.values()}
    assert {
        "listServices",
        "createService",
        "getService",
        "updateService",
        "listUsers",
        "createUser",
        "getUser",
        "updateUser",
        "listTeams",
        "createTeam",
        "getTeam",
        "updateTeam",
        "addTeamMember",
        "removeTeamMember",
    } <= operation_ids
    schemas = document["components"]["schemas"]
    assert {"name", "service_key", "description", "is_active", "default_severity"} <= set(
        schemas["ServiceV1"]["required"]
    )
    assert {"id", "name", "email", "is_active"} <= set(schemas["UserV1"]["required"])
    assert {"id", "name", "description", "member_count", "is_active"} <= set(schemas["TeamV1"]["required"])
    patch = document["paths"]["/api/v1/services/{service_ref}"]["patch"]
    assert patch["x-required-scope"] == "services:write"
