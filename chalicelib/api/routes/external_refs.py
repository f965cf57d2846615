"""The import ledger (admin): where the organization's objects came from. The importers and
`tocsin config apply` record the vendor id of each object they make, so a re-run updates the same
object instead of making another, even after a rename (docs/CONFIG.md)."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.externalref import service
from chalicelib.externalref.models import ExternalRefCreate, ExternalRefListQuery, ExternalRefV1
from chalicelib.oncall.models import DeletedV1
from chalicelib.pagination import Page, paginate

api = OperationGroup(__name__, tag="import-ledger")

BASE = "/api/v1/external-refs"
SCOPE = "admin"
_ABOUT = (
    "An entry says that the organization's object of `kind` with id `tocsin_id` is the vendor's object "
    "`external_id`. The ledger only records: Tocsin does not check that the object exists, and deleting "
    "the object leaves its entry (whoever deleted it removes the entry, as `tocsin config apply --prune` does)."
)


@api.operation(
    "POST",
    BASE,
    operation_id="recordExternalRef",
    summary="Record where an object came from (replaces the entry of the same kind, vendor and external_id)",
    scope=SCOPE,
    body=ExternalRefCreate,
    response=ExternalRefV1,
    errors=(400,),
    description="Idempotent: recording the same kind, vendor and external_id again replaces its tocsin_id "
    "and answers the same entry id. " + _ABOUT,
)
def record_ref(call: Call) -> ExternalRefV1:
    body: ExternalRefCreate = call.body
    ref = service.record_ref(
        organization_id=call.principal.organization_id,
        kind=body.kind,
        vendor=body.vendor,
        external_id=body.external_id,
        tocsin_id=body.tocsin_id,
        now=call.now,
    )
    return ExternalRefV1.of(ref)


@api.operation(
    "GET",
    BASE,
    operation_id="listExternalRefs",
    summary="List the import ledger, by kind, vendor and external_id",
    scope=SCOPE,
    query=ExternalRefListQuery,
    response=Page[ExternalRefV1],
    errors=(400,),
    description=_ABOUT,
)
def list_refs(call: Call) -> Page[ExternalRefV1]:
    query: ExternalRefListQuery = call.query
    found = service.list_refs(
        organization_id=call.principal.organization_id, kind=query.kind, vendor=query.vendor, tocsin_id=query.tocsin_id
    )
    return paginate([ExternalRefV1.of(ref) for ref in found], limit=query.limit, offset=query.offset)


@api.operation(
    "DELETE",
    BASE + "/{ref_id}",
    operation_id="deleteExternalRef",
    summary="Forget an import-ledger entry",
    scope=SCOPE,
    response=DeletedV1,
    errors=(404,),
)
def delete_ref(call: Call) -> DeletedV1:
    ref_id = call.path["ref_id"]
    service.delete_ref(organization_id=call.principal.organization_id, ref_id=ref_id)
    return DeletedV1(id=ref_id, deleted=True)
