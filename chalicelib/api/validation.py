"""Turn request bodies and query strings into pydantic models, or a 400 with `details.fields`."""

from __future__ import annotations

import typing
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chalicelib.errors import ValidationFailed
from chalicelib.json_body import JsonBodyError, read_json

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
    """The body through the one JSON reader (chalicelib.json_body): size, depth, strict JSON."""
    if raw_body is None or raw_body in (b"", ""):
        raise ValidationFailed.for_field("body", "a JSON body is required")
    try:
        return read_json(raw_body, max_bytes=MAX_BODY_BYTES)
    except JsonBodyError as exc:
        problem = exc.problem if exc.too_large else f"malformed JSON: {exc.problem}"
        raise ValidationFailed.for_field("body", problem) from None


def check_no_body(raw_body: bytes | str | None) -> None:
    """An operation that takes no body accepts none, `{}` or `null`; anything else is a mistake
    the caller should hear about (a body it believes was read)."""
    if raw_body is None or not raw_body.strip():
        return
    try:
        document = read_json(raw_body, max_bytes=MAX_BODY_BYTES)
        empty = document is None or document == {}
    except JsonBodyError:
        empty = False
    if not empty:
        raise ValidationFailed.for_field("body", "this operation takes no body; send none or {}")


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


def single_values(query: Mapping[str, list[str]], repeatable: Iterable[str] = ()) -> dict[str, str]:
    """Each parameter's one value; a parameter given twice that is not `repeatable` is refused by
    name rather than silently resolved (which of `?limit=1&limit=2` did the caller mean?)."""
    allowed = frozenset(repeatable)
    repeated = sorted(name for name, values in query.items() if len(values) > 1 and name not in allowed)
    if repeated:
        raise ValidationFailed.for_fields(
            [{"field": name, "message": "given more than once"} for name in repeated],
            "The query parameters are invalid.",
        )
    return {name: values[0] if values else "" for name, values in query.items()}


def parse_query(model: type[ModelT], query: dict[str, list[str]]) -> ModelT:
    """Repeated parameters fill list fields (`?status=a&status=b` and `?status=a,b` alike); a
    scalar given twice is a 400 naming it."""
    lists = {name for name, field in model.model_fields.items() if _is_list_field(field.annotation)}
    document: dict[str, Any] = dict(single_values(query, repeatable=lists))
    for name in lists & set(query):
        document[name] = [part for value in query[name] for part in value.split(",") if part != ""]
    try:
        return model.model_validate(document)
    except ValidationError as exc:
        raise ValidationFailed.for_fields(fields_from(exc), "The query parameters are invalid.") from None
