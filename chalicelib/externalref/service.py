"""Record, list and forget import-ledger entries. An entry says "the organization's <kind>
<tocsin_id> is <vendor>'s <external_id>"; its id is derived from (kind, vendor, external id), so
recording the same triple again replaces the entry (idempotent, last write wins)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from chalicelib.errors import NotFound
from chalicelib.externalref.tables import ExternalRefRecord


@dataclass(frozen=True)
class ExternalRef:
    ref_id: str
    kind: str
    vendor: str
    external_id: str
    tocsin_id: str
    recorded_at: datetime


def ref_id_of(kind: str, vendor: str, external_id: str) -> str:
    digest = hashlib.sha256(f"{kind}\n{vendor}\n{external_id}".encode()).hexdigest()
    return f"xref_{digest[:32]}"


def _domain(record: ExternalRefRecord) -> ExternalRef:
    return ExternalRef(
        ref_id=record.ref_id,
        kind=record.kind,
        vendor=record.vendor,
        external_id=record.external_id,
        tocsin_id=record.tocsin_id,
        recorded_at=record.recorded_at,
    )


def record_ref(
    *, organization_id: str, kind: str, vendor: str, external_id: str, tocsin_id: str, now: datetime
) -> ExternalRef:
    record = ExternalRefRecord(
        organization_id,
        ref_id_of(kind, vendor, external_id),
        kind=kind,
        vendor=vendor,
        external_id=external_id,
        tocsin_id=tocsin_id,
        recorded_at=now,
    )
    record.save()  # an unconditional put: recording the same triple again replaces it
    return _domain(record)


def list_refs(
    *, organization_id: str, kind: str | None = None, vendor: str | None = None, tocsin_id: str | None = None
) -> list[ExternalRef]:
    """One Query on the organization's partition; sorted by kind, vendor and external id."""
    found = [_domain(record) for record in ExternalRefRecord.query(organization_id)]
    kept = [
        ref
        for ref in found
        if (kind is None or ref.kind == kind)
        and (vendor is None or ref.vendor == vendor)
        and (tocsin_id is None or ref.tocsin_id == tocsin_id)
    ]
    return sorted(kept, key=lambda ref: (ref.kind, ref.vendor, ref.external_id))


def delete_ref(*, organization_id: str, ref_id: str) -> None:
    try:
        record = ExternalRefRecord.get(organization_id, ref_id)
    except ExternalRefRecord.DoesNotExist:
        raise NotFound("No such import-ledger entry.") from None
    record.delete()
