"""The one JSON body reader: strict JSON, bounded size and depth, never an exception but JsonBodyError."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.json_body import MAX_DEPTH, JsonBodyError, read_json


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"a": [1, {"b": null}]}', {"a": [1, {"b": None}]}),
        ('{"a": "\\u00e9\\ud83d\\ude00"}', {"a": "é😀"}),  # a surrogate pair is one character
        (b"\xef\xbb\xbf{}", {}),  # a UTF-8 BOM is tolerated
        ("null", None),
    ],
)
def test_reads_json(raw: bytes | str, expected: Any) -> None:
    assert read_json(raw) == expected


@pytest.mark.parametrize("depth", [1, MAX_DEPTH])
def test_nesting_up_to_the_limit_is_read(depth: int) -> None:
    assert read_json(nested(depth)) is not None


@pytest.mark.parametrize(
    "raw",
    [nested(MAX_DEPTH + 1), nested(1000), nested(100_000), '{"a":' * 2000 + "1" + "}" * 2000],
)
def test_deeper_nesting_is_refused(raw: str) -> None:
    with pytest.raises(JsonBodyError, match=f"deeper than {MAX_DEPTH} levels"):
        read_json(raw)


def test_object_and_array_levels_count_alike() -> None:
    mixed = '{"a": [' * (MAX_DEPTH // 2) + "1" + "]}" * (MAX_DEPTH // 2)
    assert read_json(mixed) is not None
    with pytest.raises(JsonBodyError):
        read_json("[" + mixed + "]")


@pytest.mark.parametrize("raw", ["NaN", "[Infinity]", '{"a": -Infinity}', "{", "", b"\xff\xfe{}", '"\\udc00"'])
def test_what_is_not_json_text_is_refused(raw: bytes | str) -> None:
    with pytest.raises(JsonBodyError) as caught:
        read_json(raw)
    assert caught.value.problem and not caught.value.too_large


def test_nan_as_null_for_sources_that_write_it() -> None:
    assert read_json('{"a": NaN, "b": Infinity}', nan_as_null=True) == {"a": None, "b": None}


def test_size_is_checked_before_parsing() -> None:
    with pytest.raises(JsonBodyError) as caught:
        read_json(b"[" * 2048, max_bytes=1024)
    assert caught.value.too_large
    assert caught.value.problem == "the body is larger than 1 KiB"
