"""The API accepts the console pool's Cognito ID tokens as session JWTs (Authorization: Bearer)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import moto
import pytest

from chalicelib.auth.scopes import ROLE_SCOPES
from tests.conftest import NOW, Org, reconfigure
from tests.console.conftest import PASSWORD, Person


@pytest.fixture
def pool_keys(cognito_pool: tuple[str, str]) -> None:
    # The emulator signs with a fixed key; in-process there is no JWKS URL to fetch it from.
    keys = Path(moto.__file__).parent / "cognitoidp" / "resources" / "jwks-public.json.gz"
    reconfigure(COGNITO_JWKS_JSON=gzip.decompress(keys.read_bytes()).decode())


def _tokens(email: str, password: str = PASSWORD) -> dict[str, str]:
    from chalicelib import aws
    from chalicelib.settings import get_settings

    answer = aws.client("cognito-idp").initiate_auth(
        ClientId=get_settings().cognito_client_id,
        AuthFlow="USER_PASSWORD_AUTH",
        AuthParameters={"USERNAME": email, "PASSWORD": password},
    )
    result: dict[str, str] = answer["AuthenticationResult"]
    return result


def _verify(client: Any, token: str) -> Any:
    return client.http.get("/api/v1/auth/verify", headers={"Authorization": f"Bearer {token}"})


def test_an_id_token_acts_as_the_directory_user_with_the_directory_role(
    client: Any, people: dict[str, Person], pool_keys: None
) -> None:
    answer = _verify(client, _tokens(people["responder"].email)["IdToken"])
    assert answer.status_code == 200, answer.body
    assert json.loads(answer.body)["data"]["scopes"] == sorted(ROLE_SCOPES["responder"])


def test_a_demotion_takes_effect_on_the_next_request(
    client: Any, org: Org, people: dict[str, Person], pool_keys: None
) -> None:
    from chalicelib.directory.users import update_user

    token = _tokens(people["admin"].email)["IdToken"]
    assert json.loads(_verify(client, token).body)["data"]["scopes"] == sorted(ROLE_SCOPES["admin"])
    update_user(organization_id=org.organization_id, user_id=people["admin"].user_id, role="viewer", now=NOW)
    assert json.loads(_verify(client, token).body)["data"]["scopes"] == sorted(ROLE_SCOPES["viewer"])


def test_the_access_token_and_a_tampered_token_are_refused(
    client: Any, people: dict[str, Person], pool_keys: None
) -> None:
    tokens = _tokens(people["owner"].email)
    access = _verify(client, tokens["AccessToken"])
    assert access.status_code == 401
    header, payload, signature = tokens["IdToken"].split(".")
    tampered = _verify(client, f"{header}.{payload}.{signature[:-4]}AAAA")
    assert tampered.status_code == 401


def test_a_token_of_another_app_client_is_refused(client: Any, people: dict[str, Person], pool_keys: None) -> None:
    from chalicelib import aws
    from chalicelib.settings import get_settings

    other = aws.client("cognito-idp").create_user_pool_client(
        UserPoolId=get_settings().cognito_user_pool_id,
        ClientName="someone-else",
        ExplicitAuthFlows=["ALLOW_USER_PASSWORD_AUTH"],
        ReadAttributes=["email", "email_verified", "custom:org"],
    )["UserPoolClient"]["ClientId"]
    token = aws.client("cognito-idp").initiate_auth(
        ClientId=other,
        AuthFlow="USER_PASSWORD_AUTH",
        AuthParameters={"USERNAME": people["owner"].email, "PASSWORD": PASSWORD},
    )["AuthenticationResult"]["IdToken"]
    assert _verify(client, token).status_code == 401
