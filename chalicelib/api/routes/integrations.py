"""Integrations (admin): create (routing key and URL shown once), list, change, regenerate, revoke."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.integration import admin
from chalicelib.integration.models import IntegrationCreate, IntegrationIssuedV1, IntegrationPatch, IntegrationV1
from chalicelib.pagination import Page, PageQuery, paginate

api = OperationGroup(__name__, tag="integrations")
ITEM = "/api/v1/integrations/{integration_id}"


@api.operation(
    "POST",
    "/api/v1/integrations",
    operation_id="createIntegration",
    summary="Create an integration; its routing key, URL and signing secret are in this response only",
    scope="integrations:write",
    body=IntegrationCreate,
    response=IntegrationIssuedV1,
    status=201,
)
def create_integration(call: Call) -> IntegrationIssuedV1:
    body: IntegrationCreate = call.body
    issued = admin.create_integration(
        organization_id=call.principal.organization_id,
        now=call.now,
        created_by=call.principal.actor,
        **body.arguments(),
        settings=call.settings,
    )
    return IntegrationIssuedV1.issued(issued)


@api.operation(
    "GET",
    "/api/v1/integrations",
    operation_id="listIntegrations",
    summary="List integrations (never their routing keys or secrets)",
    scope="integrations:read",
    query=PageQuery,
    response=Page[IntegrationV1],
)
def list_integrations(call: Call) -> Page[IntegrationV1]:
    found = admin.list_integrations(organization_id=call.principal.organization_id)
    return paginate([IntegrationV1.of(i) for i in found], limit=call.query.limit, offset=call.query.offset)


@api.operation(
    "GET",
    ITEM,
    operation_id="getIntegration",
    summary="Get an integration",
    scope="integrations:read",
    response=IntegrationV1,
    errors=(404,),
)
def get_integration(call: Call) -> IntegrationV1:
    return IntegrationV1.of(
        admin.get_integration(
            organization_id=call.principal.organization_id, integration_id=call.path["integration_id"]
        )
    )


@api.operation(
    "PATCH",
    ITEM,
    operation_id="updateIntegration",
    summary="Rename an integration or change its default service, IP allowlist or expected topic",
    description="The URL, routing key, type and secrets stay as they are (regenerate issues a new URL). "
    "A revoked integration cannot change (409).",
    scope="integrations:write",
    body=IntegrationPatch,
    response=IntegrationV1,
    errors=(400, 404, 409),
)
def update_integration(call: Call) -> IntegrationV1:
    body: IntegrationPatch = call.body
    return IntegrationV1.of(
        admin.update_integration(
            organization_id=call.principal.organization_id,
            integration_id=call.path["integration_id"],
            **body.changes(),
        )
    )


@api.operation(
    "POST",
    ITEM + "/regenerate",
    operation_id="regenerateIntegrationUrl",
    summary="New routing key and URL; the old URL stops working at once (ROUTE_NOT_FOUND)",
    scope="integrations:write",
    response=IntegrationIssuedV1,
    errors=(404, 409),
)
def regenerate(call: Call) -> IntegrationIssuedV1:
    issued = admin.regenerate_url(
        organization_id=call.principal.organization_id,
        integration_id=call.path["integration_id"],
        now=call.now,
        settings=call.settings,
    )
    return IntegrationIssuedV1.issued(issued)


@api.operation(
    "DELETE",
    ITEM,
    operation_id="revokeIntegration",
    summary="Revoke: its URL answers 410 WEBHOOK_REVOKED from now on",
    description=(
        "Revoking keeps the record: GET and the list still show it, with `state: revoked`, so the "
        "history of where alerts came from stays readable. A revoked integration cannot be restored."
    ),
    scope="integrations:write",
    response=IntegrationV1,
    errors=(404,),
)
def revoke(call: Call) -> IntegrationV1:
    return IntegrationV1.of(
        admin.revoke_integration(
            organization_id=call.principal.organization_id, integration_id=call.path["integration_id"], now=call.now
        )
    )
