"""Turn request bodies and query strings into pydantic models, or a 400 with `details.fields`."""

from __future__ import annotations

import json
import typing
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chalicelib.errors import ValidationFailed

ModelT = TypeVar("ModelT", bound=BaseModel)

MAX_BODY_BYTES = 1024 * 1024


def fields_from(error: ValidationError, prefix: str = "") -> list[dict[str, str]]:
    fields = []
    for problem in error.errors(include_url=False):
        location = ".".join(str(part) for part in problem["loc"]) or "body"
        message = problem["msg"]
        if problem["type"] == "extra_forbidden":
            message = "unknown field"
        fields.append({"field": f"{prefix}{location}", "message": message})
    return fields


def parse_json(raw_body: bytes | str | None) -> Any:
    if raw_body is None or raw_body in (b"", ""):
        raise ValidationFailed.for_field("body", "a JSON body is required")
    if len(raw_body) > MAX_BODY_BYTES:
        raise ValidationFailed.for_field("body", "the body is larger than 1 MiB")
    try:
        return json.loads(raw_body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValidationFailed.for_field("body", f"malformed JSON: {exc}") from None


def parse_body(model: type[ModelT], raw_body: bytes | str | None) -> ModelT:
    document = parse_json(raw_body)
    if not isinstance(document, dict):
        raise ValidationFailed.for_field("body", "the body must be a JSON object")
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise ValidationFailed.for_fields(fields_from(exc), "The request body is invalid.") from None


def _is_list_field(annotation: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (list, tuple):
        return True
    return any(_is_list_field(arg) for arg in typing.get_args(annotation))


def parse_query(model: type[ModelT], query: dict[str, list[str]]) -> ModelT:
    """Repeated parameters fill list fields (`?status=a&status=b` and `?status=a,b` alike)."""
    document: dict[str, Any] = {}
    for name, values in query.items():
        field = model.model_fields.get(name)
        if field is not None and _is_list_field(field.annotation):
            document[name] = [part for value in values for part in value.split(",") if part != ""]
        else:
            document[name] = values[-1] if values else ""
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise ValidationFailed.for_fields(fields_from(exc), "The query parameters are invalid.") from None
