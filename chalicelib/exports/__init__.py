"""Exports: an organization's incidents, alerts, notifications and on-call shifts over a time
range, as CSV or NDJSON, one page of rows per request (docs/EXPORTS.md)."""
