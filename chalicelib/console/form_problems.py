"""A request model's problems named by a console form's inputs, and labelled as the form labels them.

The console validates forms through the API's request models, whose field paths are the JSON
body's (`urgency_rule.support_hours.start`, `levels.0.delay_minutes`). A form names its inputs
differently, and a PATCH model's `value | None` fields make pydantic report a problem once per
union branch (`repeat_count.constrained-int`, `repeat_count.none`). This puts each problem on the
input the person typed it in, once.

The page then names each problem as its form labels the field ("Phone number", "High urgency,
step 3"), never by the API's path: a page gives its labels (`Page.labels`), and a path it gives
none for is put in words (`humanized`). Problems shown next to their field are not repeated at the
top of the page (templates/console/layout.html).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from html.parser import HTMLParser
from typing import Any

from chalicelib.errors import AppError, ValidationFailed

# "address: must be ..." or "levels.0.delay_minutes: must be ...": a field's problem in the API's words.
_API_PATH_MESSAGE = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_]+)*: ")
_BASIC_TYPES = frozenset({"str", "int", "bool", "float", "none", "list", "dict"})


def _is_branch(part: str) -> bool:
    """A union branch pydantic put in the path (a type, never a field name)."""
    return part in _BASIC_TYPES or "-" in part or "[" in part or part[:1].isupper()


def field_path(location: str) -> str | None:
    """The body path without union branches; None for the `null` branch (not a problem of its own)."""
    parts = location.split(".")
    if "none" in parts[1:]:
        return None
    return ".".join(part for part in parts if not _is_branch(part)) or location


def on_the_form(error: ValidationFailed, rename: Callable[[str], str]) -> ValidationFailed:
    """`error` with each problem under `rename(path)`, duplicates and the null branch left out."""
    details = error.details if isinstance(error.details, dict) else {}
    fields: list[dict[str, str]] = []
    for problem in details.get("fields", []):
        path = field_path(str(problem.get("field")))
        if path is None:
            continue
        moved = {**problem, "field": rename(path)}
        if moved not in fields:
            fields.append(moved)
    return ValidationFailed(error.message, details={**details, "fields": fields})


Labels = Mapping[str, str] | Callable[[str], str | None]


def humanized(path: str) -> str:
    """A field path a page gave no label for, in words: `hours_zone` -> "Hours zone",
    `levels.0.delay_minutes` -> "Levels 1, delay minutes" (list indexes counted from 1)."""
    text = ""
    for part in path.split("."):
        if part.isdigit():
            text += f" {int(part) + 1}"
        else:
            text += (", " if text else "") + part.replace("_", " ")
    return text[:1].upper() + text[1:]


def label_of(path: str, labels: Labels | None, *, guess: bool = True) -> str | None:
    found = (labels(path) if callable(labels) else labels.get(path)) if labels is not None else None
    return found or (humanized(path) if guess else None)


def labelled(problems: Iterable[Mapping[str, str]], labels: Labels | None) -> list[dict[str, Any]]:
    """Each problem (a copy) with the `label` its form shows for the field, each (label, message) once."""
    found: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for problem in problems:
        problem = {**problem, "message": _plain(str(problem.get("message", "")))}
        field = str(problem.get("field", ""))
        label = label_of(field, labels) or field
        key = (label, str(problem.get("message", "")))
        if key in seen:
            continue
        seen.add(key)
        # `shown`: a form field that shows it sets True; `guessed`: no page label, put in words.
        guessed = label_of(field, labels, guess=False) is None
        found.append({**problem, "label": label, "shown": False, "guessed": guessed})
    return found


def _plain(message: str) -> str:
    """pydantic's "String should match pattern '^[^@...'" says nothing a person can act on."""
    if message.startswith("String should match pattern"):
        return "is not in the expected form"
    return message


def headline(error: AppError, problems: list[dict[str, Any]]) -> str | None:
    """The error's message for the top of the page, or None when it only repeats a field's problem
    in the API's words ("address: must be ...", whatever field the form renamed it to) or is the
    generic "The request is invalid." (the fields then say it, by their labels)."""
    if not problems:
        return error.message
    if error.message == ValidationFailed.default_message:
        return None
    if _API_PATH_MESSAGE.match(error.message):
        return None
    return error.message


class _LabelReader(HTMLParser):
    """The labels of a rendered page's controls, by the control's name: `<label for>`, a label
    wrapping its control, or the legend of the fieldset holding a group of checkboxes or radios."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.names_by_id: dict[str, str] = {}
        self.label_for: dict[str, str] = {}
        self.by_name: dict[str, str] = {}
        self._label: list[str] | None = None
        self._label_target: str | None = None
        self._label_wraps: list[str] = []
        self._legend: list[str] | None = None
        self._fieldsets: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key: value or "" for key, value in attrs}
        if tag == "fieldset":
            self._fieldsets.append({"legend": "", "names": []})
        elif tag == "legend":
            self._legend = []
        elif tag == "label":
            self._label, self._label_target, self._label_wraps = [], values.get("for") or None, []
        elif tag in ("input", "select", "textarea") and values.get("name") and values.get("type") != "hidden":
            name = values["name"]
            if values.get("id"):
                self.names_by_id[values["id"]] = name
            if self._label is not None:
                self._label_wraps.append(name)
            if self._fieldsets and values.get("type") in ("checkbox", "radio"):
                self._fieldsets[-1]["names"].append(name)

    def handle_endtag(self, tag: str) -> None:
        if tag == "legend" and self._legend is not None:
            if self._fieldsets:
                self._fieldsets[-1]["legend"] = " ".join("".join(self._legend).split())
            self._legend = None
        elif tag == "label" and self._label is not None:
            text = " ".join("".join(self._label).split())
            if self._label_target:
                self.label_for.setdefault(self._label_target, text)
            for name in self._label_wraps:
                self.by_name.setdefault(name, text)
            self._label = None
        elif tag == "fieldset" and self._fieldsets:
            group = self._fieldsets.pop()
            for name in group["names"]:
                if group["legend"]:
                    self.by_name[name] = group["legend"]  # a group is named by its legend, not one option

    def handle_data(self, data: str) -> None:
        if self._label is not None:
            self._label.append(data)
        if self._legend is not None:
            self._legend.append(data)

    def labels(self) -> dict[str, str]:
        found = dict(self.by_name)
        for element_id, text in self.label_for.items():
            name = self.names_by_id.get(element_id)
            if name is not None:
                found.setdefault(name, text)
        return found


def form_labels(page_html: str) -> dict[str, str]:
    """Control name -> the words its form labels it with, read from the rendered page."""
    reader = _LabelReader()
    reader.feed(page_html)
    reader.close()
    return reader.labels()


def label_on_page(path: str, labels: Mapping[str, str]) -> str | None:
    """The label of the control a path names: the control itself (`address`), or the list a path
    indexes into (`ip_allowlist.1` -> "IP allowlist, item 2")."""
    if path in labels:
        return labels[path]
    base, _, rest = path.partition(".")
    if base in labels and rest.isdigit():
        return f"{labels[base]}, item {int(rest) + 1}"
    return None
