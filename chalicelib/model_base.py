"""The base of every pydantic model in the service.

`defer_build` postpones building a model's validator until its first use: a Lambda cold start
then pays only for the models its route touches, not for all of them at import.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, WithJsonSchema, field_validator, model_validator
from pydantic_core import PydanticCustomError


class ApiModel(BaseModel):
    model_config = ConfigDict(defer_build=True)


class RequestModel(ApiModel):
    """Request bodies: unknown fields are refused, strings trimmed."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def patch_schema(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """A field that may not be null documents no (null) default; an empty body is invalid."""
    nullable: frozenset[str] = getattr(model, "nullable", frozenset())
    for name, prop in schema.get("properties", {}).items():
        if name not in nullable and "default" in prop and prop["default"] is None:
            del prop["default"]
    schema["minProperties"] = 1


class PatchModel(RequestModel):
    """PATCH bodies: at least one field; a field left out is unchanged, null clears where allowed.

    `nullable` names the fields null may clear; `not_changes` names fields that travel with a
    change without being one (e.g. an optimistic-lock `version`)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, json_schema_extra=patch_schema)

    nullable: ClassVar[frozenset[str]] = frozenset()
    not_changes: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="after")
    def _not_empty(self) -> Any:
        if not self.model_fields_set - self.not_changes:
            raise PydanticCustomError("empty_patch", "at least one field to change is required")
        return self

    @field_validator("*")
    @classmethod
    def _null_only_where_allowed(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.field_name not in cls.nullable:
            raise PydanticCustomError("null_not_allowed", "must not be null")
        return value

    def changes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.model_fields_set - self.not_changes}


# The constraint sits on the int itself: on `int | SkipJsonSchema[None]` as a whole, pydantic
# applies `ge` to None too (a TypeError, not a validation error) and documents it as `"ge"`.
# Optional in the model (left out is None) but not in the document: PatchModel refuses null.
ExpectedVersion = Annotated[Annotated[int, Field(ge=1)] | None, WithJsonSchema({"type": "integer", "minimum": 1})]

VERSION_DESCRIPTION = (
    "The version you read. When given, the change applies only if the item is still at that version "
    "(409 otherwise); when left out, it applies to the latest version."
)


class VersionedPatchModel(PatchModel):
    """A PATCH that may carry the `version` it read (optimistic locking); `version` alone is no change."""

    not_changes: ClassVar[frozenset[str]] = frozenset({"version"})

    version: ExpectedVersion = Field(default=None, description=VERSION_DESCRIPTION)
