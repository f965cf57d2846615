"""Request and response models for users, teams and services (they generate the OpenAPI document)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from chalicelib.directory import rules
from chalicelib.directory.teams import Team
from chalicelib.directory.users import User, zone_of
from chalicelib.model_base import ApiModel, MultiLine, PatchModel, RequestModel, SingleLine, StrictBool
from chalicelib.organization.models import TimeZone
from chalicelib.pagination import PageQuery

Role = Literal["owner", "admin", "responder", "viewer"]
Name = Annotated[str, Field(min_length=1, max_length=rules.NAME_MAX), SingleLine]
Description = Annotated[str, Field(max_length=rules.DESCRIPTION_MAX), MultiLine]
Email = Annotated[str, Field(max_length=rules.EMAIL_MAX, pattern=rules.EMAIL_PATTERN)]
SlackUserId = Annotated[str, Field(max_length=rules.SLACK_ID_MAX, pattern=r"^\S+$"), SingleLine]
SearchText = Annotated[str, SingleLine]
ItemId = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$")]
MemberIds = Annotated[list[ItemId], Field(max_length=500)]
# A service named either way: its SER-nnnnn id (any case) or its svc_ key. Every operation that
# takes a service accepts both (docs/INTAKE.md, "One way to name a service").
SERVICE_REF_PATTERN = r"^(svc_[a-z0-9]{10}|[Ss][Ee][Rr]-[0-9]{5,16})$"
SERVICE_REF_DESCRIPTION = "A service of the organization: its id (SER-nnnnn) or its key (svc_...)."
ServiceRef = Annotated[
    str, Field(min_length=1, max_length=20, pattern=SERVICE_REF_PATTERN, description=SERVICE_REF_DESCRIPTION)
]
# Checked by the service so a bad value answers INVALID_SEVERITY, like incidents do.
Severity = Annotated[
    str,
    Field(max_length=16),
    SingleLine,
    WithJsonSchema({"type": "string", "enum": list(rules.SEVERITIES)}),
]


# The shared request bases; the names are kept short here.
_Request = RequestModel
_Patch = PatchModel


class ActiveFilter(PageQuery):
    is_active: bool | None = Field(default=None, description="Only active (true) or inactive (false) items.")


# --- users -------------------------------------------------------------------------------------


class UserV1(ApiModel):
    id: str = Field(description="User id (uuid).")
    name: str | None
    email: str | None
    is_active: bool
    slack_user_id: str | None
    role: Role
    time_zone: str = Field(
        description="The IANA zone the person reads times in (notifications, the console): their own choice, "
        "else the organization's."
    )
    time_zone_is_own: bool = Field(
        description="True when the person chose the zone; false when it is the organization's."
    )

    @classmethod
    def of(cls, user: User, organization_zone: str) -> UserV1:
        return cls(
            id=user.user_id,
            name=user.name,
            email=user.email,
            is_active=user.is_active,
            slack_user_id=user.slack_user_id,
            role=user.role,
            time_zone=zone_of(user, organization_zone),
            time_zone_is_own=user.time_zone is not None,
        )


class UserCreate(_Request):
    name: Name
    email: Email = Field(description="Unique within the organization, case-insensitively; stored lower-cased.")
    slack_user_id: SlackUserId | None = None
    role: Role = "responder"
    time_zone: TimeZone | None = Field(default=None, description="Left out or null: the organization's zone.")


class UserPatch(_Patch):
    nullable = frozenset({"name", "slack_user_id", "time_zone"})

    name: Name | None = None
    email: Email | SkipJsonSchema[None] = None
    slack_user_id: SlackUserId | None = None
    is_active: StrictBool | SkipJsonSchema[None] = None
    role: Role | SkipJsonSchema[None] = None
    time_zone: TimeZone | None = Field(default=None, description="null: follow the organization's zone again.")


class ProfilePatch(_Patch):
    """What a person changes on their own profile, whatever their role."""

    nullable = frozenset({"time_zone"})

    time_zone: TimeZone | None = Field(default=None, description="null: follow the organization's zone again.")


class UserListQuery(ActiveFilter):
    q: SearchText | None = Field(
        default=None, max_length=rules.NAME_MAX, description="Case-insensitive substring of the name or email."
    )


# --- teams -------------------------------------------------------------------------------------


class TeamV1(ApiModel):
    id: str = Field(description="Team id (uuid).")
    name: str
    description: str | None
    member_count: int
    is_active: bool
    member_ids: list[str]

    @classmethod
    def of(cls, team: Team) -> TeamV1:
        return cls(
            id=team.team_id,
            name=team.name,
            description=team.description,
            member_count=team.member_count,
            is_active=team.is_active,
            member_ids=team.member_ids,
        )


class TeamCreate(_Request):
    name: Name = Field(description="Unique within the organization, case-insensitively.")
    description: Description | None = None
    member_ids: MemberIds = Field(default_factory=list, description="User ids.")


class TeamPatch(_Patch):
    nullable = frozenset({"description"})

    name: Name | SkipJsonSchema[None] = None
    description: Description | None = None
    is_active: StrictBool | SkipJsonSchema[None] = None
    member_ids: MemberIds | SkipJsonSchema[None] = Field(default=None, description="Replaces the member list.")


class TeamListQuery(ActiveFilter):
    q: SearchText | None = Field(
        default=None, max_length=rules.NAME_MAX, description="Case-insensitive name substring."
    )
