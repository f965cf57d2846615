"""Request and response models of the import ledger (they generate the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from chalicelib.externalref.service import ExternalRef
from chalicelib.model_base import ApiModel, RequestModel, SingleLine
from chalicelib.pagination import PageQuery

Kind = Annotated[
    str,
    Field(
        pattern=r"^[a-z][a-z_]{0,31}$",
        description="What the object is, as the configuration document names it: user, team, schedule, "
        "escalation_policy, service, integration, event_rule, maintenance_window, heartbeat, status_page.",
    ),
]
Vendor = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,31}$", description="e.g. pagerduty, opsgenie.")]
ExternalId = Annotated[
    str, Field(min_length=1, max_length=256, description="The object's id at the vendor."), SingleLine
]
TocsinId = Annotated[
    str,
    Field(min_length=1, max_length=128, description="The object's id in Tocsin (a service: its SER-nnnnn id)."),
    SingleLine,
]


class ExternalRefCreate(RequestModel):
    kind: Kind
    vendor: Vendor
    external_id: ExternalId
    tocsin_id: TocsinId


class ExternalRefListQuery(PageQuery):
    kind: Kind | None = Field(default=None, description="Only this kind.")
    vendor: Vendor | None = Field(default=None, description="Only this vendor.")
    tocsin_id: TocsinId | None = Field(default=None, description="Only the entries of this object.")


class ExternalRefV1(ApiModel):
    id: str = Field(description="xref_<hex>, the same for the same kind, vendor and external_id.")
    kind: str
    vendor: str
    external_id: str
    tocsin_id: str
    recorded_at: datetime

    @classmethod
    def of(cls, ref: ExternalRef) -> ExternalRefV1:
        return cls(
            id=ref.ref_id,
            kind=ref.kind,
            vendor=ref.vendor,
            external_id=ref.external_id,
            tocsin_id=ref.tocsin_id,
            recorded_at=ref.recorded_at,
        )
