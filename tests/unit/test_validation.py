"""Body and query parsing into pydantic models; every failure is a 400 with details.fields."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, Field

from chalicelib.api.context import accept_or_generate_request_id
from chalicelib.api.validation import MAX_BODY_BYTES, parse_body, parse_json, parse_query
from chalicelib.errors import ValidationFailed


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=10)
    count: int = 1
    tags: list[str] = Field(default_factory=list)


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=20, ge=1, le=100)
    status: list[str] | None = None
    severity: list[str] = Field(default_factory=list)
    team_name: str | None = None


def fields_of(error: ValidationFailed) -> list[dict[str, str]]:
    assert error.code == "VALIDATION_ERROR"
    assert error.status == 400
    assert error.details is not None
    fields: list[dict[str, str]] = error.details["fields"]
    return fields


def test_parse_body_valid() -> None:
    parsed = parse_body(Body, b'{"name": "a", "count": 2, "tags": ["x"]}')
    assert parsed == Body(name="a", count=2, tags=["x"])


def test_parse_body_accepts_str() -> None:
    assert parse_body(Body, '{"name": "a"}').name == "a"


@pytest.mark.parametrize("raw", [None, b"", ""])
def test_missing_body(raw: bytes | str | None) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_body(Body, raw)
    assert fields_of(caught.value) == [{"field": "body", "message": "a JSON body is required"}]


@pytest.mark.parametrize("raw", [b"{", b"{'name': 'a'}", b"nope", b"\xff\xfe", b'{"name": "a",}'])
def test_malformed_json(raw: bytes) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_body(Body, raw)
    [field] = fields_of(caught.value)
    assert field["field"] == "body"
    assert field["message"].startswith("malformed JSON")


@pytest.mark.parametrize("raw", [b"[1, 2]", b'"text"', b"3", b"null", b"true"])
def test_body_must_be_an_object(raw: bytes) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_body(Body, raw)
    assert fields_of(caught.value) == [{"field": "body", "message": "the body must be a JSON object"}]


def test_body_too_large() -> None:
    raw = b'{"name": "' + b"a" * MAX_BODY_BYTES + b'"}'
    with pytest.raises(ValidationFailed) as caught:
        parse_json(raw)
    assert fields_of(caught.value)[0]["field"] == "body"


def test_unknown_field_is_rejected_by_name() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_body(Body, b'{"name": "a", "colour": "red"}')
    assert fields_of(caught.value) == [{"field": "colour", "message": "unknown field"}]


def test_every_problem_is_listed_with_its_path() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_body(Body, b'{"name": "", "count": "many", "tags": ["ok", 5]}')
    fields = {f["field"]: f["message"] for f in fields_of(caught.value)}
    assert set(fields) == {"name", "count", "tags.1"}
    assert "at least 1 character" in fields["name"]


def test_missing_required_field() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_body(Body, b"{}")
    assert fields_of(caught.value) == [{"field": "name", "message": "Field required"}]


def test_query_scalars_coerce() -> None:
    parsed = parse_query(Query, {"limit": ["7"], "team_name": ["Payments"]})
    assert parsed.limit == 7
    assert parsed.team_name == "Payments"


def test_a_scalar_given_twice_is_refused_by_name() -> None:
    # Issue #13: `?limit=5&limit=7` used to resolve silently to 7; which one did the caller mean?
    with pytest.raises(ValidationFailed) as caught:
        parse_query(Query, {"limit": ["5", "7"], "team_name": ["A", "B"], "status": ["new", "resolved"]})
    assert fields_of(caught.value) == [
        {"field": "limit", "message": "given more than once"},
        {"field": "team_name", "message": "given more than once"},
    ]


def test_query_lists_accept_repeats_and_commas() -> None:
    parsed = parse_query(Query, {"status": ["new", "investigating,resolved"], "severity": ["SEV1,,SEV2"]})
    assert parsed.status == ["new", "investigating", "resolved"]
    assert parsed.severity == ["SEV1", "SEV2"]


def test_query_defaults() -> None:
    parsed = parse_query(Query, {})
    assert parsed.limit == 20
    assert parsed.status is None


@pytest.mark.parametrize(("query", "field"), [({"limit": ["0"]}, "limit"), ({"limit": ["x"]}, "limit")])
def test_query_out_of_range(query: dict[str, list[str]], field: str) -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_query(Query, query)
    assert [f["field"] for f in fields_of(caught.value)] == [field]


def test_unknown_query_parameter_is_rejected() -> None:
    with pytest.raises(ValidationFailed) as caught:
        parse_query(Query, {"sort": ["asc"]})
    assert fields_of(caught.value) == [{"field": "sort", "message": "unknown field"}]


@pytest.mark.parametrize("offered", ["abc", "req-123", "x" * 128, "!~", "a:b/c"])
def test_valid_request_ids_are_echoed(offered: str) -> None:
    assert accept_or_generate_request_id(offered) == offered


@pytest.mark.parametrize("offered", [None, "", "x" * 129, "has space", "tab\there", "é", "line\nbreak"])
def test_invalid_request_ids_are_replaced(offered: str | None) -> None:
    generated = accept_or_generate_request_id(offered)
    assert generated != offered
    assert generated.startswith("req_")
    assert accept_or_generate_request_id(None) != generated
