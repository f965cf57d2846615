"""Property fuzzing of the Authorization header (bearer parsing, session JWTs) and of the API's JSON
body reader: any input gives a principal / a parsed model, or a 4xx-class AppError; nothing else.

API keys (`tcs_...`) need storage and are left to the service tests; a credential with that prefix
that is malformed is refused before any lookup and is fuzzed here.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import BaseModel

from chalicelib.api import validation
from chalicelib.api.credentials import authenticate
from chalicelib.apikey.keys import looks_like_key
from chalicelib.auth import sessions
from chalicelib.auth.principal import Principal
from chalicelib.auth.scopes import ROLE_SCOPES
from chalicelib.errors import AppError
from chalicelib.settings import Settings, get_settings
from tests.fuzzing import (
    RAW_JSON_ODDITIES,
    any_body,
    fuzz_settings,
    json_values,
    moderate_depth,
    nasty_text,
    nested,
    only_4xx,
    scalars,
)

SECRET = "fuzz-jwt-secret-of-at-least-32-bytes!"
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def hs_settings() -> Settings:
    return Settings(jwt_secret=SECRET, jwt_jwks_json=None, jwt_jwks_url=None)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def hs256_raw(header: bytes, payload: bytes, secret: str = SECRET) -> str:
    """A token over raw header and payload bytes (odd JSON included), validly signed."""
    signing_input = f"{b64(header)}.{b64(payload)}"
    signature = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


def session(token: str) -> Principal | AppError:
    return only_4xx(lambda: sessions.authenticate_session(token=token, settings=hs_settings()))


# --- the Authorization header ----------------------------------------------------------------------


authorization_values = st.one_of(
    st.none(),
    nasty_text,
    st.text(max_size=60).map(lambda t: "Bearer " + t),
    st.sampled_from(["Bearer", "Bearer ", "bearer a.b.c", "Basic dXNlcjpwdw==", "Bearer tcs_", "Bearer tcs_x"]),
    st.lists(st.text("abcXYZ0129-_=+/", max_size=30), min_size=3, max_size=3).map(lambda p: "Bearer " + ".".join(p)),
)


@fuzz_settings()
@given(authorization=authorization_values)
def test_authorization_header_gives_a_principal_or_a_401(authorization: str | None) -> None:
    credential = (authorization or "").strip().partition(" ")[2].strip()
    if looks_like_key(credential):
        return  # a well-formed key is looked up in storage: the service tests cover it
    only_4xx(lambda: authenticate(authorization=authorization, now=NOW, settings=get_settings()))


# --- session JWTs --------------------------------------------------------------------------------------


def claim_values() -> st.SearchStrategy[Any]:
    return scalars | st.sampled_from(sorted(ROLE_SCOPES)) | st.integers(int(time.time()), int(time.time()) + 10**6)


hashable_claims = st.fixed_dictionaries(
    {},
    optional={
        "sub": claim_values(),
        "org": claim_values() | json_values,
        "custom:org": claim_values(),
        "role": claim_values(),
        "custom:role": claim_values(),
        "exp": claim_values(),
        "nbf": claim_values(),
        "iat": claim_values(),
        "email": claim_values() | json_values,
        "name": claim_values() | json_values,
        "aud": claim_values() | json_values,
    },
)
headers = st.fixed_dictionaries({"alg": st.sampled_from(["HS256", "none", "RS256", "HS512", ""]) | scalars}) | st.just(
    {"alg": "HS256", "typ": "JWT"}
)


@fuzz_settings()
@given(header=headers, claims=hashable_claims)
@example(header={"alg": "HS256"}, claims={"sub": "u", "org": "o", "role": "viewer", "exp": 1e400})
def test_signed_session_with_odd_claims_gives_a_principal_or_a_401(
    header: dict[str, Any], claims: dict[str, Any]
) -> None:
    token = hs256_raw(json.dumps(header).encode(), json.dumps(claims, allow_nan=True).encode())
    principal = session(token)
    if isinstance(principal, Principal):
        assert principal.role in ROLE_SCOPES and principal.organization_id


@fuzz_settings()
@given(
    payload=st.sampled_from(RAW_JSON_ODDITIES).map(
        lambda odd: '{"sub":"u","org":"o","role":"viewer","exp":' + odd + "}"
    )
    | st.binary(max_size=80).map(lambda b: b.decode("latin-1"))
    | moderate_depth,
    header=st.sampled_from([b'{"alg":"HS256"}', b'{"alg":"HS256","kid":[1]}', b"[]", b"{", b'{"alg":NaN}']),
)
def test_signed_session_with_odd_json_gives_a_principal_or_a_401(payload: str, header: bytes) -> None:
    session(hs256_raw(header, payload.encode("utf-8", "surrogatepass")))


@fuzz_settings()
@given(parts=st.lists(st.text(max_size=40) | st.binary(max_size=40).map(b64), min_size=3, max_size=3))
def test_unsigned_garbage_tokens_are_401(parts: list[str]) -> None:
    result = session(".".join(parts))
    assert isinstance(result, AppError)


@fuzz_settings()
@given(role=st.lists(scalars, max_size=3) | st.dictionaries(st.text(max_size=5), scalars, max_size=3))
def test_a_role_of_the_wrong_type_is_a_401(role: Any) -> None:
    token = hs256_raw(
        b'{"alg":"HS256"}', json.dumps({"sub": "u", "org": "o", "role": role, "exp": 4102444800}).encode()
    )
    assert isinstance(session(token), AppError)


# --- the JSON body reader --------------------------------------------------------------------------------


@fuzz_settings()
@given(body=any_body([{"title": "x", "severity": "SEV1"}]) | st.text(max_size=80) | st.none())
def test_parse_json_gives_a_document_or_a_400(body: bytes | str | None) -> None:
    only_4xx(lambda: validation.parse_json(body))


@fuzz_settings(examples=10)
@given(depth=st.integers(1_000, 20_000))
def test_deeply_nested_json_is_a_400(depth: int) -> None:
    only_4xx(lambda: validation.parse_json(nested(depth)))


def body_models() -> list[type[BaseModel]]:
    from chalicelib.api.lazy import documented_operations

    found = {operation.body for operation in documented_operations() if operation.body is not None}
    return sorted(found, key=lambda model: f"{model.__module__}.{model.__qualname__}")


def field_names(model: type[BaseModel]) -> list[str]:
    return sorted(
        {name for name, info in model.model_fields.items()} | {i.alias for i in model.model_fields.values() if i.alias}
    )


def model_documents(model: type[BaseModel]) -> st.SearchStrategy[bytes]:
    """Objects keyed by the model's own fields (and a stray one), with values of any JSON type."""
    keys = st.sampled_from(field_names(model) or ["x"]) | nasty_text
    values = json_values | st.sampled_from(["SEV1", "2026-11-22T12:00:00Z", "ana@acme.test", -1, 0, 10**20])
    return st.dictionaries(keys, values, max_size=8).map(lambda d: json.dumps(d).encode())


@pytest.mark.parametrize("model", body_models(), ids=lambda model: model.__name__)
def test_every_request_body_model_gives_a_model_or_a_400(model: type[BaseModel]) -> None:
    @fuzz_settings(examples=max(10, FUZZ_MODEL_EXAMPLES))
    @given(body=model_documents(model) | any_body([{}]))
    def prop(body: bytes) -> None:
        only_4xx(lambda: validation.parse_body(model, body))

    prop()


FUZZ_MODEL_EXAMPLES = 25
