"""Admin models: the organization's paging settings (its fallback contacts, docs/PAGING.md)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from chalicelib.directory.users import User
from chalicelib.model_base import ApiModel, RequestModel, SingleLine
from chalicelib.paging.fallback import MAX_FALLBACK_CONTACTS, PagingSettings

ContactRef = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=254), SingleLine]


class PagingSettingsUpdate(RequestModel):
    """Replaces the fallback contacts ([] removes them)."""

    fallback_contacts: list[ContactRef] = Field(
        max_length=MAX_FALLBACK_CONTACTS,
        description="User ids or emails of active people of the organization, in the order to list them. They are "
        "paged through their own notification rules when an incident's escalation reaches nobody (no policy, or a "
        "level whose schedules have nobody on call and whose users are deactivated). An unknown or deactivated "
        "person is a 400 naming fallback_contacts.<index>.",
    )


class FallbackContactV1(ApiModel):
    user_id: str
    name: str | None
    email: str | None
    is_active: bool = Field(description="A contact deactivated since it was set stays listed but is not paged.")

    @classmethod
    def of(cls, user: User) -> FallbackContactV1:
        return cls(user_id=user.user_id, name=user.name, email=user.email, is_active=user.is_active)


class PagingSettingsV1(ApiModel):
    fallback_contacts: list[FallbackContactV1] = Field(
        description="Who is paged when an incident's escalation reaches nobody; empty: nobody (the incident only "
        "says so)."
    )

    @classmethod
    def of(cls, settings: PagingSettings) -> PagingSettingsV1:
        return cls(fallback_contacts=[FallbackContactV1.of(user) for user in settings.fallback_contacts])
