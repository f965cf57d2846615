"""The postmortem edit form: flat HTML fields <-> the API's PATCH body, and the rendered report.

A browser without script sends flat names: `impact.duration`, `timeline.0.timestamp`,
`action_items.1.owner_email`. They are gathered here into the same JSON shape the API takes and
validated by the API's own `PostmortemPatch`, so the rules (lengths, emails, statuses) are the
API's and a problem names the same field path the form uses (`timeline.0.description`).
Rendering the `*_html` twins is the domain's (`postmortem.rules.rendered_html`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from chalicelib.postmortem import rules
from chalicelib.postmortem.models import TEXT_FIELDS, PostmortemPatch
from chalicelib.postmortem.tables import PostmortemRecord

# Empty rows offered under the saved ones: without script, a form cannot grow rows on demand.
BLANK_ROWS = 2
IMPACT_KEYS = ("duration", "users_affected", "services_affected", "revenue_impact")
TIMELINE_KEYS = ("timestamp", "description")
ACTION_ITEM_KEYS = ("text", "owner_email", "due_date", "status")
RESPONSE_KEYS = ("time_to_acknowledge", "time_to_identify", "time_to_resolve")
TEXT_LABELS: dict[str, str] = {
    "executive_summary": "Executive summary",
    "summary": "Summary",
    "root_cause": "Root cause",
    "contributing_factors": "Contributing factors",
    "detection_path": "Detection path",
    "resolution": "Resolution",
    "monitoring_gaps": "Monitoring gaps",
    "five_whys": "Five whys",
    "prevented_recurrence": "Preventing recurrence",
}
# The report's reading order: (field, heading); structured fields show their rendered HTML.
REPORT_ORDER: tuple[tuple[str, str], ...] = (
    ("executive_summary", "Executive summary"),
    ("summary", "Summary"),
    ("impact", "Impact"),
    ("timeline", "Timeline"),
    ("root_cause", "Root cause"),
    ("contributing_factors", "Contributing factors"),
    ("detection_path", "Detection path"),
    ("resolution", "Resolution"),
    ("monitoring_gaps", "Monitoring gaps"),
    ("five_whys", "Five whys"),
    ("action_items", "Action items"),
    ("prevented_recurrence", "Preventing recurrence"),
    ("response_timeline", "Response timeline"),
)
_ROW_FIELD = re.compile(r"^(timeline|action_items)\.(\d{1,4})\.([a-z_]+)$")


@dataclass
class FormState:
    """What the edit form shows: strings only, as the person typed or as stored."""

    level: str = "standard"
    version: str = ""
    text: dict[str, str] = field(default_factory=dict)
    impact: dict[str, str] = field(default_factory=dict)
    timeline: list[dict[str, str]] = field(default_factory=list)
    action_items: list[dict[str, str]] = field(default_factory=list)
    response_timeline: dict[str, str] = field(default_factory=dict)
    # Structured fields an import stored as HTML: left as they are unless the form fills them in.
    legacy: tuple[str, ...] = ()

    def timeline_rows(self) -> list[dict[str, str]]:
        return self.timeline + [dict.fromkeys(TIMELINE_KEYS, "") for _ in range(BLANK_ROWS)]

    def action_item_rows(self) -> list[dict[str, str]]:
        blank = {**dict.fromkeys(ACTION_ITEM_KEYS, ""), "status": "pending"}
        return self.action_items + [dict(blank) for _ in range(BLANK_ROWS)]


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def state_of(record: PostmortemRecord) -> FormState:
    """The form filled from a stored postmortem."""
    impact = record.impact if isinstance(record.impact, dict) else {}
    services = impact.get("services_affected") or []
    response = record.response_timeline if isinstance(record.response_timeline, dict) else {}
    timeline = record.timeline if isinstance(record.timeline, list) else []
    action_items = record.action_items if isinstance(record.action_items, list) else []
    return FormState(
        level=record.level,
        version=str(int(record.version or 0)),
        text={name: _text(getattr(record, name)) for name in TEXT_FIELDS},
        impact={**{key: _text(impact.get(key)) for key in IMPACT_KEYS}, "services_affected": "\n".join(services)},
        timeline=[{key: _text(event.get(key)) for key in TIMELINE_KEYS} for event in timeline],
        action_items=[{key: _text(item.get(key)) for key in ACTION_ITEM_KEYS} for item in action_items],
        response_timeline={key: _text(response.get(key)) for key in RESPONSE_KEYS},
        legacy=tuple(name for name in rules.STRUCTURED_FIELDS if isinstance(getattr(record, name), str)),
    )


def state_from_form(form: Mapping[str, list[str]], legacy: tuple[str, ...] = ()) -> FormState:
    """The form as the person sent it (to show it again after an error or with a preview)."""

    def one(name: str) -> str:
        values = form.get(name)
        return values[0].strip() if values else ""

    rows: dict[str, dict[int, dict[str, str]]] = {"timeline": {}, "action_items": {}}
    for name in form:
        match = _ROW_FIELD.match(name)
        if match:
            rows[match[1]].setdefault(int(match[2]), {})[match[3]] = one(name)
    timeline = [
        {key: row.get(key, "") for key in TIMELINE_KEYS}
        for _, row in sorted(rows["timeline"].items())
        if any(row.values())
    ]
    action_items = [
        {**{key: row.get(key, "") for key in ACTION_ITEM_KEYS}, "status": row.get("status") or "pending"}
        for _, row in sorted(rows["action_items"].items())
        if any(value for key, value in row.items() if key != "status")
    ]
    return FormState(
        level=one("level"),
        version=one("version"),
        text={name: one(name) for name in TEXT_FIELDS},
        impact={key: one(f"impact.{key}") for key in IMPACT_KEYS},
        timeline=timeline,
        action_items=action_items,
        response_timeline={key: one(f"response_timeline.{key}") for key in RESPONSE_KEYS},
        legacy=legacy,
    )


def _or_none(value: str) -> str | None:
    return value or None


def patch_body(state: FormState) -> dict[str, Any]:
    """The API's PATCH body for everything the form holds (blank = null, as the API clears)."""
    services = [line.strip() for line in state.impact.get("services_affected", "").splitlines() if line.strip()]
    impact: dict[str, Any] = {key: _or_none(state.impact.get(key, "")) for key in IMPACT_KEYS}
    impact["services_affected"] = services or None
    response = {key: _or_none(state.response_timeline.get(key, "")) for key in RESPONSE_KEYS}
    action_items = [
        {**{key: _or_none(item[key]) for key in ACTION_ITEM_KEYS}, "status": item["status"]}
        for item in state.action_items
    ]
    body: dict[str, Any] = {
        "level": state.level,
        **{name: _or_none(state.text.get(name, "")) for name in TEXT_FIELDS},
        "impact": impact if any(value is not None for value in impact.values()) else None,
        "timeline": [dict(event) for event in state.timeline] or None,
        "action_items": action_items or None,
        "response_timeline": response if any(value is not None for value in response.values()) else None,
    }
    if state.version:
        body["version"] = state.version
    return body


def changes_against(record: PostmortemRecord, patch: PostmortemPatch) -> dict[str, Any]:
    """Only what differs from the stored postmortem: saving an untouched form writes nothing, and a
    legacy HTML field the form left blank is kept rather than cleared."""
    changes: dict[str, Any] = {}
    for name, value in patch.changes_to_apply().items():
        stored = getattr(record, name)
        if value is None and isinstance(stored, str) and name in rules.STRUCTURED_FIELDS:
            continue
        if _blank_as_none(value) != _blank_as_none(stored):
            changes[name] = value
    return changes


def _empty_structure(value: Any) -> bool:
    return value == [] or (isinstance(value, dict) and all(item is None for item in value.values()))


def _blank_as_none(value: Any) -> Any:
    """An object whose every field is null reads like null (the form cannot tell them apart)."""
    if isinstance(value, dict) and all(item is None for item in value.values()):
        return None
    return value


@dataclass(frozen=True)
class ReportPart:
    heading: str
    text: str | None = None  # plain text, shown with its line breaks
    html: str | None = None  # rendered here by the domain's renderer (every value escaped), never stored HTML


def report_of(values: Mapping[str, Any]) -> list[ReportPart]:
    """The readable postmortem from field values and `*_html` values; empty parts left out.

    A structured field is rendered again by the domain (`rules.rendered_html`). HTML that came in
    as HTML (an imported postmortem's `*_html`, a legacy string) is shown as its text: it is the
    old tool's markup, and a `<meta http-equiv=refresh>` or a form in it would pass the CSP."""
    parts = []
    for name, heading in REPORT_ORDER:
        if name in rules.STRUCTURED_FIELDS:
            value = values.get(name)
            # An object of nulls renders an empty list: no heading over nothing.
            if _empty_structure(value):
                continue
            rendered = rules.rendered_html(name, value)
            if rendered:
                parts.append(ReportPart(heading, html=rendered))
                continue
            legacy = values.get(f"{name}_html") or (value if isinstance(value, str) else None)
            if legacy and (text := html_as_text(str(legacy))):
                parts.append(ReportPart(heading, text=text))
        elif values.get(name):
            parts.append(ReportPart(heading, text=str(values[name])))
    return parts


class _TextOf(HTMLParser):
    """The text a browser would show of a fragment, with a line break for each block; nothing of
    `<script>`, `<style>` or `<head>` content."""

    BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote"})
    HIDDEN = frozenset({"script", "style", "head", "title", "template", "noscript"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag in self.BLOCKS:
            self.chunks.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.BLOCKS:
            self.chunks.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.chunks.append(data)


def html_as_text(fragment: str) -> str:
    """Imported HTML as plain text: tags dropped, entities read, blank lines collapsed."""
    parser = _TextOf()
    parser.feed(fragment)
    parser.close()
    lines = [" ".join(line.split()) for line in "".join(parser.chunks).splitlines()]
    return "\n".join(line for line in lines if line)


def stored_report(record: PostmortemRecord) -> list[ReportPart]:
    names = [name for name, _ in REPORT_ORDER] + [f"{name}_html" for name in rules.STRUCTURED_FIELDS]
    return report_of({name: getattr(record, name) for name in names})


def preview_report(record: PostmortemRecord | None, patch: PostmortemPatch) -> list[ReportPart]:
    """The report as it would read after saving: the domain renders each structured field."""
    values: dict[str, Any] = {}
    if record is not None:
        values = {name: getattr(record, name) for name, _ in REPORT_ORDER}
        values.update({f"{name}_html": getattr(record, f"{name}_html") for name in rules.STRUCTURED_FIELDS})
    for name, value in (changes_against(record, patch) if record is not None else patch.changes_to_apply()).items():
        values[name] = value
        if name in rules.STRUCTURED_FIELDS:
            values[f"{name}_html"] = rules.rendered_html(name, value)
    return report_of(values)
