from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, WithJsonSchema

from chalicelib.apikey.service import ApiKey
from chalicelib.auth.scopes import ALL_SCOPES
from chalicelib.model_base import ApiModel, SingleLine

# Checked by the service (400 on field scopes, naming the unknown ones); the document lists them.
# The document lists the scopes; the service answers 400 naming an unknown one.
Scope = Annotated[str, SingleLine, WithJsonSchema({"type": "string", "enum": list(ALL_SCOPES)})]


class ApiKeyCreate(ApiModel):
    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, SingleLine] = Field(min_length=1, max_length=100)
    kind: Literal["personal", "service_account"] = "service_account"
    scopes: list[Scope] = Field(min_length=1, max_length=32)
    user_id: Annotated[str, SingleLine] | None = Field(
        default=None, description="Owner of a personal key; defaults to the calling user."
    )


class ApiKeyV1(ApiModel):
    id: str
    name: str
    kind: str
    scopes: list[str]
    user_id: str | None
    prefix: str = Field(description="The key's first characters, to recognise it; never usable.")
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None

    @classmethod
    def of(cls, key: ApiKey) -> ApiKeyV1:
        return cls(
            id=key.key_id,
            name=key.name,
            kind=key.kind,
            scopes=key.scopes,
            user_id=key.user_id,
            prefix=key.display_prefix,
            created_at=key.created_at,
            revoked_at=key.revoked_at,
            last_used_at=key.last_used_at,
        )


class ApiKeyCreated(ApiKeyV1):
    key: str = Field(description="The full API key. Shown exactly once; store it now.")


class AuthVerifyV1(ApiModel):
    valid: bool
    scopes: list[str]
    organization_name: str
