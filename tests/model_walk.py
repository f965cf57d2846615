"""Walking the annotations of request models (the text-rule and date-time tests share it)."""

from __future__ import annotations

import types
import typing
from typing import Any

Leaf = tuple[str, str, tuple[Any, ...], Any]  # model, field, location, document builder input


def arms(annotation: Any) -> list[Any]:
    """The alternatives an annotation allows, with Annotated unwrapped and unions flattened."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return arms(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [arm for arg in typing.get_args(annotation) for arm in arms(arg)]
    return [annotation]
