"""Walking the request models and their annotations (the text-rule and date-time tests share it)."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from chalicelib.api import lazy
from chalicelib.errors import AppError

Leaf = tuple[str, str, tuple[Any, ...], Any]  # model, field, location, document builder input


def arms(annotation: Any) -> list[Any]:
    """The alternatives an annotation allows, with Annotated unwrapped and unions flattened."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return arms(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [arm for arg in typing.get_args(annotation) for arm in arms(arg)]
    return [annotation]


# Bodies the document describes but no model validates: the webhook routes read them with the
# integration's parser, which cleans text out of alerts instead of refusing it (README); the
# change events route likewise (chalicelib.change.rules).
DOCUMENTATION_ONLY = frozenset(
    {
        "PagerDutyEventV1",
        "PagerDutyChangeEventV1",
        "WebhookPayloadV1",
        # The Opsgenie drop-in's bodies: read by chalicelib.integration.parsers.opsgenie, as Opsgenie reads them.
        "OpsgenieCreateAlertV1",
        "OpsgenieActionV1",
        "OpsgenieNoteV1",
    }
)


def request_models(*, exclude: frozenset[str] = frozenset()) -> list[type[BaseModel]]:
    """Every body and query model of an operation, except those named in `exclude`."""
    found: dict[str, type[BaseModel]] = {}
    for operation in lazy.documented_operations():
        for model in (operation.body, operation.query):
            if model is not None and model.__name__ not in exclude:
                found[f"{model.__module__}.{model.__qualname__}"] = model
    return list(found.values())


def refused_at(model: type[BaseModel], document: dict[str, Any], location: tuple[Any, ...]) -> bool:
    """Whether validating `document` fails at `location` (union tags may sit between its parts)."""
    try:
        model.model_validate(document)
    except AppError:
        return True  # a validator refusing with its own 400 (INVALID_STATUS, INVALID_SEVERITY)
    except ValidationError as error:
        for problem in error.errors():
            if problem["type"] == "missing":
                continue
            found = iter(problem["loc"])
            if all(any(part == step for step in found) for part in location):
                return True
    return False
