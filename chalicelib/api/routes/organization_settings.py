"""The organization's own settings: its time zone, its people's default (admin to change)."""

from __future__ import annotations

from chalicelib.api.operation import Call, OperationGroup
from chalicelib.organization import service
from chalicelib.organization.models import OrganizationSettingsPatch, OrganizationSettingsV1

api = OperationGroup(__name__, tag="settings")

PATH = "/api/v1/settings/organization"


@api.operation(
    "GET",
    PATH,
    operation_id="getOrganizationSettings",
    summary="The organization's name and time zone",
    scope="users:read",
    response=OrganizationSettingsV1,
)
def get_settings(call: Call) -> OrganizationSettingsV1:
    return OrganizationSettingsV1.of(service.get_organization(organization_id=call.principal.organization_id))


@api.operation(
    "PATCH",
    PATH,
    operation_id="updateOrganizationSettings",
    summary="Set the organization's time zone",
    description="The zone notifications and the console use for every person who has not chosen their own "
    "(PATCH /api/v1/users/{user_id}/profile). A name the IANA time zone database lacks is a 400 naming time_zone.",
    scope="admin",
    body=OrganizationSettingsPatch,
    response=OrganizationSettingsV1,
    errors=(400, 409),
)
def update_settings(call: Call) -> OrganizationSettingsV1:
    body: OrganizationSettingsPatch = call.body
    organization_id = call.principal.organization_id
    if body.time_zone is None:  # the only field, so a PATCH has it
        return OrganizationSettingsV1.of(service.get_organization(organization_id=organization_id))
    return OrganizationSettingsV1.of(service.set_time_zone(organization_id=organization_id, time_zone=body.time_zone))
