"""The base of every pydantic model in the service.

`defer_build` postpones building a model's validator until its first use: a Lambda cold start
then pays only for the models its route touches, not for all of them at import.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    Strict,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

# What pydantic's whitespace stripping removes (Unicode White_Space, as `\s` in its Rust regexes),
# spelled out as a regex class body: `\s` means something else in the document's ECMA regexes
# (adds U+FEFF, lacks U+0085) and in Python's `re` (adds U+001C-U+001F).
WHITESPACE = "\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
# A trimmed string that must not be empty: at least one character trimming keeps.
NOT_BLANK = f"[^{WHITESPACE}]"
# JSON true or false only: pydantic's lax bool would also take 0, 1 and "yes", which the document refuses.
StrictBool = Annotated[bool, Strict()]


def _json_integer(value: Any) -> Any:
    # JSON Schema's integer is any number without a fraction, so 30.0 counts; true and "30" do not,
    # though pydantic's lax int would read them as 1 and 30 (and its strict int refuses 30.0).
    if isinstance(value, bool | str | bytes):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


# Put it AFTER the Field constraints (`Annotated[int, Field(ge=..), JSON_INTEGER]`): placed before them it
# wraps the int schema, pydantic then checks the bounds in a function the JSON Schema cannot see, and the
# served document loses its minimum and maximum.
JSON_INTEGER = BeforeValidator(_json_integer)


class ApiModel(BaseModel):
    model_config = ConfigDict(defer_build=True)


class RequestModel(ApiModel):
    """Request bodies: unknown fields are refused, strings trimmed."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    # How the domain function a body feeds takes its fields, where not as they are: the fields it
    # names otherwise ({field: argument}), and those holding lists of parts it takes converted
    # (each part's `to_domain()`).
    domain_names: ClassVar[dict[str, str]] = {}
    domain_lists: ClassVar[frozenset[str]] = frozenset()

    def arguments(self) -> dict[str, Any]:
        """The body as keyword arguments of the domain function it feeds, so the API and the console
        call it alike; the caller adds who and when (organization_id, now, created_by...)."""
        return self.domain_fields(dict(self))

    def domain_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        """`fields` (some of this body's) named and converted as the domain function takes them."""
        converted = {}
        for name, value in fields.items():
            if name in self.domain_lists:
                value = [part.to_domain() for part in getattr(self, name) or []]
            converted[self.domain_names.get(name, name)] = value
        return converted


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

    def domain_changes(self) -> dict[str, Any]:
        """The changes as the domain function names and takes them."""
        return self.domain_fields(self.changes())

    def arguments(self) -> dict[str, Any]:
        return self.domain_changes()


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

    def arguments(self) -> dict[str, Any]:
        return {"expected_version": self.version, **self.domain_changes()}


# --- the text rule of request strings --------------------------------------------------------------
#
# Every string a request stores or shows is text a person reads, so it may not carry characters
# that are invisible or rearrange what is shown around them (a name ending in U+202E displays the
# next field backwards; NUL truncates in some consumers):
# - C0 and C1 control characters and DEL, except tab; newlines only in multi-line fields
#   (descriptions, bodies, comments, messages), where CR LF, CR, U+2028 and U+2029 become LF;
# - the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) and the
#   deprecated format controls (U+206A-U+206F);
# - invisible characters with no use in written text: zero width space (U+200B), word joiner and
#   invisible operators (U+2060-U+2064), the byte order mark (U+FEFF), the interlinear annotation
#   controls (U+FFF9-U+FFFB) and noncharacters.
# Kept, because real text needs them: the zero width joiner (U+200D, emoji sequences) and
# non-joiner (U+200C, Persian and Indic scripts), the directional marks U+200E/U+200F and U+061C
# (punctuation in right-to-left text; they reorder nothing else), the soft hyphen, and tag
# characters (flag emoji). Inbound alerts are not refused but cleaned (chalicelib.integration.normalized).

_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    f"{chr(plane << 16 | 0xFFFE)}{chr(plane << 16 | 0xFFFF)}" for plane in range(17)
)
FORBIDDEN_CHARACTERS = (
    "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    + _NONCHARACTERS
)
LINE_BREAKS = "\n\r\u2028\u2029"
_FORBIDDEN = re.compile(f"[{FORBIDDEN_CHARACTERS}]")
_FORBIDDEN_IN_A_LINE = re.compile(f"[{FORBIDDEN_CHARACTERS}{LINE_BREAKS}]")
_LINE_BREAK = re.compile("\r\n|[\r\u2028\u2029]")
_ANY_LINE_BREAK = re.compile(f"[{LINE_BREAKS}]")


def forbidden_character(value: str, *, multiline: bool) -> str | None:
    """The first character the text rule refuses in `value`, as U+XXXX; None when there is none."""
    found = (_FORBIDDEN if multiline else _FORBIDDEN_IN_A_LINE).search(value)
    return f"U+{ord(found.group()):04X}" if found else None


_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def scrub_text(value: str, *, multiline: bool) -> str:
    """`value` with what the text rule refuses taken out, for text that must be accepted as sent
    (inbound alerts): control characters become a space, line breaks LF (a space on one line),
    and the invisible formatting characters are dropped."""
    value = _LINE_BREAK.sub("\n", value)
    if not multiline:
        value = value.replace("\n", " ")
    return _FORBIDDEN.sub("", _CONTROLS.sub(" ", value))


def _json_class(characters: str) -> str:
    """The characters as the body of a regex class.

    ECMA-262 (JSON Schema) and Python both read \\uXXXX; beyond the BMP ECMA-262 would need the
    u flag, so the document's pattern leaves out the supplementary noncharacters (still refused)."""
    return "".join("-" if ch == "-" else f"\\u{ord(ch):04x}" for ch in characters if ord(ch) <= 0xFFFF)


# Validation context of a response model built from stored data that shares a request type: what
# was stored before the rule existed is served as it is, not refused with a 500.
STORED: dict[str, Any] = {"stored": True}


@dataclass(frozen=True)
class TextRule:
    """Put in `Annotated[str, ...]`: refuses what the text rule refuses (a 400 naming the field and
    the character) and documents it as the field's `pattern`."""

    multiline: bool

    def check(self, value: str, info: ValidationInfo | None = None) -> str:
        if info is not None and isinstance(info.context, dict) and info.context.get("stored"):
            return value
        if self.multiline:
            value = _LINE_BREAK.sub("\n", value)
        elif _ANY_LINE_BREAK.search(value):
            raise PydanticCustomError("single_line", "must be one line: no line breaks")
        found = forbidden_character(value, multiline=True)
        if found is not None:
            raise PydanticCustomError(
                "forbidden_character",
                "must not contain {character}: control characters, bidirectional overrides and invisible "
                "formatting characters are refused",
                {"character": found},
            )
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.with_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        refused = FORBIDDEN_CHARACTERS if self.multiline else FORBIDDEN_CHARACTERS + LINE_BREAKS
        rule = _json_class(refused)
        existing = json_schema.get("pattern")
        if existing is None:
            json_schema["pattern"] = f"^[^{rule}]*$"
        elif existing == NOT_BLANK:  # both in one regex: generators handle one pattern far better
            json_schema["pattern"] = f"^[^{rule}]*[^{rule}{WHITESPACE}][^{rule}]*$"
        else:  # a field's own pattern (an email, a Slack id) and the text rule must both hold
            json_schema.setdefault("allOf", []).append({"pattern": f"^[^{rule}]*$"})
        return json_schema


SingleLine = TextRule(multiline=False)
MultiLine = TextRule(multiline=True)


# --- date-times in requests ------------------------------------------------------------------------
#
# RFC 3339 strings with an offset (`2026-11-22T12:00:00Z`, `...T14:00:00+02:00`), nothing else:
# pydantic's lax mode would also take numbers as epoch seconds (`-1` became 1969), numeric
# strings, and times without an offset. Scheduling fields (when something is to happen) take the
# years 2000 to 2100; other date-times (listing bounds, an imported record's time) any year from
# 1970. The year is read as written, before any conversion to UTC, as the document's pattern says.

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})")


def _rfc3339_string(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value  # a Python caller (a service, a test) building the model
    if isinstance(value, str) and _RFC3339.fullmatch(value):
        return value
    raise PydanticCustomError(
        "rfc3339_date_time", "must be an RFC 3339 date-time with an offset, e.g. 2026-11-22T12:00:00Z"
    )


@dataclass(frozen=True)
class _Years:
    first: int
    last: int

    def __call__(self, value: datetime) -> datetime:
        if not self.first <= value.year <= self.last:
            raise PydanticCustomError(
                "date_time_year", "must be in the years {first} to {last}", {"first": self.first, "last": self.last}
            )
        return value


def _date_time_schema(year_pattern: str, years: str) -> WithJsonSchema:
    return WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "pattern": f"^{year_pattern}-",
            "description": f"RFC 3339 with an offset; years {years}.",
        }
    )


DateTimeIn = Annotated[
    datetime,
    BeforeValidator(_rfc3339_string),
    AfterValidator(_Years(1970, 9999)),
    _date_time_schema("(19[7-9][0-9]|[2-9][0-9]{3})", "1970 to 9999"),
]
ScheduleTime = Annotated[
    datetime,
    BeforeValidator(_rfc3339_string),
    AfterValidator(_Years(2000, 2100)),
    _date_time_schema("(20[0-9]{2}|2100)", "2000 to 2100"),
]
