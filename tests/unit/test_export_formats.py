"""CSV cells (RFC 4180 quoting, formula injection), NDJSON lines, column order, the Accept header,
and docs/EXPORTS.md listing every column of every kind, as tables."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from chalicelib.api.negotiation import alternatives, choose
from chalicelib.exports.columns import COLUMNS, EXPORT_KINDS, Column
from chalicelib.exports.formats import FORMAT_OF, csv_cell, render_csv, render_ndjson, safe_text

TWO = (Column("a", "string", ""), Column("b", "integer", ""))


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        (None, ""),
        ("", ""),
        ("plain", "plain"),
        ("=1+2", "'=1+2"),
        ("+1 555", "'+1 555"),
        ("-2", "'-2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a=b", "a=b"),  # only a leading character makes a formula
        (" =x", " =x"),
        ("'=x", "'=x"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (42, "42"),
        (1.5, "1.5"),
        (["a", "b"], "a;b"),
        ([], ""),
        (["=x", "y"], "'=x;y"),
    ],
)
def test_csv_cells(value: object, cell: str) -> None:
    assert csv_cell(value) == cell  # type: ignore[arg-type]


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_every_owasp_start_is_prefixed(start: str) -> None:
    assert safe_text(start + "cmd") == "'" + start + "cmd"


@pytest.mark.parametrize(
    ("rows", "text"),
    [
        ([], "a,b\r\n"),
        ([{"a": "x", "b": 1}], "a,b\r\nx,1\r\n"),
        ([{"b": 2, "a": "y"}], "a,b\r\ny,2\r\n"),  # the columns' order, not the row's
        ([{"a": 'say "hi"', "b": None}], 'a,b\r\n"say ""hi""",\r\n'),
        ([{"a": "one, two", "b": 3}], 'a,b\r\n"one, two",3\r\n'),
        ([{"a": "line\nbreak", "b": 4}], 'a,b\r\n"line\nbreak",4\r\n'),
        ([{"a": "=cmd|'/c calc'!A0", "b": 5}], "a,b\r\n'=cmd|'/c calc'!A0,5\r\n"),
        ([{"a": "é ü 中", "b": 6}], "a,b\r\né ü 中,6\r\n"),
    ],
)
def test_csv_documents(rows: list[dict[str, object]], text: str) -> None:
    rendered = render_csv(TWO, rows)  # type: ignore[arg-type]
    assert rendered == text
    parsed = list(csv.reader(io.StringIO(rendered, newline="")))
    assert parsed[0] == ["a", "b"] and len(parsed) == len(rows) + 1


@pytest.mark.parametrize(
    ("rows", "text"),
    [
        ([], ""),
        ([{"a": "=x", "b": 1}], '{"a":"=x","b":1}\n'),
        ([{"b": None, "a": "é"}], '{"a":"é","b":null}\n'),
        ([{"a": "x"}, {"a": "y", "b": 2}], '{"a":"x","b":null}\n{"a":"y","b":2}\n'),
    ],
)
def test_ndjson_lines(rows: list[dict[str, object]], text: str) -> None:
    rendered = render_ndjson(TWO, rows)  # type: ignore[arg-type]
    assert rendered == text
    assert [list(json.loads(line)) for line in rendered.splitlines()] == [["a", "b"]] * len(rows)


@pytest.mark.parametrize(
    ("accept", "chosen"),
    [
        (None, "csv"),  # without Accept, or naming neither: CSV
        ("", "csv"),
        ("*/*", "csv"),
        ("application/json", "csv"),
        ("text/csv", "csv"),
        ("application/x-ndjson", "ndjson"),
        ("text/csv;q=0.5, application/x-ndjson", "ndjson"),
        ("application/x-ndjson;q=0.2, text/csv;q=0.9", "csv"),
        ("text/csv, application/x-ndjson", "csv"),
        ("application/x-ndjson, text/csv", "csv"),  # a tie: the route's own type (api/negotiation.py)
        ("text/csv;q=0", "csv"),
        ("text/csv;q=0, application/x-ndjson;q=0.1", "ndjson"),
        ("application/*", "ndjson"),
        ("TEXT/CSV; charset=utf-8", "csv"),
        ("text/csv;q=oops", "csv"),
    ],
)
def test_the_accept_header_chooses_the_format(accept: str | None, chosen: str) -> None:
    offered = alternatives("text/csv; charset=utf-8")
    assert offered == ["text/csv", "application/x-ndjson"]  # what the OpenAPI document lists
    assert FORMAT_OF[choose(accept, offered)] == chosen


def test_columns_have_unique_names_types_and_meanings() -> None:
    assert tuple(COLUMNS) == EXPORT_KINDS
    for kind, columns in COLUMNS.items():
        names = [column.name for column in columns]
        assert len(names) == len(set(names)), kind
        assert all(column.meaning.endswith(".") for column in columns), kind


def test_the_first_columns_are_as_documented() -> None:
    assert [c.name for c in COLUMNS["incidents"]][:3] == ["incident_number", "title", "status"]
    assert [c.name for c in COLUMNS["alerts"]][:2] == ["alert_id", "first_received_at"]
    assert [c.name for c in COLUMNS["notifications"]][:3] == ["sent_at", "incident_number", "outcome"]
    assert [c.name for c in COLUMNS["shifts"]][-3:] == ["hours", "off_hours", "weekend_hours"]


def test_docs_list_every_column_in_order_with_its_type() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "EXPORTS.md").read_text()
    for kind, columns in COLUMNS.items():
        section = text.split(f"### {kind}\n", 1)[1].split("\n### ", 1)[0]
        documented = re.findall(r"^\| `([a-z_]+)` \| ([a-z]+) \|", section, flags=re.MULTILINE)
        assert documented == [(column.name, column.type) for column in columns], kind
