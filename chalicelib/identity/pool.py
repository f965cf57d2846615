"""The user pool's shape, in one place: the local stack and the tests create it from this, and the
AWS template (chalicelib.deploy) describes the same pool and client."""

from __future__ import annotations

from typing import Any

from chalicelib import aws, clock
from chalicelib.identity import cognito, memberships
from chalicelib.settings import Settings

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
# Attributes: email is the username; custom:org names the organization the person last chose at
# sign-in (an accepted one: chalicelib/identity/memberships.py), written by Tocsin only.
ORG_ATTRIBUTE_SCHEMA: dict[str, Any] = {
    "Name": "org",
    "AttributeDataType": "String",
    "Mutable": True,
    "StringAttributeConstraints": {"MinLength": "1", "MaxLength": "64"},
}
READ_ATTRIBUTES = ["email", "email_verified", "name", "custom:org"]
WRITE_ATTRIBUTES = ["name"]  # a person may not move themself to another organization
# Cognito's invitation email ({username} and {####} are Cognito's placeholders).
INVITE_SUBJECT = "You are invited to Tocsin"
INVITE_MESSAGE = (
    "You have been added to Tocsin, where your team handles incidents. Sign in to the console with "
    "your email {username} and the temporary password {####}; you will then choose your own."
)
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


def create_user(
    *,
    email: str,
    organization_id: str,
    name: str | None = None,
    password: str,
    permanent: bool = True,
    settings: Settings,
) -> None:
    """Add a person to the pool with a password of our choosing (the local stack's demo users and
    the tests; the deployed code invites people instead: chalicelib.identity.cognito.invite). Creating
    one who exists sets their attributes and password again. `permanent=False` makes it a
    temporary password: the first sign-in asks for a new one. The person is set up in
    `organization_id` as if they had accepted its invitation (its `custom:org`, and an accepted
    membership, so the directory's invitation consumer has nothing to tell them)."""
    attributes = [
        {"Name": "email", "Value": email},
        {"Name": "email_verified", "Value": "true"},
        {"Name": cognito.ORG_ATTRIBUTE, "Value": organization_id},
    ]
    if name:
        attributes.append({"Name": "name", "Value": name})
    client = aws.client("cognito-idp")
    try:
        client.admin_create_user(
            UserPoolId=cognito.pool_id(settings=settings),
            Username=email,
            UserAttributes=attributes,
            TemporaryPassword=password,
            MessageAction="SUPPRESS",
        )
    except Exception as error:
        if cognito.error_code(error) != "UsernameExistsException":
            raise
        client.admin_update_user_attributes(
            UserPoolId=cognito.pool_id(settings=settings), Username=email, UserAttributes=attributes
        )
    if permanent:
        client.admin_set_user_password(
            UserPoolId=cognito.pool_id(settings=settings), Username=email, Password=password, Permanent=True
        )
    memberships.accept(email=email, organization_id=organization_id, now=clock.now())
