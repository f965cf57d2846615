"""The user pool's shape, in one place: the local stack and the tests create it from this, and the
AWS template (chalicelib.deploy) describes the same pool and client."""

from __future__ import annotations

from typing import Any

from chalicelib import aws

POOL_NAME = "tocsin-console"
CLIENT_NAME = "tocsin-console"
PASSWORD_POLICY: dict[str, Any] = {
    "MinimumLength": 12,
    "RequireUppercase": False,
    "RequireLowercase": False,
    "RequireNumbers": False,
    "RequireSymbols": False,
    "TemporaryPasswordValidityDays": 7,
}
# Attributes: email is the username; custom:org names the organization (set by admins only).
ORG_ATTRIBUTE_SCHEMA: dict[str, Any] = {
    "Name": "org",
    "AttributeDataType": "String",
    "Mutable": True,
    "StringAttributeConstraints": {"MinLength": "1", "MaxLength": "64"},
}
READ_ATTRIBUTES = ["email", "email_verified", "name", "custom:org"]
WRITE_ATTRIBUTES = ["name"]  # a person may not move themself to another organization
AUTH_FLOWS = ["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]


def create_pool(name: str = POOL_NAME) -> tuple[str, str]:
    """Create the pool and its app client on the emulator; (pool id, client id). Reuses a pool of
    that name when one exists (a restarted local stack keeps its users)."""
    client = aws.client("cognito-idp")
    pool_id = next(
        (pool["Id"] for pool in client.list_user_pools(MaxResults=60)["UserPools"] if pool["Name"] == name), None
    )
    if pool_id is None:
        pool_id = client.create_user_pool(
            PoolName=name,
            UsernameAttributes=["email"],
            AutoVerifiedAttributes=["email"],
            Policies={"PasswordPolicy": PASSWORD_POLICY},
            Schema=[ORG_ATTRIBUTE_SCHEMA],
            AccountRecoverySetting={"RecoveryMechanisms": [{"Priority": 1, "Name": "verified_email"}]},
        )["UserPool"]["Id"]
    clients = client.list_user_pool_clients(UserPoolId=pool_id, MaxResults=60)["UserPoolClients"]
    client_id = next((c["ClientId"] for c in clients if c["ClientName"] == CLIENT_NAME), None)
    if client_id is None:
        client_id = client.create_user_pool_client(
            UserPoolId=pool_id,
            ClientName=CLIENT_NAME,
            GenerateSecret=False,
            ExplicitAuthFlows=AUTH_FLOWS,
            ReadAttributes=READ_ATTRIBUTES,
            WriteAttributes=WRITE_ATTRIBUTES,
            PreventUserExistenceErrors="ENABLED",
        )["UserPoolClient"]["ClientId"]
    return str(pool_id), str(client_id)
