"""Authentication and API key management."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.api.resource import Resource, each
from chalicelib.apikey import service as apikeys
from chalicelib.apikey.models import ApiKeyCreate, ApiKeyCreated, ApiKeyV1, AuthVerifyV1
from chalicelib.apikey.service import ApiKey
from chalicelib.directory.api_keys import issue_api_key
from chalicelib.errors import NotFound, Unauthorized

api = OperationGroup(__name__, tag="auth")


@api.operation(
    "GET",
    "/api/v1/auth/verify",
    operation_id="verifyCredential",
    summary="Check the bearer credential and list its scopes",
    scope=None,
    response=AuthVerifyV1,
)
def verify(call: Call) -> AuthVerifyV1:
    from chalicelib.incident.workflow_settings import incident_settings

    # The organization's name comes from the short settings cache: no read on a warm instance.
    try:
        name = incident_settings(organization_id=call.principal.organization_id).organization_name
    except NotFound:
        raise Unauthorized("The credential's organization does not exist.") from None
    return AuthVerifyV1(valid=True, scopes=sorted(call.principal.scopes), organization_name=name)


def _issue(call: Call, body: ApiKeyCreate) -> tuple[ApiKey, str]:
    return issue_api_key(
        principal=call.principal,
        name=body.name,
        kind=body.kind,
        scopes=body.scopes,
        user_id=body.user_id,
        now=call.now,
        settings=call.settings,
    )


def _created_v1(_call: Call, issued: tuple[ApiKey, str]) -> ApiKeyCreated:
    key, plaintext = issued
    return ApiKeyCreated(**ApiKeyV1.of(key).model_dump(), key=plaintext)


keys = Resource(api, "/api/v1/api-keys", "key_id", ApiKeyV1, each(ApiKeyV1.of), read="admin", write="admin")
keys.create(
    "createApiKey",
    "Create an API key; the full key is in this response only",
    ApiKeyCreate,
    _issue,
    response=ApiKeyCreated,
    present=_created_v1,
)
keys.listing(
    "listApiKeys",
    "List the organization's API keys (never the keys themselves)",
    lambda call, _: apikeys.list_api_keys(organization_id=call.principal.organization_id),
    errors=(),
)
keys.act("DELETE", "", "revokeApiKey", "Revoke an API key; it answers 401 immediately", apikeys.revoke_api_key)
