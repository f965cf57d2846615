"""Authentication and API key management."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.apikey import service as apikeys
from chalicelib.apikey.models import ApiKeyCreate, ApiKeyCreated, ApiKeyV1, AuthVerifyV1
from chalicelib.directory.api_keys import issue_api_key
from chalicelib.errors import NotFound, Unauthorized
from chalicelib.pagination import Page, PageQuery, paginate

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


@api.operation(
    "POST",
    "/api/v1/api-keys",
    operation_id="createApiKey",
    summary="Create an API key; the full key is in this response only",
    scope="admin",
    body=ApiKeyCreate,
    response=ApiKeyCreated,
    status=201,
    errors=(400,),
)
def create_api_key(call: Call) -> ApiKeyCreated:
    request: ApiKeyCreate = call.body
    key, plaintext = issue_api_key(
        principal=call.principal,
        name=request.name,
        kind=request.kind,
        scopes=request.scopes,
        user_id=request.user_id,
        now=call.now,
    )
    return ApiKeyCreated(**ApiKeyV1.of(key).model_dump(), key=plaintext)


@api.operation(
    "GET",
    "/api/v1/api-keys",
    operation_id="listApiKeys",
    summary="List the organization's API keys (never the keys themselves)",
    scope="admin",
    query=PageQuery,
    response=Page[ApiKeyV1],
)
def list_api_keys(call: Call) -> Page[ApiKeyV1]:
    found = apikeys.list_api_keys(organization_id=call.principal.organization_id)
    return paginate([ApiKeyV1.of(k) for k in found], limit=call.query.limit, offset=call.query.offset)


@api.operation(
    "DELETE",
    "/api/v1/api-keys/{key_id}",
    operation_id="revokeApiKey",
    summary="Revoke an API key; it answers 401 immediately",
    scope="admin",
    response=ApiKeyV1,
    errors=(404,),
)
def revoke_api_key(call: Call) -> ApiKeyV1:
    key = apikeys.revoke_api_key(
        organization_id=call.principal.organization_id, key_id=call.path["key_id"], now=call.now
    )
    return ApiKeyV1.of(key)
