"""Every request body and query model of every operation: what no input may do to them."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from chalicelib.api import lazy


def request_models() -> list[type[BaseModel]]:
    models: dict[str, type[BaseModel]] = {}
    for operation in lazy.documented_operations():
        for model in (operation.body, operation.query):
            if model is not None:
                models[f"{model.__module__}.{model.__qualname__}"] = model
    return list(models.values())


MODELS = request_models()


def fields_of(model: type[BaseModel]) -> list[str]:
    return list(model.model_fields)


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__qualname__)
def test_null_in_any_field_is_valid_or_a_validation_error(model: type[BaseModel]) -> None:
    # Issue #13: `"version": null` in a PATCH raised TypeError (a 500): a constraint on an optional
    # field that pydantic could not apply to None.
    for name in fields_of(model):
        document: dict[str, Any] = {name: None}
        try:
            model.model_validate(document)
        except ValidationError:
            pass


def test_every_json_schema_constraint_is_a_json_schema_keyword() -> None:
    # The same bug showed in the document: `"ge": 1` (pydantic's name) instead of `"minimum": 1`.
    for model in MODELS:
        for name, schema in model.model_json_schema()["properties"].items():
            assert not {"ge", "le", "gt", "lt"} & set(schema), (model.__qualname__, name, schema)
