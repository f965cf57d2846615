"""Offset pagination shared by every list (the spec's total / has_more / next_offset)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar

from pydantic import ConfigDict, Field

from chalicelib.model_base import ApiModel

ItemT = TypeVar("ItemT")


class PageQuery(ApiModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=20, ge=1, le=100, description="Page size, 1 to 100.")
    offset: int = Field(default=0, ge=0, description="Items to skip.")


class Page(ApiModel, Generic[ItemT]):
    items: list[ItemT]
    total: int
    has_more: bool
    next_offset: int | None


def paginate(items: Sequence[ItemT], *, limit: int, offset: int) -> Page[ItemT]:
    window = list(items[offset : offset + limit])
    has_more = offset + len(window) < len(items)
    return Page[ItemT](
        items=window,
        total=len(items),
        has_more=has_more,
        next_offset=offset + len(window) if has_more else None,
    )
