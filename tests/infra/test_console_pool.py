"""The AWS template's Cognito pool is the one the console and the local stack expect."""

from __future__ import annotations

import json
from pathlib import Path

from chalicelib.deploy.template import USER_POOL, USER_POOL_CLIENT, build_template, function_environment
from chalicelib.identity import pool

ROOT = Path(__file__).resolve().parents[2]


def test_the_pool_signs_in_by_email_with_the_org_attribute_and_no_self_sign_up() -> None:
    resources = build_template()["Resources"]
    properties = resources[USER_POOL]["Properties"]
    assert properties["UsernameAttributes"] == ["email"]
    assert properties["Schema"] == [pool.ORG_ATTRIBUTE_SCHEMA]
    assert properties["AdminCreateUserConfig"] == {"AllowAdminCreateUserOnly": True}
    assert resources[USER_POOL]["DeletionPolicy"] == "Retain"
    client = resources[USER_POOL_CLIENT]["Properties"]
    assert "ALLOW_USER_PASSWORD_AUTH" in client["ExplicitAuthFlows"]
    assert client["GenerateSecret"] is False  # the console's InitiateAuth sends no SECRET_HASH
    assert "custom:org" in client["ReadAttributes"] and "custom:org" not in client["WriteAttributes"]


def test_every_function_is_told_the_pool_and_the_checked_in_template_is_current() -> None:
    environment = function_environment()
    assert environment["COGNITO_USER_POOL_ID"] == {"Ref": USER_POOL}
    assert environment["COGNITO_CLIENT_ID"] == {"Ref": USER_POOL_CLIENT}
    checked_in = json.loads((ROOT / "template" / "resources.json").read_text())
    assert checked_in["Resources"][USER_POOL] == build_template()["Resources"][USER_POOL]
