"""The base of every pydantic model in the service.

`defer_build` postpones building a model's validator until its first use: a Lambda cold start
then pays only for the models its route touches, not for all of them at import.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Strict, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

# What pydantic's whitespace stripping removes (Unicode White_Space, as `\s` in its Rust regexes),
# spelled out as a regex class body: `\s` means something else in the document's ECMA regexes
# (adds U+FEFF, lacks U+0085) and in Python's `re` (adds U+001C-U+001F).
WHITESPACE = "\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
# A trimmed string that must not be empty: at least one character trimming keeps.
NOT_BLANK = f"[^{WHITESPACE}]"
# JSON true or false only: pydantic's lax bool would also take 0, 1 and "yes", which the document refuses.
StrictBool = Annotated[bool, Strict()]


class ApiModel(BaseModel):
    model_config = ConfigDict(defer_build=True)


class RequestModel(ApiModel):
    """Request bodies: unknown fields are refused, strings trimmed."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


def not_nullable(prop: dict[str, Any]) -> None:
    """Schema of an optional field that may be left out but not null: no null branch, no null default."""
    if prop.get("default", "") is None:
        del prop["default"]
    branches = [branch for branch in prop.pop("anyOf", []) if branch.get("type") != "null"]
    if len(branches) == 1:
        prop.update(branches[0])
    elif branches:
        prop["anyOf"] = branches


def version_schema(prop: dict[str, Any]) -> None:
    """`ge=1` on an `int | None` version: pydantic writes `ge`, a keyword JSON Schema does not know."""
    prop.pop("ge", None)
    prop["minimum"] = 1


def require_one_of(schema: dict[str, Any], names: list[str]) -> None:
    """The body must carry at least one of these fields (minProperties would count `version` too)."""
    schema["anyOf"] = [{"required": [name]} for name in names]


def patch_schema(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """A field that may not be null documents no null; a body with nothing to change is invalid."""
    nullable: frozenset[str] = getattr(model, "nullable", frozenset())
    not_changes: frozenset[str] = getattr(model, "not_changes", frozenset())
    for name, prop in schema.get("properties", {}).items():
        if name not in nullable:
            not_nullable(prop)
    require_one_of(schema, [name for name in schema.get("properties", {}) if name not in not_changes])


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
