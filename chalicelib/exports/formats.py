"""Rows to text: CSV (RFC 4180, through the `csv` module) and NDJSON. Pure.

A row is a mapping of column name to a value: str, int, float, bool, a list of str, or None.
- CSV: CRLF line ends, fields quoted when they hold a comma, quote or line break, UTF-8. None is an
  empty cell, a boolean `true`/`false`, a list its items joined by `;`. Every page starts with the
  header row, so each page is a whole CSV file on its own (a client joining pages drops the first
  line of every page after the first).
- Formula injection (OWASP "CSV Injection"): a text cell starting with `=`, `+`, `-`, `@`, a tab or
  a carriage return is prefixed with `'`, so a spreadsheet shows it instead of evaluating it.
  Numbers Tocsin computes are never prefixed (none is negative); text from anywhere else (titles,
  names, dedup keys, descriptions) always is when it starts so.
- NDJSON: one JSON object per line (`\n`), keys in column order, values as they are (no prefix:
  a JSON reader does not evaluate formulas).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from chalicelib.exports.columns import Column

ExportFormat = Literal["csv", "ndjson"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("csv", "ndjson")
CSV_MEDIA_TYPE = "text/csv"
NDJSON_MEDIA_TYPE = "application/x-ndjson"
MEDIA_TYPES: dict[ExportFormat, str] = {"csv": CSV_MEDIA_TYPE, "ndjson": NDJSON_MEDIA_TYPE}
FORMAT_OF: dict[str, ExportFormat] = {CSV_MEDIA_TYPE: "csv", NDJSON_MEDIA_TYPE: "ndjson"}
CONTENT_TYPES: dict[ExportFormat, str] = {
    "csv": "text/csv; charset=utf-8; header=present",
    "ndjson": "application/x-ndjson; charset=utf-8",
}
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
LIST_SEPARATOR = ";"

CellValue = str | int | float | bool | list[str] | None
Row = Mapping[str, CellValue]


def safe_text(text: str) -> str:
    """`text` as a spreadsheet shows it and never evaluates it."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_cell(value: CellValue) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, list):
        return safe_text(LIST_SEPARATOR.join(value))
    return safe_text(value)


def render_csv(columns: Sequence[Column], rows: Iterable[Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # the csv module's default dialect is RFC 4180's
    writer.writerow([column.name for column in columns])
    for row in rows:
        writer.writerow([csv_cell(row.get(column.name)) for column in columns])
    return out.getvalue()


def render_ndjson(columns: Sequence[Column], rows: Iterable[Row]) -> str:
    lines = [
        json.dumps({column.name: row.get(column.name) for column in columns}, ensure_ascii=False, separators=(",", ":"))
        for row in rows
    ]
    return "".join(line + "\n" for line in lines)


def render(export_format: ExportFormat, columns: Sequence[Column], rows: Iterable[Row]) -> str:
    return render_csv(columns, rows) if export_format == "csv" else render_ndjson(columns, rows)
