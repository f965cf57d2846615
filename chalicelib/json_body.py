"""The one reader of JSON request bodies: the API's, the inbound webhooks' and the local sinks'.

It reads RFC 8259 JSON only (UTF-8, an optional BOM; no NaN or Infinity) and bounds what it
accepts, so no body can make a route fail with anything but the family's 400:

- size: the caller's byte limit, checked before parsing;
- depth: arrays and objects nested at most `MAX_DEPTH` levels (the top level is 1). Deeper
  documents are refused even when the parser could read them: everything downstream (pydantic,
  json.dumps, DynamoDB's serializer) recurses too, and its limit is not ours to guess;
- text: no unpaired surrogate escape (`"\\ud800"`), which no UTF-8 encoder downstream accepts.

Each family turns `JsonBodyError` into its own error (the API's VALIDATION_ERROR, the webhooks'
INVALID_PAYLOAD, the Slack sink's `invalid_json`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

MAX_DEPTH: Final = 64

_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")


class JsonBodyError(ValueError):
    """The body is not JSON this service reads; `problem` says why, in a sentence fragment."""

    def __init__(self, problem: str, *, too_large: bool = False) -> None:
        super().__init__(problem)
        self.problem = problem
        self.too_large = too_large


def read_json(
    raw: bytes | bytearray | str,
    *,
    max_bytes: int | None = None,
    max_depth: int = MAX_DEPTH,
    nan_as_null: bool = False,
) -> Any:
    """The parsed document, or JsonBodyError. `max_bytes` None: the caller bounded the size
    already. `nan_as_null`: read NaN/Infinity as null (CloudWatch writes them), else refuse them."""
    if max_bytes is not None and len(raw) > max_bytes:
        raise JsonBodyError(f"the body is larger than {_size(max_bytes)}", too_large=True)
    if isinstance(raw, bytes | bytearray):
        try:
            text = bytes(raw).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise JsonBodyError("the body is not UTF-8 text") from None
    else:
        text = raw.removeprefix("\ufeff")
    try:
        document = json.loads(text, parse_constant=_null_constant if nan_as_null else _reject_constant)
    except RecursionError:
        raise JsonBodyError(f"arrays and objects nest deeper than {max_depth} levels") from None
    except ValueError as exc:
        raise JsonBodyError(_first_line(exc)) from None
    _check_shape(document, max_depth)
    return document


def _check_shape(document: Any, max_depth: int) -> None:
    """Depth and surrogates, without recursion (the document may be as deep as the parser allows)."""
    pending: list[tuple[Any, int]] = [(document, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise JsonBodyError("a string holds an unpaired surrogate escape (\\ud800-\\udfff)")
            continue
        if not isinstance(value, dict | list):
            continue
        if depth > max_depth:
            raise JsonBodyError(f"arrays and objects nest deeper than {max_depth} levels")
        if isinstance(value, dict):
            pending.extend((key, depth) for key in value)
            pending.extend((item, depth + 1) for item in value.values())
        else:
            pending.extend((item, depth + 1) for item in value)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _null_constant(name: str) -> Any:
    return None


def _first_line(exc: Exception) -> str:
    return str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__


def _size(limit: int) -> str:
    if limit % (1024 * 1024) == 0:
        return f"{limit // (1024 * 1024)} MiB"
    if limit % 1024 == 0:
        return f"{limit // 1024} KiB"
    return f"{limit} bytes"
