"""Request and response models for the organization's own settings (they generate the OpenAPI document)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from chalicelib.model_base import ApiModel, PatchModel, SingleLine
from chalicelib.organization.service import Organization
from chalicelib.zones import ZONE_KEY_PATTERN, ZONE_MAX

# Checked against the zone database by the service, so an unknown name is a 400 naming the field.
TimeZone = Annotated[
    str,
    Field(
        min_length=1,
        max_length=ZONE_MAX,
        description="IANA time zone, e.g. Europe/Paris; a name the time zone database lacks is a 400.",
        json_schema_extra={"pattern": ZONE_KEY_PATTERN.pattern},
    ),
    SingleLine,
]


class OrganizationSettingsV1(ApiModel):
    id: str = Field(description="Organization id.")
    name: str
    time_zone: str = Field(
        description="IANA time zone: the zone of every person who has not chosen their own (UTC until set)."
    )

    @classmethod
    def of(cls, organization: Organization) -> OrganizationSettingsV1:
        return cls(id=organization.organization_id, name=organization.name, time_zone=organization.time_zone)


class OrganizationSettingsPatch(PatchModel):
    time_zone: TimeZone | None = None
